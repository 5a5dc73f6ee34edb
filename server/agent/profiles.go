package agent

import (
	"os/exec"

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
	// (the launcher and the agent's own CLI); empty means just Command.
	Requires []string
}

// MockProfile is the built-in mock profile started as command with args.
// herd serve runs its own executable as `herd mock-agent`; tests run the
// test binary instead (see package mockagent/mocktest).
func MockProfile(command string, args ...string) Profile {
	return Profile{ID: MockProfileID, Name: "Mock agent", Provider: "mock", Command: command, Args: args}
}

// BuiltinFor returns the profiles herd knows without configuration: the
// Agent Client Protocol adapters of Claude Code, Codex and Gemini CLI, each
// started through npx and usable when its CLI is installed, followed by
// mock, the mock agent's profile (see MockProfile), which is always
// available. The result depends only on mock, so tests can start the mock
// agent any way they like.
func BuiltinFor(mock Profile) []Profile {
	return []Profile{
		{
			ID: "claude-code", Name: "Claude Code", Provider: "claude",
			Command: "npx", Args: []string{"-y", "@agentclientprotocol/claude-agent-acp"},
			Requires: []string{"npx", "claude"},
		},
		{
			ID: "codex", Name: "Codex", Provider: "codex",
			Command: "npx", Args: []string{"-y", "@agentclientprotocol/codex-acp"},
			Requires: []string{"npx", "codex"},
		},
		{
			ID: "gemini", Name: "Gemini CLI", Provider: "gemini",
			Command: "npx", Args: []string{"-y", "@google/gemini-cli", "--acp"},
			Requires: []string{"npx", "gemini"},
		},
		mock,
	}
}

// Available reports whether every program the profile needs is on PATH (or,
// for a command given as a path, exists and is executable).
func (p Profile) Available() bool {
	required := p.Requires
	if len(required) == 0 {
		required = []string{p.Command}
	}
	for _, name := range required {
		if _, err := exec.LookPath(name); err != nil {
			return false
		}
	}
	return true
}

// Wire returns the profile as the protocol presents it.
func (p Profile) Wire() shared.AgentProfile {
	args := p.Args
	if args == nil {
		args = []string{}
	}
	return shared.AgentProfile{
		ID: p.ID, Name: p.Name, Provider: p.Provider,
		Command: p.Command, Args: args, Available: p.Available(),
	}
}

// Capabilities are the typed facts herd's adapter for one provider has
// verified against that provider's frames. They are granted per provider by
// CapabilitiesOf and never inferred from what an agent sends: an agent
// cannot widen its own capabilities by shaping its output.
type Capabilities struct {
	// AttestsBackground is true when the adapter's background-work
	// lifecycle frames (launch, foreground yield and terminal frame of
	// subagents, background shells and Monitor watches, carried in
	// `_meta.claudeCode`) are covered by fixture tests. Only then is the
	// Provenance of its tool calls marked Attested; otherwise provenance is
	// presentation data and the session stays foreground-busy (spec 000).
	AttestsBackground bool
	// Handoff is true when the provider accepts a person's next prompt
	// while an earlier prompt request is still held open for background
	// work (a Claude subagent turn), and its tests cover that exchange.
	// Prompt then leaves admission to its caller (see Execution.Prompt).
	Handoff bool
}

// CapabilitiesOf returns the adapter capabilities of a provider. Only the
// mock provider attests background work and the handoff: its lifecycle
// frames and concurrent prompts are exercised by this package's tests.
// Claude's adapter joins it once fixtures of its real frames are tested
// here; every other provider stays coarse.
func CapabilitiesOf(provider string) Capabilities {
	switch provider {
	case "mock":
		return Capabilities{AttestsBackground: true, Handoff: true}
	default:
		return Capabilities{}
	}
}
