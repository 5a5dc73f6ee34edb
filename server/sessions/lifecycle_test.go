package sessions

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// noProfile resolves no agent profile: the lifecycle table starts none.
func noProfile(context.Context, string) (agent.Profile, error) {
	return agent.Profile{}, errors.New("no agents in this test")
}

// allStates lists every lifecycle state.
var allStates = states(
	shared.SessionCreated, shared.SessionStarting, shared.SessionWaitingForInput, shared.SessionRunning,
	shared.SessionCompleted, shared.SessionIdle, shared.SessionFailed, shared.SessionCancelled,
)

// The session lifecycle, transcribed from the protocol document ("Session
// states and admission") and the package documentation: for each event,
// each state it may leave, and where it leads. A cell missing here must be
// refused.
var wantLifecycle = map[event]map[shared.SessionState]shared.SessionState{
	evStart: {shared.SessionCreated: shared.SessionStarting},
	evReady: {shared.SessionStarting: shared.SessionWaitingForInput},
	evPrompt: {
		shared.SessionWaitingForInput: shared.SessionRunning,
		shared.SessionCompleted:       shared.SessionRunning,
		shared.SessionIdle:            shared.SessionRunning,
	},
	evHandoff: {shared.SessionRunning: shared.SessionRunning},
	evSettle:  {shared.SessionRunning: shared.SessionWaitingForInput},
	evFail: {
		shared.SessionStarting:        shared.SessionFailed,
		shared.SessionRunning:         shared.SessionFailed,
		shared.SessionWaitingForInput: shared.SessionFailed,
	},
	evCancel: {shared.SessionCreated: shared.SessionCancelled, shared.SessionStarting: shared.SessionCancelled},
	evEnd: {
		shared.SessionRunning:         shared.SessionCompleted,
		shared.SessionWaitingForInput: shared.SessionCompleted,
		shared.SessionIdle:            shared.SessionCompleted,
	},
	evAbandon:      {shared.SessionCreated: shared.SessionCancelled, shared.SessionStarting: shared.SessionCancelled},
	evRecoverTurn:  {shared.SessionRunning: shared.SessionWaitingForInput},
	evRecoverStart: {shared.SessionCreated: shared.SessionFailed, shared.SessionStarting: shared.SessionFailed},
}

// Every event in every state, through the real store: an allowed change
// lands in its target state with a higher state_revision; a refused one
// is a conflict that changes nothing.
func TestLifecycleTable(t *testing.T) {
	require.Len(t, lifecycle, len(wantLifecycle), "every event of the table is specified")
	ctx := context.Background()
	st, task, dir := mustTask(t)
	m, err := New(Config{Store: st, Profile: noProfile, ScratchDir: dir})
	require.NoError(t, err)
	t.Cleanup(m.Close)
	require.NoError(t, m.Start(ctx, &recorder{}))

	for ev, want := range wantLifecycle {
		for _, from := range allStates {
			to, allowed := want[from]
			name := fmt.Sprintf("%s from %s", ev, from)
			t.Run(name, func(t *testing.T) {
				session, err := st.CreateSession(ctx, task.ID, "mock")
				require.NoError(t, err)
				if from != shared.SessionCreated {
					session, err = st.Transition(ctx, session.ID, states(shared.SessionCreated), from, "", store.Activity{})
					require.NoError(t, err)
				}
				r, err := m.live(session)
				require.NoError(t, err)
				got, err := r.transition(ctx, ev, "", false)
				stored, getErr := st.GetSession(ctx, session.ID)
				require.NoError(t, getErr)
				if !allowed {
					assert.Equal(t, shared.CodeConflict, shared.ErrorCode(err), "refused as a conflict: %v", err)
					assert.Equal(t, from, stored.State, "a refused event changes nothing")
					assert.Equal(t, session.StateRevision, stored.StateRevision)
					return
				}
				require.NoError(t, err)
				assert.Equal(t, to, got.State)
				assert.Equal(t, to, stored.State)
				assert.Greater(t, stored.StateRevision, session.StateRevision)
			})
		}
	}
}

// The table's shape: FAILED and CANCELLED are final, every other state
// has a way on, and every state is reachable from CREATED.
func TestLifecycleShape(t *testing.T) {
	leaves := map[shared.SessionState]bool{}
	next := map[shared.SessionState][]shared.SessionState{}
	for _, e := range lifecycle {
		for _, from := range e.from {
			leaves[from] = true
			next[from] = append(next[from], e.to)
		}
	}
	for _, s := range allStates {
		final := s == shared.SessionFailed || s == shared.SessionCancelled
		assert.Equal(t, !final, leaves[s], "%s: final states have no way on, the others do", s)
	}
	seen := map[shared.SessionState]bool{shared.SessionCreated: true}
	queue := states(shared.SessionCreated)
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, n := range next[s] {
			if !seen[n] {
				seen[n] = true
				queue = append(queue, n)
			}
		}
	}
	for _, s := range allStates {
		if s != shared.SessionIdle { // no event enters IDLE: herd does not stop idle agents
			assert.True(t, seen[s], "%s is reachable from CREATED", s)
		}
	}
}

// Only states with a running agent store activity: an ended session shows
// none, whatever the tracker still holds while its agent winds down.
func TestOnlyLiveStatesShowActivity(t *testing.T) {
	for _, s := range allStates {
		want := s == shared.SessionStarting || s == shared.SessionRunning || s == shared.SessionWaitingForInput
		assert.Equal(t, want, live(s), "%s", s)
	}
}
