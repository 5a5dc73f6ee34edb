package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server"
	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/agent/adaptertest"
	"github.com/herd-dev/herd/server/agent/codextest"
	"github.com/herd-dev/herd/server/agent/geminiapitest"
	"github.com/herd-dev/herd/server/agent/geminitest"
	"github.com/herd-dev/herd/server/agent/openaitest"
)

// agentsFile writes an agents file (--agents-file) whose one profile, id,
// runs p, and returns its path.
func agentsFile(tb testing.TB, id string, p agent.Profile) string {
	tb.Helper()
	file := filepath.Join(tb.TempDir(), "agents.json")
	agents, err := json.Marshal(map[string]any{"agents": []map[string]any{{
		"id": id, "name": p.Name, "provider": p.Provider, "command": p.Command, "args": p.Args, "env": p.Env,
	}}})
	require.NoError(tb, err)
	require.NoError(tb, os.WriteFile(file, agents, 0o600))
	return file
}

// startWithProfile starts a server whose agents file adds p as the profile
// id, opens a session of it on a new task and returns the session, as the
// session list shows it, once it has reached state: WAITING_FOR_INPUT for
// an agent ready for a prompt, FAILED for one that cannot start.
func startWithProfile(t *testing.T, id string, p agent.Profile, state string) (c *wsClient, session map[string]any) {
	t.Helper()
	file := agentsFile(t, id, p)
	srv := MustStart(t, func(c *server.Config, _ *server.Options) { c.AgentsFile = file })
	c = MustDial(t, srv, nil).patient()
	ws := c.call("workspace.create", map[string]any{"name": "W"})
	task := c.call("task.create", map[string]any{"workspace_id": ws["id"], "title": "Real " + p.Name})
	session = c.call("session.create", map[string]any{"task_id": task["id"], "agent_profile_id": id})
	require.Equal(t, true, c.call("session.subscribe", map[string]any{"session_id": session["id"]})["joined"])
	awaitState(t, c, session["id"], state)
	// The list carries what the state changed (a failed session's error).
	for _, s := range c.call("session.list", map[string]any{"task_id": task["id"]})["sessions"].([]any) {
		session = s.(map[string]any)
	}
	return c, session
}

// One streamed turn of the real Codex and of the real Gemini CLI, each
// against its scripted endpoint, through herd: the answer reaches the
// transcript and the model was asked the prompt.
func TestRealCodexAndGeminiTurnsStreamThroughHerd(t *testing.T) {
	for _, tc := range []struct {
		name string
		// start runs the agent's endpoint answering parts, and returns the
		// profile pointed at it and the user texts its requests carried.
		start func(t *testing.T, parts ...string) (agent.Profile, func() []string)
	}{
		{"Codex", func(t *testing.T, parts ...string) (agent.Profile, func() []string) {
			codextest.Require(t)
			endpoint, err := openaitest.Start(func(req *openaitest.Request) openaitest.Reply {
				if !req.IsMain() {
					return openaitest.Say("Scripted title")
				}
				return openaitest.Say(parts...)
			})
			require.NoError(t, err)
			t.Cleanup(func() { _ = endpoint.Close() })
			return codextest.Profile(t, endpoint.URL), func() (asked []string) {
				for _, r := range endpoint.Requests() {
					asked = append(asked, r.LastUserText())
				}
				return asked
			}
		}},
		{"Gemini", func(t *testing.T, parts ...string) (agent.Profile, func() []string) {
			geminitest.Require(t)
			endpoint, err := geminiapitest.Start(func(req *geminiapitest.Request) geminiapitest.Reply {
				if !req.IsMain() {
					return geminiapitest.Say("Scripted title")
				}
				return geminiapitest.Say(parts...)
			})
			require.NoError(t, err)
			t.Cleanup(func() { _ = endpoint.Close() })
			return geminitest.Profile(t, endpoint.URL), func() (asked []string) {
				for _, r := range endpoint.Requests() {
					asked = append(asked, r.LastUserText())
				}
				return asked
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, asked := tc.start(t, tc.name+" ", "answers ", "through ", "herd.")
			c, session := startWithProfile(t, "real-"+strings.ToLower(tc.name), p, "WAITING_FOR_INPUT")
			prompt := "Hello " + tc.name
			c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "m-1", "content": prompt})
			require.Equal(t, "end_turn", awaitSettled(t, c))
			assert.Contains(t, transcript(t, c, session["id"]), "agent:"+tc.name+" answers through herd.")
			assert.Contains(t, asked(), prompt, "the model was asked the prompt")
		})
	}
}

// A Codex without credentials refuses the session; the session says how to
// authenticate, and so does its profile in the list, in Codex's own words.
func TestCodexThatNeedsAuthenticationShowsItsMethodsOnTheProfile(t *testing.T) {
	c, session := startWithProfile(t, "fresh-codex", adaptertest.Profile(t, adaptertest.Codex), "FAILED")
	assert.Contains(t, session["error_message"], "CODEX_API_KEY")
	var codex map[string]any
	for _, p := range c.call("agent_profile.list", nil)["agent_profiles"].([]any) {
		if p.(map[string]any)["id"] == "fresh-codex" {
			codex = p.(map[string]any)
		}
	}
	require.NotNil(t, codex)
	methods, _ := codex["auth_required"].([]any)
	require.NotEmpty(t, methods, "the profile lists Codex's auth methods: %v", codex)
	var vars []any
	for _, m := range methods {
		v, _ := m.(map[string]any)["vars"].([]any) // none for a browser login
		vars = append(vars, v...)
	}
	assert.Contains(t, vars, "CODEX_API_KEY")
}
