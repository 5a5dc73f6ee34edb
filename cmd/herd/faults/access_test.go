package faults

import (
	"context"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The loopback source addresses of the access scenario: the auth limit
// counts wrong tokens per client address.
const (
	regular = "127.0.0.1"
	guesser = "127.0.0.2"
	other   = "127.0.0.3"
)

// access asks a server for things with or without credentials.
type access struct {
	t *testing.T
	h *herd
}

// get makes an HTTP request from the local address and returns the
// response with its body closed.
func (a access) get(local, method, path string, header http.Header, body string) *http.Response {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, method, a.h.url(path), strings.NewReader(body))
	for k, v := range header {
		req.Header[k] = v
	}
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	hc := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s from %s: %v", method, path, local, err)
	}
	resp.Body.Close()
	return resp
}

// upgrade opens /ws from the local address and returns the HTTP status
// of the upgrade (101 when it was accepted).
func (a access) upgrade(local string, header http.Header) int {
	a.t.Helper()
	ctx, cancel := timeout(10 * time.Second)
	defer cancel()
	c, resp, err := dial(ctx, a.h.addr, dialOptions{header: header, local: local})
	if err == nil {
		c.close()
		return http.StatusSwitchingProtocols
	}
	if resp == nil {
		a.t.Fatalf("upgrade from %s: %v", local, err)
	}
	return resp.StatusCode
}

func bearer(token string) http.Header { return http.Header{"Authorization": {"Bearer " + token}} }

// with adds a header to a copy of h.
func with(h http.Header, key, value string) http.Header {
	out := h.Clone()
	if out == nil {
		out = http.Header{}
	}
	out.Set(key, value)
	return out
}

// Auth and origin hold at the edge: without the token, or with a wrong
// one, the WebSocket, the API and /metrics answer 401; ten wrong tokens
// from one address block that address with 429 and Retry-After (its right
// token included) while another address still gets in; a browser upgrade
// from a foreign origin is refused and one from an allowed origin is not;
// and herd refuses to start with a short token or off loopback without
// one.
func TestAuthAndOriginHoldAtTheEdge(t *testing.T) {
	rec := record(t)
	rec.want("access_checks_failed", "0")
	check := func(what string, got, want int) {
		rec.add("access_checks", 1)
		if got != want {
			rec.add("access_checks_failed", 1)
			t.Errorf("%s: got %d, want %d", what, got, want)
		}
	}
	h := startHerd(t, serveOptions{token: suiteToken, args: []string{"--allowed-origin", "app.example.com"}})
	a := access{t: t, h: h}
	right, wrong := bearer(suiteToken), bearer("faults-suite-token-but-wrong")

	check("healthz without a token", a.get(regular, "GET", "/healthz", nil, "").StatusCode, 200)
	check("readyz without a token", a.get(regular, "GET", "/readyz", nil, "").StatusCode, 200)
	check("API without a token", a.get(regular, "GET", "/api/v1/workspaces", nil, "").StatusCode, 401)
	check("API with the token", a.get(regular, "GET", "/api/v1/workspaces", right, "").StatusCode, 200)
	check("metrics without a token", a.get(regular, "GET", "/metrics", nil, "").StatusCode, 401)
	check("metrics with the token", a.get(regular, "GET", "/metrics", right, "").StatusCode, 200)
	check("WebSocket without a token", a.upgrade(regular, nil), 401)
	check("WebSocket with the token", a.upgrade(regular, right), 101)
	check("WebSocket from a foreign origin", a.upgrade(regular, with(right, "Origin", "http://evil.example")), 403)
	check("WebSocket from a look-alike origin", a.upgrade(regular, with(right, "Origin", "https://app.example.com.evil.example")), 403)
	check("WebSocket from the allowed origin", a.upgrade(regular, with(right, "Origin", "https://app.example.com")), 101)
	check("WebSocket from the server's own origin", a.upgrade(regular, with(right, "Origin", "http://"+h.addr)), 101)
	login := a.get(regular, "POST", "/api/v1/login", http.Header{"Content-Type": {"application/json"}}, `{"token":"`+suiteToken+`"}`)
	check("login with the token", login.StatusCode, 200)
	cookie := ""
	for _, c := range login.Cookies() {
		if c.Name == "herd_token" {
			cookie = c.Name + "=" + c.Value
		}
	}
	check("WebSocket with the login cookie", a.upgrade(regular, http.Header{"Cookie": {cookie}}), 101)

	// Ten wrong tokens from the guesser, however presented, are each a 401.
	for i := range 10 {
		var status int
		switch i % 4 {
		case 0:
			status = a.upgrade(guesser, wrong)
		case 1:
			status = a.get(guesser, "GET", "/api/v1/workspaces", wrong, "").StatusCode
		case 2:
			status = a.get(guesser, "POST", "/api/v1/login", http.Header{"Content-Type": {"application/json"}}, `{"token":"nope-nope-nope-nope"}`).StatusCode
		case 3:
			resp := a.get(guesser, "GET", "/metrics", http.Header{"Cookie": {"herd_token=nope-nope-nope-nope"}}, "")
			status = resp.StatusCode
			cleared := 0
			for _, c := range resp.Cookies() {
				if c.Name == "herd_token" && c.MaxAge < 0 {
					cleared = 1
				}
			}
			check("a wrong cookie is cleared", cleared, 1)
		}
		check("wrong token "+strconv.Itoa(i+1), status, 401)
	}
	blocked := a.get(guesser, "GET", "/api/v1/workspaces", wrong, "")
	check("the eleventh wrong token", blocked.StatusCode, 429)
	retry, _ := strconv.Atoi(blocked.Header.Get("Retry-After"))
	check("Retry-After is given in seconds", min(retry, 1), 1)
	check("the right token from the blocked address", a.get(guesser, "GET", "/api/v1/workspaces", right, "").StatusCode, 429)
	check("the WebSocket from the blocked address", a.upgrade(guesser, right), 429)
	check("no token from the blocked address spends nothing", a.get(guesser, "GET", "/api/v1/workspaces", nil, "").StatusCode, 401)
	check("the right token from another address", a.get(other, "GET", "/api/v1/workspaces", right, "").StatusCode, 200)
	check("the WebSocket from another address", a.upgrade(other, right), 101)

	check("herd refuses a 15-byte token", refusesToStart(t, "token", "--addr", "127.0.0.1:0", "--token", "fifteen-bytes-x"), 1)
	check("herd refuses to listen beyond loopback without a token", refusesToStart(t, "token", "--addr", "0.0.0.0:0"), 1)
}

// refusesToStart runs `herd serve` with args and reports 1 when it exits
// with an error naming word, 0 otherwise.
func refusesToStart(t *testing.T, word string, args ...string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, herdBinary, append([]string{"serve", "--data-dir", t.TempDir(), "--demo=false"}, args...)...)
	cmd.Env = herdEnv("")
	out, err := cmd.CombinedOutput()
	if err == nil || ctx.Err() != nil || !strings.Contains(string(out), word) {
		t.Logf("herd serve %s: %v\n%s", strings.Join(args, " "), err, out)
		return 0
	}
	return 1
}
