package store

import (
	"context"
	"reflect"
	"sync"
	"testing"

	"github.com/herd-dev/herd/shared"
)

func TestFirstSessionBecomesPrimary(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		task := mustTask(t, s, shared.TaskCreateRequest{WorkspaceID: mustWorkspace(t, s, "w").ID, Title: "t"})
		first, err := s.CreateSession(ctx, task.ID, "mock")
		if err != nil {
			t.Fatal(err)
		}
		if first.State != shared.SessionCreated || first.TaskID != task.ID {
			t.Fatalf("new session %+v", first)
		}
		second := mustSession(t, s, task.ID)
		got, err := s.GetTask(ctx, task.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.PrimarySessionID != first.ID {
			t.Fatalf("primary session = %q, want the first %q", got.PrimarySessionID, first.ID)
		}
		list, err := s.ListSessions(ctx, task.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 2 || list[0].ID != first.ID || list[1].ID != second {
			t.Fatalf("ListSessions = %+v", list)
		}
		if _, err := s.CreateSession(ctx, "missing", "mock"); shared.ErrorCode(err) != shared.CodeNotFound {
			t.Fatalf("session of a missing task: %v", err)
		}
		if _, err := s.GetSession(ctx, "missing"); shared.ErrorCode(err) != shared.CodeNotFound {
			t.Fatalf("GetSession of a missing session: %v", err)
		}
	})
}

func TestTransitionIsCompareAndSet(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		task := mustTask(t, s, shared.TaskCreateRequest{WorkspaceID: mustWorkspace(t, s, "w").ID, Title: "t"})
		id := mustSession(t, s, task.ID)

		got, err := s.Transition(ctx, id, []shared.SessionState{shared.SessionCreated}, shared.SessionStarting, "", Activity{})
		if err != nil || got.State != shared.SessionStarting {
			t.Fatalf("CREATED → STARTING = %+v, %v", got, err)
		}
		if _, err := s.Transition(ctx, id, []shared.SessionState{shared.SessionCreated}, shared.SessionStarting, "", Activity{}); shared.ErrorCode(err) != shared.CodeConflict {
			t.Fatalf("transition from a state the session left: %v", err)
		}
		if _, err := s.Transition(ctx, "missing", []shared.SessionState{shared.SessionCreated}, shared.SessionStarting, "", Activity{}); shared.ErrorCode(err) != shared.CodeNotFound {
			t.Fatalf("transition of a missing session: %v", err)
		}

		// Of many racing transitions out of STARTING, exactly one wins.
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins := 0
		for range 8 {
			wg.Go(func() {
				_, err := s.Transition(ctx, id, []shared.SessionState{shared.SessionStarting}, shared.SessionFailed, "boom", Activity{})
				if err == nil {
					mu.Lock()
					wins++
					mu.Unlock()
				} else if shared.ErrorCode(err) != shared.CodeConflict {
					t.Errorf("racing transition: %v", err)
				}
			})
		}
		wg.Wait()
		if wins != 1 {
			t.Fatalf("%d racing transitions won, want 1", wins)
		}
		failed, err := s.SessionsInStates(ctx, shared.SessionFailed)
		if err != nil || len(failed) != 1 || failed[0].ErrorMessage != "boom" {
			t.Fatalf("SessionsInStates(FAILED) = %+v, %v", failed, err)
		}
	})
}

// The agent's own session id is kept with herd's session, so the next
// execution can resume it; why a start could not restore the agent's
// context is kept beside it and raises the state revision, since clients
// show it in the session's header.
func TestAgentSessionIsKeptAndContextLossIsRevisioned(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		task := mustTask(t, s, shared.TaskCreateRequest{WorkspaceID: mustWorkspace(t, s, "w").ID, Title: "t"})
		id := mustSession(t, s, task.ID)
		before, err := s.GetSession(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if before.AgentSessionID != "" || before.ContextLost != "" {
			t.Fatalf("new session %+v has an agent session", before)
		}

		first, changed, err := s.SetAgentSession(ctx, id, "agent-1", "")
		if err != nil || !changed {
			t.Fatalf("first agent session: changed %v, %v", changed, err)
		}
		if first.AgentSessionID != "agent-1" || first.StateRevision != before.StateRevision {
			t.Fatalf("after the first agent session %+v; an id alone is no state change", first)
		}
		if _, changed, err := s.SetAgentSession(ctx, id, "agent-1", ""); err != nil || changed {
			t.Fatalf("same agent session again: changed %v, %v", changed, err)
		}

		lost, changed, err := s.SetAgentSession(ctx, id, "agent-2", "the agent cannot resume")
		if err != nil || !changed {
			t.Fatalf("fresh agent session: changed %v, %v", changed, err)
		}
		if lost.AgentSessionID != "agent-2" || lost.ContextLost != "the agent cannot resume" || lost.StateRevision != first.StateRevision+1 {
			t.Fatalf("after a lost context %+v (revision before %d)", lost, first.StateRevision)
		}
		got, err := s.GetSession(ctx, id)
		if err != nil || got.AgentSessionID != "agent-2" || got.ContextLost != "the agent cannot resume" {
			t.Fatalf("stored session %+v, %v", got, err)
		}

		restored, changed, err := s.SetAgentSession(ctx, id, "agent-2", "")
		if err != nil || !changed || restored.ContextLost != "" || restored.StateRevision != lost.StateRevision+1 {
			t.Fatalf("restored context: %+v, changed %v, %v", restored, changed, err)
		}

		if _, _, err := s.SetAgentSession(ctx, id, "", ""); shared.ErrorCode(err) != shared.CodeBadRequest {
			t.Fatalf("empty agent session id: %v", err)
		}
		if _, _, err := s.SetAgentSession(ctx, "missing", "agent-1", ""); shared.ErrorCode(err) != shared.CodeNotFound {
			t.Fatalf("agent session of a missing session: %v", err)
		}
	})
}

// A session's configuration is kept as the agent reported it, values and
// all, and is no part of its state.
func TestSessionConfigIsKeptWholeWithoutTouchingTheState(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		task := mustTask(t, s, shared.TaskCreateRequest{WorkspaceID: mustWorkspace(t, s, "w").ID, Title: "t"})
		id := mustSession(t, s, task.ID)
		before, err := s.GetSession(ctx, id)
		if err != nil || before.Config != nil {
			t.Fatalf("new session config %+v, %v", before.Config, err)
		}
		c := shared.SessionConfig{Options: []shared.ConfigOption{
			{ID: "model", Name: "Model", Category: shared.ConfigCategoryModel, Type: shared.ConfigSelect, CurrentValue: "sonnet",
				Values: []shared.ConfigValue{{Value: "opus", Name: "Opus 5.5", Description: "Opus · $4/$20 per Mtok"}, {Value: "sonnet", Name: "Sonnet", Group: "Anthropic"}}},
			{ID: "fast", Name: "Fast mode", Type: shared.ConfigBoolean, CurrentValue: "false"},
		}}
		if changed, err := s.SetSessionConfig(ctx, id, c); err != nil || !changed {
			t.Fatalf("first config: changed %v, %v", changed, err)
		}
		if changed, err := s.SetSessionConfig(ctx, id, c); err != nil || changed {
			t.Fatalf("same config again: changed %v, %v", changed, err)
		}
		got, err := s.GetSession(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Config, &c) {
			t.Fatalf("stored %+v\nwant   %+v", got.Config, c)
		}
		if got.StateRevision != before.StateRevision || !got.UpdatedAt.Equal(before.UpdatedAt) {
			t.Fatalf("revision %d→%d, updated %v→%v", before.StateRevision, got.StateRevision, before.UpdatedAt, got.UpdatedAt)
		}
		list, err := s.ListSessions(ctx, task.ID)
		if err != nil || len(list) != 1 || currentOf(list[0].Config, "model") != "sonnet" {
			t.Fatalf("listed %+v, %v", list, err)
		}
		c.Options[0].CurrentValue = "opus"
		if changed, err := s.SetSessionConfig(ctx, id, c); err != nil || !changed {
			t.Fatalf("changed model: changed %v, %v", changed, err)
		}
		if got, _ := s.GetSession(ctx, id); currentOf(got.Config, "model") != "opus" {
			t.Fatalf("model = %q", currentOf(got.Config, "model"))
		}
		if _, err := s.SetSessionConfig(ctx, "missing", c); shared.ErrorCode(err) != shared.CodeNotFound {
			t.Fatalf("config of a missing session: %v", err)
		}
	})
}

func currentOf(c *shared.SessionConfig, id string) string {
	o, _ := c.Option(id)
	return o.CurrentValue
}
