package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
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
	cfg, logOpts, err := parseServeFlags(args, stderr, os.LookupEnv)
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

// parseServeFlags reads flags and their HERD_* environment mirrors (through
// lookup) into one configuration and validates it.
func parseServeFlags(args []string, stderr io.Writer, lookup func(string) (string, bool)) (server.Config, logOptions, error) {
	fs := newEnvFlags("herd serve")
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: herd serve [flags]

Each flag can also be set by the environment variable in parentheses
after it; a flag on the command line wins over the variable. Prefer the
environment for secrets: a command line is visible to every local user.

`)
		fs.PrintDefaults()
	}
	var cfg server.Config
	var lo logOptions
	var origins string
	fs.stringVar(&cfg.Addr, "addr", "HERD_ADDR", "127.0.0.1:8080", "listen address `host:port`")
	fs.stringVar(&cfg.DataDir, "data-dir", "HERD_DATA_DIR", "./data", "data `directory` for the embedded SQLite database")
	fs.stringVar(&cfg.DatabaseURL, "database-url", "HERD_DATABASE_URL", "", "PostgreSQL `url` (postgres://…); empty uses SQLite in --data-dir")
	fs.stringVar(&cfg.Token, "token", "HERD_TOKEN", "",
		"access `token` (at least 16 bytes) required by /ws, /api, the pages and /metrics; mandatory off loopback")
	fs.boolVar(&cfg.MetricsPublic, "metrics-public", "HERD_METRICS_PUBLIC", false, "serve /metrics without the token")
	fs.stringVar(&origins, "allowed-origin", "HERD_ALLOWED_ORIGINS", "", "comma-separated extra browser `origins` allowed to open /ws")
	fs.boolVar(&cfg.NoUI, "no-ui", "HERD_NO_UI", false, "serve only the API, without the web app")
	fs.stringVar(&cfg.AgentsFile, "agents-file", "HERD_AGENTS_FILE", "", "JSON `file` of extra agent profiles")
	fs.stringVar(&cfg.Adapters, "adapters", "HERD_ADAPTERS", "", "npm prefix `dir` the agent adapters are installed under (`make adapters` installs them in server/agent/adapters)")
	fs.boolVar(&cfg.Demo, "demo", "HERD_DEMO", true, "seed a demo workspace when the database has none")
	fs.boolVar(&cfg.ClaudeBackgroundPromptHandoff, "feature-claude-background-prompt-handoff", "HERD_FEATURES_CLAUDE_BACKGROUND_PROMPT_HANDOFF", false,
		"experiment: show Claude sessions working in the background as such; restart to change")
	fs.intVar(&cfg.AgentNice, "agent-nice", "HERD_AGENT_NICE", 19,
		"`niceness` of agents and what they run (0 to 19): busy agents yield the CPU to the server")
	fs.durationVar(&cfg.GitSlowInterval, "git-slow-interval", "HERD_GIT_SLOW_INTERVAL", 30*time.Second,
		"git observation `interval` of a task with a running session")
	fs.durationVar(&cfg.GitFastInterval, "git-fast-interval", "HERD_GIT_FAST_INTERVAL", 2*time.Second,
		"git observation `interval` of the session a browser shows in front")
	fs.intVar(&cfg.GitWorkers, "git-workers", "HERD_GIT_WORKERS", 4, "git observations running at once, at most")
	fs.stringVar(&cfg.GitHubWebhookSecret, "github-webhook-secret", "HERD_GITHUB_WEBHOOK_SECRET", "",
		"`secret` of the GitHub webhook; empty disables POST /api/v1/github/webhook")
	fs.stringVar(&cfg.GitHubToken, "github-token", "HERD_GITHUB_TOKEN", "",
		"GitHub `token` for polling pull requests when webhooks cannot reach this server; empty leaves polling off")
	fs.stringVar(&cfg.GitHubAPIURL, "github-api-url", "HERD_GITHUB_API_URL", "", "GitHub REST API `url` for polling; empty means https://api.github.com")
	fs.durationVar(&cfg.GitHubPollInterval, "github-poll-interval", "HERD_GITHUB_POLL_INTERVAL", time.Minute, "pause between GitHub polling rounds")
	fs.stringVar(&cfg.PushSubject, "push-subject", "HERD_PUSH_SUBJECT", "",
		"contact (`mailto: or https: URL`) given to push services with every Web Push; empty means mailto:herd@localhost")
	fs.durationVar(&cfg.ShutdownTimeout, "shutdown-timeout", "HERD_SHUTDOWN_TIMEOUT", 10*time.Second, "graceful shutdown `limit`")
	fs.stringVar(&lo.level, "log-level", "HERD_LOG_LEVEL", "info", "log `level`: debug, info, warn, error")
	fs.stringVar(&lo.format, "log-format", "HERD_LOG_FORMAT", "text", "log `format`: text or json")
	if err := fs.parse(args, lookup); err != nil {
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
		return nil, fmt.Errorf("--log-level (HERD_LOG_LEVEL): want debug, info, warn or error")
	}
	hopts := &slog.HandlerOptions{Level: level}
	switch o.format {
	case "text":
		return slog.New(slog.NewTextHandler(w, hopts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, hopts)), nil
	default:
		return nil, fmt.Errorf("--log-format (HERD_LOG_FORMAT): want text or json")
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
