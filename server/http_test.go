package server_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server"
)

func TestReadyzIs503UntilStartupWorkIsDone(t *testing.T) {
	inStartup := make(chan struct{})
	release := make(chan struct{})
	cfg := server.Config{Addr: "127.0.0.1:0", DataDir: t.TempDir()}
	srv, err := server.New(cfg, server.Options{BeforeReady: func(ctx context.Context) error {
		close(inStartup)
		<-release
		return nil
	}})
	require.NoError(t, err)
	started := make(chan error, 1)
	go func() { started <- srv.Start(context.Background()) }()
	<-inStartup

	base := "http://" + srv.Addr()
	require.Equal(t, http.StatusOK, httpGet(t, base+"/healthz", nil).StatusCode)
	require.Equal(t, http.StatusServiceUnavailable, httpGet(t, base+"/readyz", nil).StatusCode)
	require.Equal(t, http.StatusServiceUnavailable, httpGet(t, base+"/api/v1/workspaces", nil).StatusCode)
	_, resp, err := websocket.Dial(t.Context(), "ws://"+srv.Addr()+"/ws", nil)
	require.Error(t, err)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)

	close(release)
	require.NoError(t, <-started)
	require.Equal(t, http.StatusOK, httpGet(t, base+"/readyz", nil).StatusCode)
	require.NoError(t, srv.Shutdown(t.Context()))
}

func TestNonLoopbackAddressRequiresToken(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:8080", ":8080", "192.0.2.1:8080"} {
		_, err := server.New(server.Config{Addr: addr, DataDir: t.TempDir()}, server.Options{})
		require.ErrorContains(t, err, "--token", addr)
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0", "[::1]:0"} {
		_, err := server.New(server.Config{Addr: addr, DataDir: t.TempDir()}, server.Options{})
		require.NoError(t, err, addr)
	}
	_, err := server.New(server.Config{Addr: "0.0.0.0:0", DataDir: t.TempDir(), Token: "s3cret-s3cret-s3cret"}, server.Options{})
	require.NoError(t, err)
}

func TestTokenGuardsWebSocketAndAPI(t *testing.T) {
	srv := MustStart(t, func(c *server.Config, _ *server.Options) { c.Token = "s3cret-s3cret-s3cret" })
	base := "http://" + srv.Addr()

	require.Equal(t, http.StatusUnauthorized, httpGet(t, base+"/api/v1/workspaces", nil).StatusCode)
	require.Equal(t, http.StatusUnauthorized, httpGet(t, base+"/api/v1/workspaces", http.Header{"Authorization": {"Bearer wrong"}}).StatusCode)
	require.Equal(t, http.StatusOK, httpGet(t, base+"/api/v1/workspaces", http.Header{"Authorization": {"Bearer s3cret-s3cret-s3cret"}}).StatusCode)
	require.Equal(t, http.StatusOK, httpGet(t, base+"/healthz", nil).StatusCode, "probes stay open")

	_, resp, err := websocket.Dial(t.Context(), "ws://"+srv.Addr()+"/ws", nil)
	require.Error(t, err)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	MustDial(t, srv, http.Header{"Authorization": {"Bearer s3cret-s3cret-s3cret"}}).call("ping", nil)

	// A browser logs in once and then carries the cookie.
	form := url.Values{"token": {"wrong"}}
	r, err := http.PostForm(base+"/api/v1/login", form)
	require.NoError(t, err)
	r.Body.Close()
	require.Equal(t, http.StatusUnauthorized, r.StatusCode)
	r, err = http.Post(base+"/api/v1/login", "application/json", strings.NewReader(`{"token":"s3cret-s3cret-s3cret"}`))
	require.NoError(t, err)
	r.Body.Close()
	require.Equal(t, http.StatusOK, r.StatusCode)
	var cookie *http.Cookie
	for _, ck := range r.Cookies() {
		if ck.Name == "herd_token" {
			cookie = ck
		}
	}
	require.NotNil(t, cookie)
	require.True(t, cookie.HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, cookie.SameSite)
	require.False(t, cookie.Secure, "plain HTTP cannot carry a Secure cookie")
	MustDial(t, srv, http.Header{"Cookie": {cookie.String()}}).call("ping", nil)
}

func TestCrossOriginUpgradeRefused(t *testing.T) {
	srv := MustStart(t, func(c *server.Config, _ *server.Options) { c.AllowedOrigins = []string{"trusted.example"} })
	dial := func(origin string) (*http.Response, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		conn, resp, err := websocket.Dial(ctx, "ws://"+srv.Addr()+"/ws", &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {origin}}})
		if err == nil {
			conn.CloseNow()
		}
		return resp, err
	}
	resp, err := dial("http://evil.example")
	require.Error(t, err)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	_, err = dial("http://" + srv.Addr())
	require.NoError(t, err, "same origin is allowed")
	_, err = dial("https://trusted.example")
	require.NoError(t, err, "a configured origin is allowed")
}

func TestMetricsCountRequestsAndConnections(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	c.call("ping", nil)
	c.callErr("nope", nil, "unknown_action")
	resp := httpGet(t, "http://"+srv.Addr()+"/metrics", http.Header{"Accept-Encoding": {"gzip"}})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if resp.Header.Get("Content-Encoding") == "" {
		text := string(body)
		require.True(t, containsAll(text,
			`herd_ws_connections 1`,
			`herd_ws_requests_total{action="ping",code="ok"} 1`,
			`herd_ws_requests_total{action="unknown",code="unknown_action"} 1`,
			`go_goroutines`,
		), text)
	}
}

func TestRESTMirrorServesReadActions(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	ws := c.call("workspace.create", map[string]any{"name": "W"})
	task := c.call("task.create", map[string]any{"workspace_id": ws["id"], "title": "rest"})
	base := "http://" + srv.Addr() + "/api/v1"

	body := func(resp *http.Response) string {
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return string(b)
	}
	resp := httpGet(t, base+"/workspaces/"+ws["id"].(string)+"/tasks?limit=5", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body(resp), `"title":"rest"`)
	resp = httpGet(t, base+"/tasks/"+task["id"].(string), nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body(resp), `"status_summary"`)
	resp = httpGet(t, base+"/tasks/missing", nil)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.Contains(t, body(resp), `"code":"not_found"`)
	resp = httpGet(t, base+"/workspaces/"+ws["id"].(string)+"/tasks?limit=zero", nil)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	resp = httpGet(t, base+"/agent-profiles", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body(resp), `"claude-code"`)
}

func TestDemoSeedRunsOnceOnAnEmptyDatabase(t *testing.T) {
	dir := t.TempDir()
	start := func() *server.Server {
		return MustStart(t, func(c *server.Config, _ *server.Options) { c.DataDir, c.Demo = dir, true })
	}
	srv := start()
	boot := MustDial(t, srv, nil).call("boot", map[string]any{})
	require.Len(t, boot["workspaces"], 1)
	require.GreaterOrEqual(t, len(boot["tasks"].([]any)), 5)
	require.NoError(t, srv.Shutdown(t.Context()))

	boot = MustDial(t, start(), nil).call("boot", map[string]any{})
	require.Len(t, boot["workspaces"], 1, "a second start seeds nothing")
}
