package state

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

func planMsg(id string, seq int64, statuses ...string) shared.Message {
	meta := &shared.MessageMetadata{}
	for i, s := range statuses {
		meta.Entries = append(meta.Entries, shared.PlanEntry{Content: "step " + string(rune('A'+i)), Priority: "medium", Status: s})
	}
	return shared.Message{ID: id, SessionID: "s1", Seq: seq, UpdatedAt: st0, Type: shared.MessagePlan, Status: shared.MessageComplete, Metadata: meta}
}

// The dock shows the newest plan of the session: a later execution's plan
// replaces an earlier one, and other messages after it do not hide it.
func TestCurrentPlanIsTheNewestPlanMessage(t *testing.T) {
	msgs := []shared.Message{
		planMsg("p1", 1, PlanCompleted, PlanCompleted),
		{ID: "u", Seq: 2, Type: shared.MessageUser, Content: "again"},
		planMsg("p2", 3, PlanCompleted, PlanInProgress, PlanPending, PlanInProgress),
		{ID: "a", Seq: 4, Type: shared.MessageAgent, Content: "working"},
	}
	p := CurrentPlan(msgs)
	require.Equal(t, "p2", p.MessageID)
	require.Len(t, p.Entries, 4)
	require.Equal(t, 1, p.Done)
	require.Equal(t, 1, p.Current, "the first step in progress is the current one")
	require.Equal(t, "Plan 1/4", p.Label())
}

// A plan updated in place (the same message with new entries) reads as its
// newest state.
func TestCurrentPlanFollowsAnUpdateInPlace(t *testing.T) {
	first := planMsg("p", 1, PlanInProgress, PlanPending)
	d := loaded(t, first)
	require.Equal(t, "Plan 0/2", CurrentPlan(d.Messages()).Label())
	next := planMsg("p", 1, PlanCompleted, PlanInProgress)
	next.UpdatedAt = first.UpdatedAt.Add(time.Second)
	d.Push(updated(1, next))
	d.Flush()
	p := CurrentPlan(d.Messages())
	require.Equal(t, "Plan 1/2", p.Label())
	require.Equal(t, 1, p.Current)
}

// With no plan message there is nothing to show.
func TestCurrentPlanWithoutAPlan(t *testing.T) {
	p := CurrentPlan([]shared.Message{{ID: "u", Seq: 1, Type: shared.MessageUser}})
	require.Empty(t, p.MessageID)
	require.Equal(t, -1, p.Current)
	require.False(t, p.Visible(shared.SessionRunning))
}

func TestPlanVisibility(t *testing.T) {
	cases := []struct {
		name  string
		plan  shared.Message
		state shared.SessionState
		want  bool
	}{
		{"empty plan", planMsg("p", 1), shared.SessionRunning, false},
		{"steps left while running", planMsg("p", 1, PlanCompleted, PlanPending), shared.SessionRunning, true},
		{"steps left after the turn", planMsg("p", 1, PlanCompleted, PlanPending), shared.SessionWaitingForInput, true},
		{"all done while the turn runs", planMsg("p", 1, PlanCompleted, PlanCompleted), shared.SessionRunning, true},
		{"all done and settled", planMsg("p", 1, PlanCompleted, PlanCompleted), shared.SessionWaitingForInput, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, CurrentPlan([]shared.Message{c.plan}).Visible(c.state))
		})
	}
}

// Folding a session's plan is remembered for that session only, across a
// reload (a new PlanFold over the same storage).
func TestPlanFoldIsRememberedPerSession(t *testing.T) {
	kv := MapKV{}
	NewPlanFold(kv).Set("s1", true)
	f := NewPlanFold(kv)
	require.True(t, f.Folded("s1"))
	require.False(t, f.Folded("s2"))
	f.Set("s1", false)
	require.False(t, NewPlanFold(kv).Folded("s1"))
	require.Empty(t, kv, "unfolded is the default and is not stored")
}
