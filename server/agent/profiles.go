package agent

import (
	"os/exec"

	"github.com/herd-dev/herd/shared"
)

// Profile describes how to start an agent.
type Profile struct {
	// ID is stable; tasks and sessions refer to it.
	ID string
	// Name is shown to people.
	Name string
	// Provider names the agent family ("claude", "codex", "gemini", ...).
	Provider string
	// Command and Args start the agent's Agent Client Protocol server on stdio.
	Command string
	Args    []string
	// Requires lists programs that must be on PATH for the agent to work
	// (the launcher and the agent's own CLI); empty means just Command.
	Requires []string
}

// Builtin returns the profiles herd knows without configuration: the
// Agent Client Protocol adapters of Claude Code, Codex and Gemini CLI, each
// started through npx and usable when its CLI is installed.
func Builtin() []Profile {
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
	}
}

// Available reports whether every program the profile needs is on PATH.
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
