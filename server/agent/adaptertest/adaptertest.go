// Package adaptertest runs herd's pinned Codex and Gemini CLI ACP adapters
// (installed by `make adapters` into server/agent/adapters) offline, in a
// scratch home with no credentials, as a new user first meets them: they
// answer initialize and refuse session/new until authenticated.
//
// Like claudetest.Require, Profile skips the test with the reason when
// node or the adapter is missing, and fails it on CI (CI=true).
package adaptertest

import (
	"os"
	"os/exec"
	"testing"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/agent/claudetest"
)

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
// a scratch home without credentials.
func Profile(tb testing.TB, a Adapter) agent.Profile {
	tb.Helper()
	reason := ""
	p := a.Profile(a.ID, a.Name, a.Provider, claudetest.Adapters())
	if _, err := exec.LookPath("node"); err != nil {
		reason = "node is not on PATH"
	} else if p.Command == "npx" {
		reason = "the " + a.Name + " adapter is not installed: run `make adapters`"
	}
	if reason != "" {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("real %s tests cannot run on CI: %s", a.Name, reason)
		}
		tb.Skipf("real %s tests skipped: %s", a.Name, reason)
	}
	home := tb.TempDir()
	p.Env = map[string]string{"HOME": home, "DISABLE_TELEMETRY": "1"}
	for _, k := range unauthenticated {
		p.Env[k] = ""
	}
	return p
}
