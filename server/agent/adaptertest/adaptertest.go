// Package adaptertest finds herd's pinned ACP adapters (installed by `make
// adapters` into server/agent/adapters) for the tests that run real agents,
// and runs the Codex and Gemini CLI adapters offline, in a scratch home with
// no credentials, as a new user first meets them: they answer initialize
// and refuse session/new until authenticated.
//
// Require, which Profile and the per-agent packages (claudetest, codextest,
// geminitest) call, skips a test with the reason when node or the adapter
// is missing, and fails it on CI (CI=true).
package adaptertest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/herd-dev/herd/server/agent"
)

// Adapters returns the npm prefix of this checkout that `make adapters`
// installs the pinned adapters under.
func Adapters() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	return filepath.Join(filepath.Dir(file), "..", "adapters")
}

// Require skips the test, saying why, when node or the installed adapter a
// of the agent what (as in "Claude Code") is missing; on CI (CI=true) it
// fails instead, so a CI that lost its adapters cannot pass by skipping.
func Require(tb testing.TB, what string, a agent.Adapter) {
	tb.Helper()
	reason := ""
	if _, err := exec.LookPath("node"); err != nil {
		reason = "node is not on PATH"
	} else if p := a.Profile("", what, "", Adapters()); p.Command == "npx" {
		reason = "the " + what + " adapter is not installed: run `make adapters`"
	}
	if reason == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		tb.Fatalf("real %s tests cannot run on CI: %s", what, reason)
	}
	tb.Skipf("real %s tests skipped: %s", what, reason)
}

// Home returns a scratch home directory for an agent, holding content at
// the path rel inside it (an agent's settings or configuration file, such
// as ".claude/settings.json"), so no person's settings or credentials are
// read.
func Home(tb testing.TB, rel string, content []byte) string {
	tb.Helper()
	home := tb.TempDir()
	file := filepath.Join(home, rel)
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(file, content, 0o644); err != nil {
		tb.Fatal(err)
	}
	return home
}

// Codex and Gemini are the built-in profiles' ids, names and providers.
var (
	Codex  = Adapter{Adapter: agent.CodexAdapter, ID: "codex", Name: "Codex", Provider: "codex"}
	Gemini = Adapter{Adapter: agent.GeminiAdapter, ID: "gemini", Name: "Gemini CLI", Provider: "gemini"}
)

// Adapter is a pinned adapter with the built-in profile that runs it.
type Adapter struct {
	agent.Adapter
	ID, Name, Provider string
}

// unauthenticated are the variables that would authenticate the adapters;
// Profile empties them, so a key in the test's environment cannot leak in.
var unauthenticated = []string{
	"CODEX_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
	"GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_APPLICATION_CREDENTIALS",
}

// Profile returns a's built-in profile run from the installed adapter in
// a scratch home without credentials (see Require for when it skips).
func Profile(tb testing.TB, a Adapter) agent.Profile {
	tb.Helper()
	Require(tb, a.Name, a.Adapter)
	p := a.Profile(a.ID, a.Name, a.Provider, Adapters())
	p.Env = map[string]string{"HOME": tb.TempDir(), "DISABLE_TELEMETRY": "1"}
	for _, k := range unauthenticated {
		p.Env[k] = ""
	}
	return p
}
