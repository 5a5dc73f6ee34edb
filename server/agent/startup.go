package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	acp "github.com/coder/acp-go-sdk"

	"github.com/herd-dev/herd/shared"
)

// codeAuthRequired is ACP's error code for a request the agent refuses
// until it is authenticated (Codex: "Authentication required", Gemini
// CLI: "Gemini API key is missing or not configured.").
const codeAuthRequired = -32000

// knownAuthVars are the variables the pinned adapters read for their
// auth methods that do not list them in initialize (both send the API key
// methods without a type, so without vars): from codex-acp's README and
// Gemini CLI's auth code at the versions in adapters/package.json. Keyed
// by provider and method id.
var knownAuthVars = map[string][]string{
	"codex/api-key":         {"CODEX_API_KEY", "OPENAI_API_KEY"},
	"gemini/gemini-api-key": {"GEMINI_API_KEY"},
	"gemini/vertex-ai":      {"GOOGLE_API_KEY together with GOOGLE_GENAI_USE_VERTEXAI=true"},
	"gemini/gateway":        {"GOOGLE_GEMINI_BASE_URL"},
}

// authMethodsOf reads the auth methods of an initialize result, with
// the variables that satisfy each: those of an env_var method, or those
// the pinned adapter's own documentation names (knownAuthVars).
func authMethodsOf(provider string, methods []acp.AuthMethod) []shared.AuthMethod {
	out := make([]shared.AuthMethod, 0, len(methods))
	for _, m := range methods {
		var a shared.AuthMethod
		switch {
		case m.EnvVar != nil:
			a = shared.AuthMethod{ID: m.EnvVar.Id, Name: m.EnvVar.Name, Description: deref(m.EnvVar.Description)}
			for _, v := range m.EnvVar.Vars {
				if !v.Optional {
					a.Vars = append(a.Vars, v.Name)
				}
			}
		case m.Terminal != nil:
			a = shared.AuthMethod{ID: m.Terminal.Id, Name: m.Terminal.Name, Description: deref(m.Terminal.Description)}
		case m.Agent != nil:
			a = shared.AuthMethod{ID: m.Agent.Id, Name: m.Agent.Name, Description: deref(m.Agent.Description)}
		default:
			continue
		}
		if len(a.Vars) == 0 {
			a.Vars = knownAuthVars[provider+"/"+a.ID]
		}
		out = append(out, a)
	}
	return out
}

// AuthRequiredError says an agent refused to open a session until it is
// authenticated. Its message names the agent's own auth methods and the
// environment variables that satisfy them.
type AuthRequiredError struct {
	// Agent is the profile's name.
	Agent string
	// Cause is the agent's refusal.
	Cause *AgentError
	// Methods are the agent's auth methods, in its order.
	Methods []shared.AuthMethod
}

// Error says what to do: set a variable in the profile's env, or sign in
// with the agent's own tool, then start a new session.
func (e *AuthRequiredError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s needs authentication (%s)", e.Agent, e.Cause.Message)
	if len(e.Methods) == 0 {
		b.WriteString(" and lists no auth methods; sign in with the agent's own command line as the user herd runs as, then start a new session")
		return b.String()
	}
	b.WriteString(". Its auth methods: ")
	for i, m := range e.Methods {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(m.Name)
		if m.Description != "" {
			b.WriteString(" (" + m.Description + ")")
		}
		if len(m.Vars) > 0 {
			b.WriteString(": set " + strings.Join(m.Vars, " or ") + " in the profile's env")
		} else {
			b.WriteString(": sign in with the agent's own command line as the user herd runs as")
		}
	}
	b.WriteString(". Then start a new session")
	return b.String()
}

// Unwrap returns the agent's refusal.
func (e *AuthRequiredError) Unwrap() error { return e.Cause }

// startError is callError for the requests of the handshake, with the way
// out for the refusals people meet when they first start an agent: an
// agent that needs authentication, and Claude Code run as root.
func (e *Execution) startError(ctx context.Context, method string, err error) error {
	err = e.callError(ctx, method, err)
	var ae *AgentError
	if !errors.As(err, &ae) {
		return err
	}
	switch {
	case ae.Code == codeAuthRequired:
		return fmt.Errorf("%s: %w", method, &AuthRequiredError{Agent: e.opts.Profile.Name, Cause: ae, Methods: e.authMethods})
	case e.opts.Profile.Provider == "claude" && rootRefusal(ae) && os.Geteuid() == 0:
		return fmt.Errorf("%w. Claude Code refuses to run as root: set IS_SANDBOX=1 in the profile's env, only inside a sandbox or container", err)
	}
	return err
}

// rootRefusal reports whether a Claude adapter error is its refusal to
// run as root: "--dangerously-skip-permissions cannot be used with
// root/sudo privileges" (0.101.0), or the bare "Query closed before
// response received" of earlier versions.
func rootRefusal(ae *AgentError) bool {
	text := ae.Message + " " + dataText(ae.Data)
	return strings.Contains(text, "root/sudo privileges") || strings.Contains(text, "Query closed before response received")
}

// exitedAtStart explains an agent that ended before it was ready.
func exitedAtStart(p Profile, err error) error {
	return fmt.Errorf("%w. The agent exited before it was ready: run `%s` by hand in a terminal to see why, and fix the profile's command, args or env", err, strings.Join(append([]string{p.Command}, p.Args...), " "))
}
