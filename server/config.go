package server

import (
	"fmt"
	"net"
	"strings"
	"time"
)

// Config is everything `herd serve` can be told. cmd/herd fills it from
// flags and their HERD_* environment mirrors; Validate names the flag at
// fault.
type Config struct {
	// Addr is the listen address (--addr, HERD_ADDR).
	Addr string
	// DataDir holds the embedded SQLite database and other state
	// (--data-dir, HERD_DATA_DIR).
	DataDir string
	// DatabaseURL selects PostgreSQL ("postgres://…") or a SQLite file;
	// empty means SQLite under DataDir (--database-url, HERD_DATABASE_URL).
	DatabaseURL string
	// Token, when set, is required by /ws, /api, the web app's pages and
	// /metrics (--token, HERD_TOKEN); at least MinTokenLength bytes.
	Token string
	// MetricsPublic serves /metrics without the token, for a scraper that
	// cannot send one (--metrics-public, HERD_METRICS_PUBLIC).
	MetricsPublic bool
	// AllowedOrigins are extra browser origins allowed to open /ws, as host
	// patterns such as "app.example.com" (--allowed-origin, HERD_ALLOWED_ORIGINS).
	AllowedOrigins []string
	// NoUI serves only the API (--no-ui, HERD_NO_UI).
	NoUI bool
	// Demo seeds a demo workspace when the database has none (--demo, HERD_DEMO).
	Demo bool
	// Adapters is an npm prefix the built-in agents' adapters are installed
	// under, such as a checkout's server/agent/adapters after `make
	// adapters` (--adapters, HERD_ADAPTERS); empty looks on PATH, then
	// falls back to npx (see agent.Adapter.Profile).
	Adapters string
	// AgentsFile names a JSON file of extra agent profiles
	// (--agents-file, HERD_AGENTS_FILE).
	AgentsFile string
	// ShutdownTimeout bounds graceful shutdown (--shutdown-timeout).
	ShutdownTimeout time.Duration
	// AgentNice is the niceness agents run at, 0 to 19 (--agent-nice,
	// HERD_AGENT_NICE): their builds and tests yield the CPU to the
	// server, so one browser's replies stay fast however busy the agents.
	AgentNice int
	// GitSlowInterval is the git observation cadence of a task with a
	// running session (--git-slow-interval, HERD_GIT_SLOW_INTERVAL); zero
	// means 30 s.
	GitSlowInterval time.Duration
	// GitFastInterval is the cadence of a focused session's repositories
	// (--git-fast-interval, HERD_GIT_FAST_INTERVAL); zero means 2 s.
	GitFastInterval time.Duration
	// GitWorkers bounds the git observations running at once
	// (--git-workers, HERD_GIT_WORKERS); zero means 4.
	GitWorkers int
	// GitHubWebhookSecret verifies GitHub webhook deliveries to
	// POST /api/v1/github/webhook; empty disables the endpoint
	// (--github-webhook-secret, HERD_GITHUB_WEBHOOK_SECRET).
	GitHubWebhookSecret string
	// GitHubToken turns on polling GitHub's REST API for the pull requests
	// of tasks, for servers GitHub cannot reach (--github-token,
	// HERD_GITHUB_TOKEN); empty leaves polling off.
	GitHubToken string
	// GitHubAPIURL is the REST API's root (--github-api-url,
	// HERD_GITHUB_API_URL); empty means https://api.github.com.
	GitHubAPIURL string
	// GitHubPollInterval is the pause between polling rounds
	// (--github-poll-interval, HERD_GITHUB_POLL_INTERVAL); zero means 60 s.
	GitHubPollInterval time.Duration
	// PushSubject is the contact push services are given in every push's
	// VAPID claims, a mailto: or https: URL (--push-subject,
	// HERD_PUSH_SUBJECT); empty means mailto:herd@localhost.
	PushSubject string
	// ClaudeBackgroundPromptHandoff turns on the experiment of that name
	// (--feature-claude-background-prompt-handoff,
	// HERD_FEATURES_CLAUDE_BACKGROUND_PROMPT_HANDOFF); read at start only.
	ClaudeBackgroundPromptHandoff bool
}

// MinTokenLength is the shortest token accepted, in bytes: with the
// per-client limit on failed attempts, guessing 16 random bytes is out of
// reach.
const MinTokenLength = 16

// FeatureClaudeBackgroundPromptHandoff names the experiment in boot
// responses' server features.
const FeatureClaudeBackgroundPromptHandoff = "claude_background_prompt_handoff"

// Validate checks the configuration, refusing to expose the server beyond
// loopback without a token.
func (c Config) Validate() error {
	host, port, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return fmt.Errorf("--addr %q is not host:port: %w", c.Addr, err)
	}
	if port == "" {
		return fmt.Errorf("--addr %q has no port", c.Addr)
	}
	if !isLoopback(host) && c.Token == "" {
		return fmt.Errorf("--addr %q is reachable beyond this machine: set --token (HERD_TOKEN) to require a token, or bind 127.0.0.1", c.Addr)
	}
	if err := validToken(c.Token); err != nil {
		return err
	}
	if c.DatabaseURL == "" && c.DataDir == "" {
		return fmt.Errorf("--data-dir is required when --database-url is not set")
	}
	if c.ShutdownTimeout < 0 {
		return fmt.Errorf("--shutdown-timeout must not be negative")
	}
	if c.AgentNice < 0 || c.AgentNice > 19 {
		return fmt.Errorf("--agent-nice %d: want 0 (as the server) to 19 (lowest priority)", c.AgentNice)
	}
	if c.GitHubPollInterval < 0 {
		return fmt.Errorf("--github-poll-interval must not be negative")
	}
	if c.GitSlowInterval < 0 || c.GitFastInterval < 0 || c.GitWorkers < 0 {
		return fmt.Errorf("--git-slow-interval, --git-fast-interval and --git-workers must not be negative")
	}
	for _, o := range c.AllowedOrigins {
		if strings.TrimSpace(o) == "" {
			return fmt.Errorf("--allowed-origin must not be empty")
		}
	}
	if c.PushSubject != "" && !strings.HasPrefix(c.PushSubject, "mailto:") && !strings.HasPrefix(c.PushSubject, "https://") {
		return fmt.Errorf("--push-subject %q: want a mailto: or https:// URL, which push services may use to reach you", c.PushSubject)
	}
	return nil
}

// validToken refuses a token that is short enough to guess or that cannot
// travel unchanged in an Authorization header and a cookie (Go drops
// quotes, semicolons and backslashes from cookie values, so a browser
// would log in and then be refused). The messages never quote the token.
func validToken(token string) error {
	const advice = "make one with `openssl rand -base64 24`"
	if token == "" {
		return nil
	}
	if len(token) < MinTokenLength {
		return fmt.Errorf("--token (HERD_TOKEN) is shorter than %d bytes: %s", MinTokenLength, advice)
	}
	for i := 0; i < len(token); i++ {
		if b := token[i]; b <= ' ' || b >= 0x7f || b == '"' || b == ';' || b == '\\' {
			return fmt.Errorf("--token (HERD_TOKEN) may hold only printable ASCII without spaces, quotes, semicolons or backslashes, so that it fits a header and a cookie: %s", advice)
		}
	}
	return nil
}

// isLoopback reports whether a listen host only accepts local connections.
// An empty host listens on every interface.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
