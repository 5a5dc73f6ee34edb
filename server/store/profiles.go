package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"gorm.io/gorm/clause"

	"github.com/herd-dev/herd/shared"
)

// AgentProfile is everything the store keeps about how to start an agent.
// shared.AgentProfile is the part clients see.
type AgentProfile struct {
	// ID identifies the profile; built-in profiles have fixed ids such as
	// "mock".
	ID string
	// Name is the label shown to people; profiles are listed by it.
	Name string
	// Provider names the agent family (claude, codex, gemini, mock, …),
	// which selects the runtime adapter and its capabilities.
	Provider string
	// Command is the executable to start, a path or a name looked up in PATH.
	Command string
	// Args are the command's arguments; nil means none.
	Args []string
	// Env holds variables added to the agent's environment; nil means none.
	Env map[string]string
	// WorkingDirPolicy says where the agent runs (for example in a task
	// worktree or in place); empty leaves the choice to the runtime.
	WorkingDirPolicy string
	// Builtin marks profiles that herd itself installs and keeps up to date.
	Builtin bool
}

// ListAgentProfiles returns every agent profile ordered by name. Available is
// left false: whether a command can run is the server's to find out.
func (s *Store) ListAgentProfiles(ctx context.Context) ([]shared.AgentProfile, error) {
	var rows []agentProfileRow
	if err := s.read.WithContext(ctx).Order("name, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("load agent profiles: %w", err)
	}
	out := make([]shared.AgentProfile, len(rows))
	for i, r := range rows {
		p, err := r.toAgentProfile()
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}

// UpsertAgentProfile creates the profile p.ID or replaces every field of the
// existing one, keeping its creation time.
func (s *Store) UpsertAgentProfile(ctx context.Context, p AgentProfile) error {
	switch {
	case p.ID == "":
		return shared.Errorf(shared.CodeBadRequest, "agent profile id is required")
	case strings.TrimSpace(p.Name) == "":
		return shared.Errorf(shared.CodeBadRequest, "agent profile %q: name is required", p.ID)
	case strings.TrimSpace(p.Command) == "":
		return shared.Errorf(shared.CodeBadRequest, "agent profile %q: command is required", p.ID)
	}
	args := p.Args
	if args == nil {
		args = []string{}
	}
	env := p.Env
	if env == nil {
		env = map[string]string{}
	}
	argsJSON, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("encode agent profile args: %w", err)
	}
	envJSON, err := json.Marshal(env)
	if err != nil {
		return fmt.Errorf("encode agent profile env: %w", err)
	}

	t := now()
	row := agentProfileRow{
		ID:               p.ID,
		Name:             p.Name,
		Provider:         p.Provider,
		Command:          p.Command,
		Args:             string(argsJSON),
		Env:              string(envJSON),
		WorkingDirPolicy: p.WorkingDirPolicy,
		Builtin:          p.Builtin,
		CreatedAt:        t,
		UpdatedAt:        t,
	}
	err = s.write.WithContext(ctx).Clauses(clause.OnConflict{
		Columns: []clause.Column{{Name: "id"}},
		DoUpdates: clause.AssignmentColumns([]string{
			"name", "provider", "command", "args", "env", "working_dir_policy", "builtin", "updated_at",
		}),
	}).Create(&row).Error
	if err != nil {
		return fmt.Errorf("upsert agent profile %s: %w", p.ID, err)
	}
	return nil
}
