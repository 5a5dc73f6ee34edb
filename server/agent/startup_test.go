package agent_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/agent/adaptertest"
	"github.com/herd-dev/herd/server/agent/anthropictest"
	"github.com/herd-dev/herd/server/agent/claudetest"
)

// quiet is a Handler for agents that are not expected to get as far as a
// turn.
type quiet struct{}

func (quiet) OnEvent(agent.Event) {}
func (quiet) RequestPermission(context.Context, agent.PermissionRequest) (string, error) {
	return "", errors.New("no permission in this test")
}
func (quiet) Clarify(context.Context, agent.ClarificationRequest) (string, error) {
	return "", errors.New("no clarification in this test")
}

// startFails starts p and returns Start's error, failing the test if the
// agent started.
func startFails(t *testing.T, p agent.Profile) error {
	t.Helper()
	e, err := agent.Start(context.Background(), agent.Options{
		Profile: p, Cwd: t.TempDir(), Handler: quiet{}, StartTimeout: 60 * time.Second, KillGrace: time.Second,
	})
	if err == nil {
		e.Close()
		t.Fatalf("%s started", p.Name)
	}
	return err
}

// The real Codex and Gemini CLI adapters, offline and without a key,
// answer initialize and refuse session/new until authenticated. The error
// names the agent's own auth methods and the variables that satisfy them,
// instead of a bare "Authentication required".
func TestAnAgentThatNeedsAuthenticationNamesItsAuthMethods(t *testing.T) {
	for _, tc := range []struct {
		adapter adaptertest.Adapter
		cause   string
		want    []string
	}{
		{adaptertest.Codex, "Authentication required", []string{
			"API Key (Use an API key to authenticate): set CODEX_API_KEY or OPENAI_API_KEY in the profile's env",
			"ChatGPT (Use ChatGPT to authenticate): sign in with the agent's own command line",
		}},
		{adaptertest.Gemini, "Gemini API key is missing or not configured.", []string{
			"Log in with Google (Log in with your Google account): sign in with the agent's own command line",
			"Gemini API key (Use an API key with Gemini Developer API): set GEMINI_API_KEY in the profile's env",
			"AI API Gateway (Use a custom AI API Gateway): set GOOGLE_GEMINI_BASE_URL",
		}},
	} {
		t.Run(tc.adapter.Name, func(t *testing.T) {
			err := startFails(t, adaptertest.Profile(t, tc.adapter))
			var auth *agent.AuthRequiredError
			if !errors.As(err, &auth) {
				t.Fatalf("err = %v, want an AuthRequiredError", err)
			}
			if auth.Cause.Code != -32000 || auth.Cause.Message != tc.cause {
				t.Fatalf("cause = %+v, want -32000 %q", auth.Cause, tc.cause)
			}
			msg := err.Error()
			t.Log(msg)
			for _, w := range append(tc.want, tc.adapter.Name+" needs authentication ("+tc.cause+")", "Then start a new session") {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q\ndoes not say %q", msg, w)
				}
			}
		})
	}
}

// As root, Claude Code refuses to start without IS_SANDBOX=1; the error
// says to set it, and where that is safe.
func TestClaudeAsRootWithoutSandboxSaysToSetIsSandbox(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("Claude Code refuses only root; this test runs as another user")
	}
	srv, err := anthropictest.Start(func(*anthropictest.Request) anthropictest.Reply { return anthropictest.Say("ok") })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	p := claudetest.Profile(t, srv.URL, claudetest.ModeBypass)
	delete(p.Env, "IS_SANDBOX")
	msg := startFails(t, p).Error()
	t.Log(msg)
	for _, w := range []string{"root/sudo privileges", "set IS_SANDBOX=1 in the profile's env, only inside a sandbox or container"} {
		if !strings.Contains(msg, w) {
			t.Errorf("message %q\ndoes not say %q", msg, w)
		}
	}
}

// A profile whose runtime is missing, or whose agent exits before it is
// ready, fails with what to do about it.
func TestStartFailuresSayWhatToDo(t *testing.T) {
	adapter := agent.ClaudeAdapter
	for _, tc := range []struct {
		name    string
		profile agent.Profile
		want    []string
	}{
		{"the launcher is missing", agent.Profile{ID: "x", Name: "X", Command: "herd-no-such-npx", Requires: []string{"herd-no-such-npx", "herd-no-such-node"}, Adapter: &adapter},
			[]string{`"herd-no-such-npx": executable file not found`, "the profile needs herd-no-such-npx and herd-no-such-node on PATH; install Node.js", "npm install -g @agentclientprotocol/claude-agent-acp@"}},
		{"the runtime is missing", agent.Profile{ID: "x", Name: "X", Command: "/bin/sh", Args: []string{"-c", "echo 'env: node: No such file or directory' >&2; exit 127"}, Requires: []string{"/bin/sh", "herd-no-such-node"}, Adapter: &adapter},
			[]string{"exit status 127", "env: node: No such file or directory", "the profile needs herd-no-such-node on PATH; install Node.js"}},
		{"the agent exits at start", agent.Profile{ID: "x", Name: "X", Command: "/bin/sh", Args: []string{"-c", "echo bad flag >&2; exit 2"}},
			[]string{"agent exited: exit status 2; stderr: bad flag", "The agent exited before it was ready: run `/bin/sh -c echo bad flag >&2; exit 2` by hand"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := startFails(t, tc.profile).Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q\ndoes not say %q", msg, w)
				}
			}
		})
	}
}
