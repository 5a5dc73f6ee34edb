package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server"
)

// authToken is a token of the shortest accepted length.
const authToken = "0123456789abcdef"

// stepClock is a clock that moves only when a test steps it.
type stepClock struct {
	mu  sync.Mutex // guards now
	now time.Time
}

func newStepClock() *stepClock { return &stepClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// startGuarded starts a server with authToken, the given clock and a web
// app that answers every page with "page".
func startGuarded(t *testing.T, clock *stepClock, mutate func(*server.Config)) *server.Server {
	t.Helper()
	return MustStart(t, func(c *server.Config, o *server.Options) {
		c.Token = authToken
		o.Now = clock.Now
		o.UI = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "page") })
		if mutate != nil {
			mutate(c)
		}
	})
}

// peer is an HTTP client whose connections come from one loopback
// address (Linux routes all of 127.0.0.0/8 to the loopback interface), so
// one test can be several clients.
type peer struct {
	ip     string
	client *http.Client
}

func newPeer(t *testing.T, ip string) *peer {
	t.Helper()
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	transport := &http.Transport{DialContext: dialer.DialContext}
	t.Cleanup(transport.CloseIdleConnections)
	return &peer{ip: ip, client: &http.Client{
		Transport:     transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// answer is what a server said to one presented token.
type answer struct {
	status int
	header http.Header
	body   string
}

// code is the error code of a JSON error body, or "".
func (a answer) code() string {
	var e struct{ Code string }
	_ = json.Unmarshal([]byte(a.body), &e)
	return e.Code
}

func (p *peer) do(t *testing.T, req *http.Request) answer {
	t.Helper()
	resp, err := p.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return answer{resp.StatusCode, resp.Header, string(body)}
}

func (p *peer) get(t *testing.T, url string, header http.Header) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header = header
	return p.do(t, req)
}

func (p *peer) post(t *testing.T, url, contentType, body string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", contentType)
	return p.do(t, req)
}

// dial opens /ws with header; a completed upgrade answers 101.
func (p *peer) dial(t *testing.T, srv *server.Server, header http.Header) answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, resp, err := websocket.Dial(ctx, "ws://"+srv.Addr()+"/ws", &websocket.DialOptions{HTTPClient: p.client, HTTPHeader: header})
	if err == nil {
		conn.CloseNow()
		return answer{status: http.StatusSwitchingProtocols}
	}
	require.NotNil(t, resp, "dial: %v", err)
	return answer{status: resp.StatusCode, header: resp.Header}
}

// presentation is one way of presenting a token, with the status a wrong
// and a right token get.
type presentation struct {
	name          string
	present       func(t *testing.T, p *peer, srv *server.Server, token string) answer
	wrong, right  int
	jsonRefusal   bool // a refusal carries a JSON error body
	clearsCookies bool // a wrong token came as a cookie, which is cleared
}

func bearer(token string) http.Header { return http.Header{"Authorization": {"Bearer " + token}} }
func cookie(token string) http.Header { return http.Header{"Cookie": {"herd_token=" + token}} }

func base(srv *server.Server) string { return "http://" + srv.Addr() }

var presentations = []presentation{
	{name: "login with JSON", wrong: http.StatusUnauthorized, right: http.StatusOK, jsonRefusal: true,
		present: func(t *testing.T, p *peer, srv *server.Server, token string) answer {
			return p.post(t, base(srv)+"/api/v1/login", "application/json", fmt.Sprintf(`{"token":%q}`, token))
		}},
	{name: "login with a form", wrong: http.StatusUnauthorized, right: http.StatusSeeOther,
		present: func(t *testing.T, p *peer, srv *server.Server, token string) answer {
			return p.post(t, base(srv)+"/api/v1/login", "application/x-www-form-urlencoded", url.Values{"token": {token}}.Encode())
		}},
	{name: "Bearer on the API", wrong: http.StatusUnauthorized, right: http.StatusOK, jsonRefusal: true,
		present: func(t *testing.T, p *peer, srv *server.Server, token string) answer {
			return p.get(t, base(srv)+"/api/v1/workspaces", bearer(token))
		}},
	{name: "cookie on the API", wrong: http.StatusUnauthorized, right: http.StatusOK, jsonRefusal: true, clearsCookies: true,
		present: func(t *testing.T, p *peer, srv *server.Server, token string) answer {
			return p.get(t, base(srv)+"/api/v1/workspaces", cookie(token))
		}},
	{name: "Bearer on the WebSocket", wrong: http.StatusUnauthorized, right: http.StatusSwitchingProtocols,
		present: func(t *testing.T, p *peer, srv *server.Server, token string) answer {
			return p.dial(t, srv, bearer(token))
		}},
	{name: "cookie on the WebSocket", wrong: http.StatusUnauthorized, right: http.StatusSwitchingProtocols, clearsCookies: true,
		present: func(t *testing.T, p *peer, srv *server.Server, token string) answer {
			return p.dial(t, srv, cookie(token))
		}},
	{name: "cookie on a page", wrong: http.StatusSeeOther, right: http.StatusOK, clearsCookies: true,
		present: func(t *testing.T, p *peer, srv *server.Server, token string) answer {
			return p.get(t, base(srv)+"/tasks", cookie(token))
		}},
	{name: "Bearer on the metrics", wrong: http.StatusUnauthorized, right: http.StatusOK, jsonRefusal: true,
		present: func(t *testing.T, p *peer, srv *server.Server, token string) answer {
			return p.get(t, base(srv)+"/metrics", bearer(token))
		}},
}

// However a token is presented, a client that sent ten wrong ones is
// refused with 429 and Retry-After, the right token included, while the
// right token from another address still works.
func TestTenWrongTokensBlockTheClientNotOthers(t *testing.T) {
	srv := startGuarded(t, newStepClock(), nil)
	for i, pr := range presentations {
		t.Run(pr.name, func(t *testing.T) {
			guesser := newPeer(t, fmt.Sprintf("127.0.1.%d", i+1))
			for try := range 10 {
				a := pr.present(t, guesser, srv, fmt.Sprintf("wrong-token-%04d", try))
				require.Equal(t, pr.wrong, a.status, "wrong try %d: %s", try+1, a.body)
				if pr.clearsCookies {
					requireClearsTokenCookie(t, a.header)
				}
			}
			for _, token := range []string{"wrong-token-9999", authToken} {
				a := pr.present(t, guesser, srv, token)
				require.Equal(t, http.StatusTooManyRequests, a.status, "blocked client presenting %q", token)
				require.Equal(t, "6", a.header.Get("Retry-After"))
				if pr.jsonRefusal {
					require.Equal(t, "rate_limited", a.code(), a.body)
				}
			}
			other := newPeer(t, fmt.Sprintf("127.0.2.%d", i+1))
			require.Equal(t, pr.right, pr.present(t, other, srv, authToken).status, "another address is not blocked")
		})
	}
}

func requireClearsTokenCookie(t *testing.T, h http.Header) {
	t.Helper()
	resp := http.Response{Header: h}
	for _, ck := range resp.Cookies() {
		if ck.Name == "herd_token" {
			require.Empty(t, ck.Value)
			require.Negative(t, ck.MaxAge, "the wrong cookie is deleted")
			return
		}
	}
	t.Fatal("a wrong token cookie is not cleared")
}

// A blocked client gets one more try per six seconds: Retry-After counts
// down on the server's clock, and the right token works once it is over.
// Right tokens spend nothing.
func TestBlockedClientRetriesAfterRetryAfter(t *testing.T) {
	clock := newStepClock()
	srv := startGuarded(t, clock, nil)
	client := newPeer(t, "127.0.3.1")
	api := base(srv) + "/api/v1/workspaces"
	for range 10 {
		require.Equal(t, http.StatusUnauthorized, client.get(t, api, bearer("not-the-token-at-all")).status)
	}
	require.Equal(t, "6", client.get(t, api, bearer(authToken)).header.Get("Retry-After"))
	clock.step(5 * time.Second)
	a := client.get(t, api, bearer(authToken))
	require.Equal(t, http.StatusTooManyRequests, a.status)
	require.Equal(t, "1", a.header.Get("Retry-After"))

	clock.step(time.Second)
	for range 20 {
		require.Equal(t, http.StatusOK, client.get(t, api, bearer(authToken)).status, "right tokens spend no tries")
	}
	require.Equal(t, http.StatusUnauthorized, client.get(t, api, bearer("not-the-token-at-all")).status, "one try came back")
	require.Equal(t, http.StatusTooManyRequests, client.get(t, api, bearer("not-the-token-at-all")).status)
}

// A client that has only ever sent the right token is never blocked, and
// requests without any token spend no tries (a browser's first visit).
func TestRightAndMissingTokensSpendNoTries(t *testing.T) {
	srv := startGuarded(t, newStepClock(), nil)
	client := newPeer(t, "127.0.3.2")
	api := base(srv) + "/api/v1/workspaces"
	for range 30 {
		require.Equal(t, http.StatusOK, client.get(t, api, bearer(authToken)).status)
		require.Equal(t, http.StatusUnauthorized, client.get(t, api, nil).status)
		require.Equal(t, http.StatusSeeOther, client.get(t, base(srv)+"/", nil).status)
	}
	for try := range 10 {
		require.Equal(t, http.StatusUnauthorized, client.get(t, api, bearer("not-the-token-at-all")).status, "wrong try %d", try+1)
	}
}

// The web app's static files are served unchecked, so a browser holding a
// stale cookie does not spend a try on each file of the login page.
func TestStaticFilesSpendNoTries(t *testing.T) {
	srv := startGuarded(t, newStepClock(), nil)
	browser := newPeer(t, "127.0.3.6")
	for range 20 {
		a := browser.get(t, base(srv)+"/web/app.css", cookie("a-stale-token-from-before"))
		require.Equal(t, http.StatusOK, a.status)
		require.Empty(t, a.header.Values("Set-Cookie"))
	}
	for try := range 10 {
		require.Equal(t, http.StatusUnauthorized, browser.get(t, base(srv)+"/api/v1/workspaces", bearer("not-the-token-at-all")).status, "wrong try %d", try+1)
	}
}

// X-Forwarded-For is written by the client, so it does not move a
// guesser's failures to other addresses.
func TestForwardedForDoesNotEscapeTheLimit(t *testing.T) {
	srv := startGuarded(t, newStepClock(), nil)
	client := newPeer(t, "127.0.3.3")
	for try := range 11 {
		h := bearer("not-the-token-at-all")
		h.Set("X-Forwarded-For", fmt.Sprintf("198.51.100.%d", try))
		h.Set("X-Real-IP", fmt.Sprintf("198.51.100.%d", try))
		a := client.get(t, base(srv)+"/api/v1/workspaces", h)
		if try < 10 {
			require.Equal(t, http.StatusUnauthorized, a.status)
		} else {
			require.Equal(t, http.StatusTooManyRequests, a.status)
		}
	}
}

// Blocked attempts and wrong tokens are counted in /metrics.
func TestBlockedAttemptsAreCounted(t *testing.T) {
	srv := startGuarded(t, newStepClock(), nil)
	guesser := newPeer(t, "127.0.3.4")
	for range 13 {
		guesser.get(t, base(srv)+"/api/v1/workspaces", bearer("not-the-token-at-all"))
	}
	a := newPeer(t, "127.0.3.5").get(t, base(srv)+"/metrics", bearer(authToken))
	require.Equal(t, http.StatusOK, a.status)
	require.Contains(t, a.body, "\nherd_auth_failures_total 10\n")
	require.Contains(t, a.body, "\nherd_auth_blocked_total 3\n")
}

// /metrics needs the token when the server has one, unless
// --metrics-public; without a token (loopback only) it is open.
func TestMetricsRequireTheTokenUnlessPublic(t *testing.T) {
	cases := []struct {
		name   string
		token  string
		public bool
		header http.Header
		want   int
	}{
		{"no token configured", "", false, nil, http.StatusOK},
		{"token configured, none sent", authToken, false, nil, http.StatusUnauthorized},
		{"token configured, wrong one sent", authToken, false, bearer("not-the-token-at-all"), http.StatusUnauthorized},
		{"token configured, Bearer sent", authToken, false, bearer(authToken), http.StatusOK},
		{"token configured, cookie sent", authToken, false, cookie(authToken), http.StatusOK},
		{"token configured, metrics public", authToken, true, nil, http.StatusOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := MustStart(t, func(c *server.Config, _ *server.Options) { c.Token, c.MetricsPublic = tc.token, tc.public })
			a := newPeer(t, "127.0.0.1").get(t, base(srv)+"/metrics", tc.header)
			require.Equal(t, tc.want, a.status, a.body)
			if tc.want == http.StatusOK {
				require.Contains(t, a.body, "herd_auth_blocked_total")
			}
		})
	}
}

// A token that is easy to guess, or that a cookie cannot carry, is
// refused at start with advice, without quoting the token.
func TestWeakTokensAreRefusedAtStart(t *testing.T) {
	cases := []struct{ name, token, refusal string }{
		{"one byte", "x", "shorter than 16 bytes"},
		{"fifteen bytes", "0123456789abcde", "shorter than 16 bytes"},
		{"a space", "0123456789 abcdef", "printable ASCII"},
		{"a semicolon", "0123456789;abcdef", "printable ASCII"},
		{"a quote", `0123456789"abcdef`, "printable ASCII"},
		{"not ASCII", "0123456789abcdéf", "printable ASCII"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := server.New(server.Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), Token: tc.token}, server.Options{})
			require.ErrorContains(t, err, tc.refusal)
			for _, part := range []string{"--token", "HERD_TOKEN", "openssl rand -base64 24"} {
				require.ErrorContains(t, err, part)
			}
			require.NotContains(t, err.Error(), tc.token)
		})
	}
	_, err := server.New(server.Config{Addr: "0.0.0.0:0", DataDir: t.TempDir(), Token: authToken}, server.Options{})
	require.NoError(t, err, "16 bytes are enough")
}
