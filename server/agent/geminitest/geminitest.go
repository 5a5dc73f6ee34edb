// Package geminitest runs the real Gemini CLI, through herd's pinned
// package (installed by `make adapters` into server/agent/adapters) and its
// `--acp` mode, against a scripted model endpoint (package geminiapitest),
// so tests drive the real agent end to end with no network and no API key.
//
// Gemini CLI is pointed at the endpoint by GOOGLE_GEMINI_BASE_URL. With
// that variable set and no auth method chosen in its settings, session/new
// selects the "gateway" auth method ("Use a custom AI API Gateway") by
// itself, so no ACP authenticate call is needed.
//
// Tests that need it call Require first: without node or the installed
// package they are skipped with the reason, except on CI (CI=true), where
// they fail instead.
package geminitest

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/agent/adaptertest"
)

// Model is the model the environment selects; the endpoint sees it in
// every request's path. Naming one (rather than "auto") spares each prompt
// the model router's side request.
const Model = "gemini-2.5-flash"

// APIKey is the key Gemini CLI sends to the endpoint as x-goog-api-key.
const APIKey = "scripted-endpoint-key"

// Require skips the test, saying why, when node or the installed Gemini
// CLI is missing; on CI (CI=true) it fails instead.
func Require(tb testing.TB) {
	tb.Helper()
	adaptertest.Require(tb, "Gemini CLI", agent.GeminiAdapter)
}

// Profile is the built-in Gemini CLI profile run from the installed
// package, talking to the Gemini API endpoint at baseURL, in a scratch home
// of its own (so no person's settings or credentials are read) whose
// settings turn off usage statistics and update checks.
func Profile(tb testing.TB, baseURL string) agent.Profile {
	tb.Helper()
	Require(tb)
	settings, err := json.Marshal(map[string]any{
		"privacy": map[string]any{"usageStatisticsEnabled": false},
		"general": map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
	})
	if err != nil {
		tb.Fatal(err)
	}
	home := adaptertest.Home(tb, filepath.Join(".gemini", "settings.json"), settings)
	p := agent.GeminiAdapter.Profile("gemini", "Gemini CLI", "gemini", adaptertest.Adapters())
	p.Env = Env(baseURL, home)
	return p
}

// Env is the environment that points Gemini CLI at the model endpoint at
// baseURL, with home as its home directory.
func Env(baseURL, home string) map[string]string {
	return map[string]string{
		"HOME":                   home,
		"GOOGLE_GEMINI_BASE_URL": baseURL,
		"GEMINI_API_KEY":         APIKey,
		"GEMINI_MODEL":           Model,
	}
}
