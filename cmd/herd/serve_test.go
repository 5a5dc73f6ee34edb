package main

import (
	"context"
	"flag"
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
// static, on a loopback port with the demo workspace; mutate adjusts its
// configuration.
func startServer(tb testing.TB, static fs.FS, token string, mutate ...func(*server.Config)) *server.Server {
	tb.Helper()
	var srv *server.Server
	h, err := newUI(static, func(ctx context.Context) (shared.BootResponse, error) {
		return srv.BootSnapshot(ctx)
	})
	require.NoError(tb, err)
	cfg := server.Config{Addr: "127.0.0.1:0", DataDir: tb.TempDir(), Demo: true, Token: token}
	for _, m := range mutate {
		m(&cfg)
	}
	// The loopback push service of the push tests speaks plain HTTP.
	srv, err = server.New(cfg, server.Options{Version: "test", UI: h, PushLoopbackHTTP: true})
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

// `herd serve -h` shows static defaults and names each flag's variable,
// never a value read from the environment.
func TestServeHelpShowsNoEnvironmentValues(t *testing.T) {
	secrets := map[string]string{
		"HERD_TOKEN":                 "env-token-0123456789abcdef",
		"HERD_GITHUB_TOKEN":          "ghp_envGitHubToken0123456789",
		"HERD_GITHUB_WEBHOOK_SECRET": "env-webhook-secret-42",
		"HERD_DATABASE_URL":          "postgres://herd:env-db-password@db.internal/herd",
		"HERD_ADDR":                  "10.9.8.7:4321",
	}
	for name, value := range secrets {
		t.Setenv(name, value)
	}
	t.Setenv("HERD_AGENT_NICE", "3")
	var stdout, stderr strings.Builder
	err := run(t.Context(), []string{"serve", "-h"}, &stdout, &stderr)
	require.ErrorIs(t, err, flag.ErrHelp)
	help := stderr.String()
	for name, value := range secrets {
		require.NotContains(t, help, value, "the value of %s", name)
	}
	require.Contains(t, help, `(default "127.0.0.1:8080")`)
	require.Contains(t, help, "(default 19)")
	require.NotContains(t, help, "(default 3)")

	flags := 0
	for _, line := range strings.Split(help, "\n") {
		if strings.HasPrefix(line, "  -") {
			flags++
		}
	}
	require.Equal(t, flags, strings.Count(help, "(HERD_"), "every flag names its variable:\n%s", help)
	require.Greater(t, flags, 20)
}

// A flag on the command line wins over its variable, which wins over the
// static default.
func TestServeFlagPrecedence(t *testing.T) {
	defaults := server.Config{
		Addr: "127.0.0.1:8080", DataDir: "./data", Demo: true, AgentNice: 19,
		GitSlowInterval: 30 * time.Second, GitFastInterval: 2 * time.Second, GitWorkers: 4,
		GitHubPollInterval: time.Minute, ShutdownTimeout: 10 * time.Second,
	}
	env := map[string]string{
		"HERD_ADDR": "127.0.0.1:9000", "HERD_DEMO": "false", "HERD_AGENT_NICE": "5",
		"HERD_GIT_SLOW_INTERVAL": "1m", "HERD_TOKEN": "env-token-0123456789",
		"HERD_METRICS_PUBLIC": "true", "HERD_ALLOWED_ORIGINS": "a.example, b.example",
		"HERD_DATABASE_URL": "postgres://env@db/herd", "HERD_LOG_LEVEL": "debug",
	}
	fromEnv := defaults
	fromEnv.Addr, fromEnv.Demo, fromEnv.AgentNice, fromEnv.GitSlowInterval = "127.0.0.1:9000", false, 5, time.Minute
	fromEnv.Token, fromEnv.MetricsPublic, fromEnv.AllowedOrigins = "env-token-0123456789", true, []string{"a.example", "b.example"}
	fromEnv.DatabaseURL = "postgres://env@db/herd"

	cases := []struct {
		name     string
		args     []string
		env      map[string]string
		want     func(*server.Config)
		logLevel string
	}{
		{name: "static defaults", logLevel: "info"},
		{name: "environment over defaults", env: env, want: func(c *server.Config) { *c = fromEnv }, logLevel: "debug"},
		{
			name: "flags over environment",
			args: []string{"--addr", "127.0.0.1:9001", "--demo", "--agent-nice", "3", "--git-slow-interval", "5s",
				"--token", "flag-token-0123456789", "--metrics-public=false", "--allowed-origin", "c.example",
				"--database-url", "postgres://flag@db/herd", "--log-level", "warn"},
			env: env,
			want: func(c *server.Config) {
				*c = fromEnv
				c.Addr, c.Demo, c.AgentNice, c.GitSlowInterval = "127.0.0.1:9001", true, 3, 5*time.Second
				c.Token, c.MetricsPublic, c.AllowedOrigins = "flag-token-0123456789", false, []string{"c.example"}
				c.DatabaseURL = "postgres://flag@db/herd"
			},
			logLevel: "warn",
		},
		{
			name:     "a flag given with its default value still wins",
			args:     []string{"--agent-nice", "19", "--addr", "127.0.0.1:8080"},
			env:      map[string]string{"HERD_AGENT_NICE": "5", "HERD_ADDR": "127.0.0.1:9000"},
			logLevel: "info",
		},
		{
			name:     "an empty variable counts as unset",
			env:      map[string]string{"HERD_ADDR": "", "HERD_DEMO": "", "HERD_AGENT_NICE": ""},
			logLevel: "info",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := defaults
			if tc.want != nil {
				tc.want(&want)
			}
			cfg, lo, err := parseServeFlags(tc.args, io.Discard, lookupIn(tc.env))
			require.NoError(t, err)
			require.Equal(t, want, cfg)
			require.Equal(t, logOptions{level: tc.logLevel, format: "text"}, lo)
		})
	}
}

// An environment value that does not parse is reported by its variable
// and flag, never quoted: a secret may have landed in the wrong variable.
func TestServeFlagEnvironmentErrorsDoNotQuoteValues(t *testing.T) {
	env := map[string]string{"HERD_AGENT_NICE": "hunter2-nice", "HERD_NO_UI": "hunter2-bool", "HERD_SHUTDOWN_TIMEOUT": "hunter2-time"}
	_, _, err := parseServeFlags(nil, io.Discard, lookupIn(env))
	require.Error(t, err)
	for _, part := range []string{
		"HERD_AGENT_NICE (as --agent-nice) is not a whole number",
		"HERD_NO_UI (as --no-ui) is not true or false",
		"HERD_SHUTDOWN_TIMEOUT (as --shutdown-timeout) is not a duration",
	} {
		require.ErrorContains(t, err, part)
	}
	require.NotContains(t, err.Error(), "hunter2")
}

// A token shorter than 16 bytes is refused at start, from the flag or the
// variable, with advice and without quoting it.
func TestServeFlagShortTokenRefused(t *testing.T) {
	const short = "tooShort123"
	for name, tc := range map[string]struct {
		args []string
		env  map[string]string
	}{
		"flag":     {args: []string{"--token", short}},
		"variable": {env: map[string]string{"HERD_TOKEN": short}},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := parseServeFlags(tc.args, io.Discard, lookupIn(tc.env))
			require.ErrorContains(t, err, "--token (HERD_TOKEN) is shorter than 16 bytes")
			require.ErrorContains(t, err, "openssl rand -base64 24")
			require.NotContains(t, err.Error(), short)
		})
	}
}

// lookupIn looks variables up in env instead of the process environment.
func lookupIn(env map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	}
}
