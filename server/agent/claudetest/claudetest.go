// Package claudetest runs the real Claude Code, through herd's pinned ACP
// adapter (installed by `make adapters` into server/agent/adapters), against
// a scripted model endpoint (package anthropictest), so tests drive the
// real agent end to end with no network and no API key.
//
// Tests that need it call Require first: without node or the installed
// adapter they are skipped with the reason, except on CI (CI=true), where
// they fail instead.
package claudetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/agent/adaptertest"
)

// Require skips the test, saying why, when node or the installed Claude
// adapter is missing; on CI (CI=true) it fails instead.
func Require(tb testing.TB) {
	tb.Helper()
	adaptertest.Require(tb, "Claude Code", agent.ClaudeAdapter)
}

// Mode is a Claude Code permission mode, the default a session starts in.
type Mode string

// The permission modes the tests use.
const (
	// ModeAsk asks before every edit and command ("default", shown as
	// Manual).
	ModeAsk Mode = "default"
	// ModeBypass runs every tool without asking.
	ModeBypass Mode = "bypassPermissions"
)

// Profile is the built-in Claude Code profile run from the installed
// adapter, talking to the model endpoint at baseURL, in a scratch home of
// its own (so no person's settings or credentials are read) whose settings
// start sessions in mode. As root it sets IS_SANDBOX=1, which Claude Code
// requires there.
func Profile(tb testing.TB, baseURL string, mode Mode) agent.Profile {
	tb.Helper()
	Require(tb)
	settings, err := json.Marshal(map[string]any{"permissions": map[string]any{"defaultMode": string(mode)}})
	if err != nil {
		tb.Fatal(err)
	}
	home := adaptertest.Home(tb, filepath.Join(".claude", "settings.json"), settings)
	p := agent.ClaudeAdapter.Profile("claude-code", "Claude Code", "claude", adaptertest.Adapters())
	p.Env = Env(baseURL, home)
	return p
}

// Env is the environment that points Claude Code at the model endpoint at
// baseURL and keeps it offline, with home as its home directory.
func Env(baseURL, home string) map[string]string {
	env := map[string]string{
		"ANTHROPIC_BASE_URL":  baseURL,
		"ANTHROPIC_API_KEY":   "sk-ant-scripted-endpoint",
		"HOME":                home,
		"CLAUDE_CONFIG_DIR":   filepath.Join(home, ".claude"),
		"DISABLE_TELEMETRY":   "1",
		"DISABLE_AUTOUPDATER": "1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
	}
	if os.Geteuid() == 0 {
		env["IS_SANDBOX"] = "1"
	}
	return env
}
