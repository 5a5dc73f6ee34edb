package store

import (
	"context"
	"reflect"
	"testing"

	"github.com/herd-dev/herd/shared"
)

func TestUpsertAgentProfileCreatesThenReplaces(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)

		mock := AgentProfile{
			ID: "mock", Name: "Mock agent", Provider: "mock", Command: "herd",
			Args: []string{"mock-agent"}, Env: map[string]string{"HERD_MOCK": "1"},
			WorkingDirPolicy: "worktree", Builtin: true,
		}
		claude := AgentProfile{ID: "claude", Name: "Claude Code", Provider: "claude", Command: "claude-code-acp"}
		for _, p := range []AgentProfile{mock, claude} {
			if err := s.UpsertAgentProfile(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		var before agentProfileRow
		if err := s.read.Where("id = ?", "mock").Take(&before).Error; err != nil {
			t.Fatal(err)
		}

		mock.Args = []string{"mock-agent", "--fast"}
		mock.Env = nil
		if err := s.UpsertAgentProfile(ctx, mock); err != nil {
			t.Fatal(err)
		}

		got, err := s.ListAgentProfiles(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := []shared.AgentProfile{
			{ID: "claude", Name: "Claude Code", Provider: "claude", Command: "claude-code-acp", Args: []string{}},
			{ID: "mock", Name: "Mock agent", Provider: "mock", Command: "herd", Args: []string{"mock-agent", "--fast"}},
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("ListAgentProfiles = %+v, want %+v", got, want)
		}

		var after agentProfileRow
		if err := s.read.Where("id = ?", "mock").Take(&after).Error; err != nil {
			t.Fatal(err)
		}
		if !after.CreatedAt.Equal(before.CreatedAt) || after.UpdatedAt.Before(before.UpdatedAt) {
			t.Errorf("upsert moved created_at %v → %v or updated_at back %v → %v",
				before.CreatedAt, after.CreatedAt, before.UpdatedAt, after.UpdatedAt)
		}
		if after.Env != "{}" || after.WorkingDirPolicy != "worktree" || !after.Builtin {
			t.Errorf("stored row %+v, want env {} and the other fields kept", after)
		}
	})
}

func TestUpsertAgentProfileRejectsIncompleteProfiles(t *testing.T) {
	s := MustOpen(t, dialectSQLite)
	for name, p := range map[string]AgentProfile{
		"no id":      {Name: "n", Command: "c"},
		"no name":    {ID: "x", Command: "c"},
		"no command": {ID: "x", Name: "n"},
	} {
		if err := s.UpsertAgentProfile(context.Background(), p); shared.ErrorCode(err) != shared.CodeBadRequest {
			t.Errorf("%s: error %v, want bad_request", name, err)
		}
	}
}
