package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/herd-dev/herd/server/agent"
)

// agentsFile is the JSON file of agent profiles given with --agents-file:
//
//	{"agents": [{"id": "claude-work", "name": "Claude (work account)",
//	  "provider": "claude", "command": "npx",
//	  "args": ["-y", "@agentclientprotocol/claude-agent-acp"],
//	  "env": {"CLAUDE_CONFIG_DIR": "/home/me/.claude-work"}}]}
type agentsFile struct {
	Agents []struct {
		ID       string            `json:"id"`
		Name     string            `json:"name"`
		Provider string            `json:"provider"`
		Command  string            `json:"command"`
		Args     []string          `json:"args"`
		Env      map[string]string `json:"env"`
	} `json:"agents"`
}

// loadAgentsFile reads and checks an agents file; an empty path yields no
// profiles. A profile may not reuse a built-in id.
func loadAgentsFile(path string, builtins []agent.Profile) ([]agent.Profile, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--agents-file: %w", err)
	}
	var f agentsFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("--agents-file %s: %w", path, err)
	}
	taken := make(map[string]bool)
	for _, b := range builtins {
		taken[b.ID] = true
	}
	out := make([]agent.Profile, 0, len(f.Agents))
	for i, a := range f.Agents {
		switch {
		case a.ID == "" || a.Name == "" || a.Command == "":
			return nil, fmt.Errorf("--agents-file %s: agents[%d] needs id, name and command", path, i)
		case taken[a.ID]:
			return nil, fmt.Errorf("--agents-file %s: agents[%d]: id %q is already taken", path, i, a.ID)
		}
		taken[a.ID] = true
		provider := a.Provider
		if provider == "" {
			provider = "acp"
		}
		out = append(out, agent.Profile{ID: a.ID, Name: a.Name, Provider: provider, Command: a.Command, Args: a.Args, Env: a.Env})
	}
	return out, nil
}
