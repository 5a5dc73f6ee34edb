package agent

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/herd-dev/herd/shared"
)

// MockProfileID is the id of the built-in profile that runs herd's own
// scripted agent, `herd mock-agent` (package mockagent).
const MockProfileID = "mock"

// Profile describes how to start an agent.
type Profile struct {
	// ID is stable; tasks and sessions refer to it.
	ID string
	// Name is shown to people.
	Name string
	// Provider names the agent family ("claude", "codex", "gemini", "mock",
	// ...); it selects the adapter capabilities (see CapabilitiesOf).
	Provider string
	// Command and Args start the agent's Agent Client Protocol server on stdio.
	Command string
	Args    []string
	// Env holds variables added to the agent's environment, on top of
	// herd's own; nil adds none. A key given here replaces herd's value.
	Env map[string]string
	// Requires lists programs that must be on PATH for the agent to work
	// (the launcher and the runtime it needs); empty means just Command.
	Requires []string
	// Adapter is the npm package the profile runs, for a built-in
	// profile; nil otherwise.
	Adapter *Adapter
}

// MockProfile is the built-in mock profile started as command with args.
// herd serve runs its own executable as `herd mock-agent`; tests run the
// test binary instead (see package mockagent/mocktest).
func MockProfile(command string, args ...string) Profile {
	return Profile{ID: MockProfileID, Name: "Mock agent", Provider: "mock", Command: command, Args: args}
}

// Adapter is an npm package that serves an agent over the Agent Client
// Protocol on stdio. herd pins the version it is tested with; the same
// pins are in adapters/package.json, which `make adapters` installs.
type Adapter struct {
	// Package and Version name the npm package and its pinned version.
	Package, Version string
	// Bin is the executable the package installs.
	Bin string
	// Args are the arguments that make Bin speak ACP on stdio.
	Args []string
}

// The adapters of the built-in profiles, as pinned in adapters/package.json.
var (
	ClaudeAdapter = Adapter{Package: "@agentclientprotocol/claude-agent-acp", Version: "0.101.0", Bin: "claude-agent-acp"}
	CodexAdapter  = Adapter{Package: "@agentclientprotocol/codex-acp", Version: "2.6.0", Bin: "codex-acp"}
	GeminiAdapter = Adapter{Package: "@google/gemini-cli", Version: "0.61.0", Bin: "gemini", Args: []string{"--acp"}}
)

// Profile returns a profile that starts the adapter, found in this order:
// installed under dir (an npm prefix, such as a checkout's
// server/agent/adapters after `make adapters`; "" skips it), installed on
// PATH (npm install -g), or else run through npx at the pinned version,
// which downloads it on first use. Each way requires node.
func (a Adapter) Profile(id, name, provider, dir string) Profile {
	p := Profile{ID: id, Name: name, Provider: provider, Adapter: &a}
	if dir != "" {
		bin := filepath.Join(dir, "node_modules", ".bin", a.Bin)
		if abs, err := filepath.Abs(bin); err == nil {
			bin = abs
		}
		if fi, err := os.Stat(bin); err == nil && !fi.IsDir() {
			p.Command, p.Args, p.Requires = bin, a.Args, []string{bin, "node"}
			return p
		}
	}
	if path, err := exec.LookPath(a.Bin); err == nil {
		p.Command, p.Args, p.Requires = path, a.Args, []string{path, "node"}
		return p
	}
	p.Command = "npx"
	p.Args = append([]string{"-y", a.Package + "@" + a.Version}, a.Args...)
	p.Requires = []string{"npx", "node"}
	return p
}

// BuiltinFor returns the profiles herd knows without configuration: the
// Agent Client Protocol adapters of Claude Code, Codex and Gemini CLI (see
// Adapter.Profile for where they are looked for; adapters is the npm
// prefix they may be installed under), followed by mock, the mock agent's
// profile (see MockProfile), which is always available. Tests can start
// the mock agent any way they like.
func BuiltinFor(mock Profile, adapters string) []Profile {
	return []Profile{
		ClaudeAdapter.Profile("claude-code", "Claude Code", "claude", adapters),
		CodexAdapter.Profile("codex", "Codex", "codex", adapters),
		GeminiAdapter.Profile("gemini", "Gemini CLI", "gemini", adapters),
		mock,
	}
}

// Available reports whether every program the profile needs is on PATH (or,
// for a command given as a path, exists and is executable).
func (p Profile) Available() bool { return p.Missing() == "" }

// Missing says what the profile lacks to start on this machine, in words a
// person can act on, or "" when nothing is missing.
func (p Profile) Missing() string {
	required := p.Requires
	if len(required) == 0 {
		required = []string{p.Command}
	}
	var missing []string
	for _, name := range required {
		if _, err := exec.LookPath(name); err != nil {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	msg := "needs " + strings.Join(missing, " and ") + " on PATH"
	if p.Adapter != nil {
		msg += fmt.Sprintf("; install Node.js (npm brings npx), then the adapter with `npm install -g %s@%s` or `make adapters`",
			p.Adapter.Package, p.Adapter.Version)
	}
	return msg
}

// Wire returns the profile as the protocol presents it.
func (p Profile) Wire() shared.AgentProfile {
	missing := p.Missing()
	args := p.Args
	if args == nil {
		args = []string{}
	}
	return shared.AgentProfile{
		ID: p.ID, Name: p.Name, Provider: p.Provider,
		Command: p.Command, Args: args, Available: missing == "", Missing: missing,
	}
}

// Capabilities are the typed facts herd's adapter for one provider has
// verified against that provider's frames. They are granted per provider by
// CapabilitiesOf and never inferred from what an agent sends: an agent
// cannot widen its own capabilities by shaping its output.
type Capabilities struct {
	// AttestsBackground is true when the adapter's background-work
	// lifecycle frames (launch, foreground yield and an accountable end,
	// carried in `_meta.claudeCode`) are covered by fixture tests: for
	// Claude, of its background subagents (claude.go); for the mock, also
	// of its shells and Monitor watches. Only then is the Provenance of its
	// tool calls marked Attested; otherwise provenance is presentation data
	// and the session stays foreground-busy (spec 000).
	AttestsBackground bool
	// Handoff is true when the provider accepts a person's next prompt
	// while an earlier prompt request is still held open for background
	// work (a Claude subagent turn), and its tests cover that exchange.
	// Prompt then leaves admission to its caller (see Execution.Prompt).
	Handoff bool
	// ExplicitLifecycle is true for an agent that names its background
	// work's lifecycle in herd's own `_meta.claudeCode` fields
	// (backgroundTaskId, backgroundKind, lifecycle; see Provenance): the
	// mock agent. Claude's adapter never sends them; its launches are read
	// from its tool results (claude.go), and for it those fields are
	// ignored.
	ExplicitLifecycle bool
}

// CapabilitiesOf returns the adapter capabilities of a provider. Claude's
// adapter attests background subagents from the frames it really sends
// (claude.go, tested against recordings of it in package claudeframes),
// not the handoff. The mock attests both: it replays those recorded frames
// and also speaks herd's explicit lifecycle, whose concurrent prompts this
// package's tests exercise. Every other provider stays coarse.
func CapabilitiesOf(provider string) Capabilities {
	switch provider {
	case "mock":
		return Capabilities{AttestsBackground: true, Handoff: true, ExplicitLifecycle: true}
	case "claude":
		return Capabilities{AttestsBackground: true}
	default:
		return Capabilities{}
	}
}
