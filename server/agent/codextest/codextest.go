// Package codextest runs the real Codex, through herd's pinned ACP adapter
// (installed by `make adapters` into server/agent/adapters), against a
// scripted model endpoint (package openaitest), so tests drive the real
// agent end to end with no network and no API key.
//
// Codex is pointed at the endpoint by a custom model provider in the
// config.toml of a scratch CODEX_HOME. A custom provider needs no OpenAI
// login, so the adapter opens sessions without an ACP authenticate call.
// (The OPENAI_BASE_URL variable is not read by this Codex version, and
// wire_api "chat" is no longer supported: Codex speaks only the Responses
// API.)
//
// Tests that need it call Require first: without node or the installed
// adapter they are skipped with the reason, except on CI (CI=true), where
// they fail instead.
package codextest

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/agent/adaptertest"
)

// Model is the model name the scratch configuration selects; the endpoint
// sees it in every request.
const Model = "gpt-5.5"

// APIKey is the key Codex sends to the endpoint, as "Bearer " + APIKey.
const APIKey = "sk-scripted-endpoint"

// keyEnv is the variable the custom provider reads its key from.
const keyEnv = "HERD_SCRIPTED_OPENAI_KEY"

// Require skips the test, saying why, when node or the installed Codex
// adapter is missing; on CI (CI=true) it fails instead.
func Require(tb testing.TB) {
	tb.Helper()
	adaptertest.Require(tb, "Codex", agent.CodexAdapter)
}

// Profile is the built-in Codex profile run from the installed adapter,
// talking to the Responses API endpoint at baseURL (openaitest.Server.URL,
// ending in /v1), with a scratch home and CODEX_HOME of its own so no
// person's configuration or login is read.
func Profile(tb testing.TB, baseURL string) agent.Profile {
	tb.Helper()
	Require(tb)
	home := adaptertest.Home(tb, filepath.Join(".codex", "config.toml"), []byte(Config(baseURL)))
	p := agent.CodexAdapter.Profile("codex", "Codex", "codex", adaptertest.Adapters())
	p.Env = Env(home, filepath.Join(home, ".codex"))
	return p
}

// Config is a Codex config.toml that sends every model request to the
// Responses API at baseURL through a custom provider, and turns off what
// would reach the network besides it.
func Config(baseURL string) string {
	return fmt.Sprintf(`model = %q
model_provider = "scripted"
check_for_update_on_startup = false

[model_providers.scripted]
name = "Scripted endpoint"
base_url = %q
wire_api = "responses"
env_key = %q

[analytics]
enabled = false
`, Model, baseURL, keyEnv)
}

// Env is the environment that runs Codex with home as its home directory
// and codexHome (holding Config's config.toml) as CODEX_HOME.
func Env(home, codexHome string) map[string]string {
	return map[string]string{
		"HOME":       home,
		"CODEX_HOME": codexHome,
		keyEnv:       APIKey,
		// Hides the ChatGPT browser login, which cannot work here.
		"NO_BROWSER": "1",
	}
}
