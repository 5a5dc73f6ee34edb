package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/herd-dev/herd/app/ui"
	"github.com/herd-dev/herd/server"
	"github.com/herd-dev/herd/server/webui"
	"github.com/herd-dev/herd/shared"
	"github.com/herd-dev/herd/web"
)

// serve runs `herd serve`.
func serve(ctx context.Context, args []string, stderr io.Writer) error {
	cfg, logOpts, err := parseServeFlags(args, stderr)
	if err != nil {
		return err
	}
	log, err := newLogger(stderr, logOpts)
	if err != nil {
		return err
	}
	// The web app renders its first screen from the server it is served by.
	var srv *server.Server
	var uiHandler http.Handler
	if !cfg.NoUI {
		if uiHandler, err = newUI(web.Static, func(ctx context.Context) (shared.BootResponse, error) {
			return srv.BootSnapshot(ctx)
		}); err != nil {
			return err
		}
	}
	srv, err = server.New(cfg, server.Options{Version: version, UI: uiHandler, Logger: log})
	if err != nil {
		return err
	}
	return srv.Run(ctx)
}

// logOptions choose the log format and level.
type logOptions struct {
	level  string
	format string
}

// parseServeFlags reads flags, each defaulting to its HERD_* environment
// variable, and validates the result.
func parseServeFlags(args []string, stderr io.Writer) (server.Config, logOptions, error) {
	fs := flag.NewFlagSet("herd serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg server.Config
	var lo logOptions
	var origins string
	var envErrs []error
	env := func(name, def string) string { return envString(name, def) }
	envBool := func(name string, def bool) bool {
		v, err := envParsed(name, def, strconv.ParseBool)
		envErrs = append(envErrs, err)
		return v
	}
	envInt := func(name string, def int) int {
		v, err := envParsed(name, def, strconv.Atoi)
		envErrs = append(envErrs, err)
		return v
	}
	envDuration := func(name string, def time.Duration) time.Duration {
		v, err := envParsed(name, def, time.ParseDuration)
		envErrs = append(envErrs, err)
		return v
	}
	fs.StringVar(&cfg.Addr, "addr", env("HERD_ADDR", "127.0.0.1:8080"), "listen address `host:port` (HERD_ADDR)")
	fs.StringVar(&cfg.DataDir, "data-dir", env("HERD_DATA_DIR", "./data"), "data `directory` for the embedded SQLite database (HERD_DATA_DIR)")
	fs.StringVar(&cfg.DatabaseURL, "database-url", env("HERD_DATABASE_URL", ""), "PostgreSQL `url` (postgres://…); empty uses SQLite in --data-dir (HERD_DATABASE_URL)")
	fs.StringVar(&cfg.Token, "token", env("HERD_TOKEN", ""), "access `token` required by /ws and /api; mandatory off loopback (HERD_TOKEN)")
	fs.StringVar(&origins, "allowed-origin", env("HERD_ALLOWED_ORIGINS", ""), "comma-separated extra browser `origins` allowed to open /ws (HERD_ALLOWED_ORIGINS)")
	fs.BoolVar(&cfg.NoUI, "no-ui", envBool("HERD_NO_UI", false), "serve only the API, without the web app (HERD_NO_UI)")
	fs.StringVar(&cfg.AgentsFile, "agents-file", env("HERD_AGENTS_FILE", ""), "JSON `file` of extra agent profiles (HERD_AGENTS_FILE)")
	fs.BoolVar(&cfg.Demo, "demo", envBool("HERD_DEMO", true), "seed a demo workspace when the database has none (HERD_DEMO)")
	fs.BoolVar(&cfg.ClaudeBackgroundPromptHandoff, "feature-claude-background-prompt-handoff",
		envBool("HERD_FEATURES_CLAUDE_BACKGROUND_PROMPT_HANDOFF", false),
		"experiment: show Claude sessions working in the background as such; restart to change (HERD_FEATURES_CLAUDE_BACKGROUND_PROMPT_HANDOFF)")
	fs.IntVar(&cfg.AgentNice, "agent-nice", envInt("HERD_AGENT_NICE", 19),
		"`niceness` of agents and what they run (0 to 19): busy agents yield the CPU to the server (HERD_AGENT_NICE)")
	fs.DurationVar(&cfg.GitSlowInterval, "git-slow-interval", envDuration("HERD_GIT_SLOW_INTERVAL", 30*time.Second),
		"git observation `interval` of a task with a running session (HERD_GIT_SLOW_INTERVAL)")
	fs.DurationVar(&cfg.GitFastInterval, "git-fast-interval", envDuration("HERD_GIT_FAST_INTERVAL", 2*time.Second),
		"git observation `interval` of the session a browser shows in front (HERD_GIT_FAST_INTERVAL)")
	fs.IntVar(&cfg.GitWorkers, "git-workers", envInt("HERD_GIT_WORKERS", 4), "git observations running at once, at most (HERD_GIT_WORKERS)")
	fs.StringVar(&cfg.GitHubWebhookSecret, "github-webhook-secret", env("HERD_GITHUB_WEBHOOK_SECRET", ""),
		"`secret` of the GitHub webhook; empty disables POST /api/v1/github/webhook (HERD_GITHUB_WEBHOOK_SECRET)")
	fs.StringVar(&cfg.GitHubToken, "github-token", env("HERD_GITHUB_TOKEN", ""),
		"GitHub `token` for polling pull requests when webhooks cannot reach this server; empty leaves polling off (HERD_GITHUB_TOKEN)")
	fs.StringVar(&cfg.GitHubAPIURL, "github-api-url", env("HERD_GITHUB_API_URL", ""), "GitHub REST API `url` for polling; empty means https://api.github.com (HERD_GITHUB_API_URL)")
	fs.DurationVar(&cfg.GitHubPollInterval, "github-poll-interval", envDuration("HERD_GITHUB_POLL_INTERVAL", time.Minute),
		"pause between GitHub polling rounds (HERD_GITHUB_POLL_INTERVAL)")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", envDuration("HERD_SHUTDOWN_TIMEOUT", 10*time.Second), "graceful shutdown `limit` (HERD_SHUTDOWN_TIMEOUT)")
	fs.StringVar(&lo.level, "log-level", env("HERD_LOG_LEVEL", "info"), "log `level`: debug, info, warn, error (HERD_LOG_LEVEL)")
	fs.StringVar(&lo.format, "log-format", env("HERD_LOG_FORMAT", "text"), "log `format`: text or json (HERD_LOG_FORMAT)")
	if err := fs.Parse(args); err != nil {
		return cfg, lo, err
	}
	if err := errors.Join(envErrs...); err != nil {
		return cfg, lo, err
	}
	if fs.NArg() > 0 {
		return cfg, lo, fmt.Errorf("herd serve takes no arguments, got %q", fs.Args())
	}
	for _, o := range strings.Split(origins, ",") {
		if o = strings.TrimSpace(o); o != "" {
			cfg.AllowedOrigins = append(cfg.AllowedOrigins, o)
		}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, lo, err
	}
	return cfg, lo, nil
}

func newLogger(w io.Writer, o logOptions) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", o.level)
	}
	hopts := &slog.HandlerOptions{Level: level}
	switch o.format {
	case "text":
		return slog.New(slog.NewTextHandler(w, hopts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, hopts)), nil
	default:
		return nil, fmt.Errorf("--log-format %q: want text or json", o.format)
	}
}

// newUI builds the web app handler. Its version is tied to the build and
// to the exact app.wasm embedded, so an installed app updates exactly when
// the app changes.
func newUI(static fs.FS, snapshot ui.SnapshotFunc) (http.Handler, error) {
	return webui.New(webui.Options{
		Version: version + "-" + wasmDigest(static),
		Static:  static,
		Routes:  func() { ui.Routes(snapshot) },
	})
}

// wasmDigest returns a short content hash of the embedded app.wasm, or
// "nowasm" when it has not been built.
func wasmDigest(static fs.FS) string {
	b, err := fs.ReadFile(static, "app.wasm")
	if err != nil {
		return "nowasm"
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

// envString returns the environment variable, or def when it is unset.
func envString(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

// envParsed parses the environment variable, or returns def when it is unset.
func envParsed[T any](name string, def T, parse func(string) (T, error)) (T, error) {
	v, ok := os.LookupEnv(name)
	if !ok {
		return def, nil
	}
	parsed, err := parse(v)
	if err != nil {
		return def, fmt.Errorf("%s=%q: %w", name, v, err)
	}
	return parsed, nil
}
