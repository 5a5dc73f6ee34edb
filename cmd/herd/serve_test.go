package main

import (
	"context"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server"
	"github.com/herd-dev/herd/shared"
	"github.com/herd-dev/herd/web"
)

// startServer runs the composed server, with the web app served from
// static, on a loopback port with the demo workspace.
func startServer(tb testing.TB, static fs.FS, token string) *server.Server {
	tb.Helper()
	var srv *server.Server
	h, err := newUI(static, func(ctx context.Context) (shared.BootResponse, error) {
		return srv.BootSnapshot(ctx)
	})
	require.NoError(tb, err)
	srv, err = server.New(server.Config{Addr: "127.0.0.1:0", DataDir: tb.TempDir(), Demo: true, Token: token},
		server.Options{Version: "test", UI: h})
	require.NoError(tb, err)
	require.NoError(tb, srv.Start(context.Background()))
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(tb, srv.Shutdown(ctx))
	})
	return srv
}

func getPage(tb testing.TB, url string, header http.Header) (int, string) {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(tb, err)
	req.Header = header
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	require.NoError(tb, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(tb, err)
	return resp.StatusCode, string(body)
}

// The server renders the first screen with its task rows and the snapshot
// the browser starts from, escaping whatever a task title holds.
func TestPageArrivesWithTaskRows(t *testing.T) {
	srv := startServer(t, web.Static, "")
	boot, err := srv.BootSnapshot(t.Context())
	require.NoError(t, err)
	hostile := `"><script>alert(1)</script>`
	c := MustDialTest(t, srv)
	c.create(boot.WorkspaceID, hostile)

	status, page := getPage(t, "http://"+srv.Addr()+"/", nil)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, server.DemoTaskCount+1, strings.Count(page, `class="task-row`), "every task is rendered as a row")
	require.Contains(t, page, `id="herd-boot"`)
	require.Contains(t, page, "Fix the flaky login test")
	require.NotContains(t, page, "<script>alert(1)</script>", "titles are escaped")
	require.Contains(t, page, "&lt;script&gt;alert(1)&lt;/script&gt;")
}

// With a token, a page is never rendered for a request without it,
// whatever the request accepts; the app's static files stay public.
func TestPagesRequireTheToken(t *testing.T) {
	srv := startServer(t, web.Static, "s3cret-s3cret-s3cret")
	base := "http://" + srv.Addr()
	for _, accept := range []string{"", "text/html", "*/*"} {
		status, page := getPage(t, base+"/", http.Header{"Accept": {accept}})
		require.Equal(t, http.StatusSeeOther, status, "Accept %q", accept)
		require.NotContains(t, page, "task-row")
	}
	status, _ := getPage(t, base+"/web/app.css", nil)
	require.Equal(t, http.StatusOK, status)
	status, _ = getPage(t, base+"/manifest.webmanifest", nil)
	require.Equal(t, http.StatusOK, status)

	status, page := getPage(t, base+"/", http.Header{"Cookie": {"herd_token=s3cret-s3cret-s3cret"}})
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, page, `class="task-row`)
}
