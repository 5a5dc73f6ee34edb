package sessions

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/mockagent/mocktest"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// A session's state commits before its run's mirror learns of it; a client
// that read the new state in between (a session.list) is not refused for
// the old one.
func TestAPromptToASessionStoredAsWaitingIsTakenBeforeTheMirrorCatchesUp(t *testing.T) {
	ctx := context.Background()
	st, task, dir := mustTask(t)
	m, pub := startManager(t, st, dir, mocktest.Profile())
	s, err := st.CreateSession(ctx, task.ID, "mock")
	require.NoError(t, err)
	s, err = st.Transition(ctx, s.ID, []shared.SessionState{shared.SessionCreated}, shared.SessionStarting, "", store.Activity{})
	require.NoError(t, err)
	_, err = m.live(s) // the run mirrors STARTING
	require.NoError(t, err)
	_, err = st.Transition(ctx, s.ID, []shared.SessionState{shared.SessionStarting}, shared.SessionWaitingForInput, "", store.Activity{})
	require.NoError(t, err)

	added, err := m.AddMessage(ctx, s.ID, "c-1", "hello")
	require.NoError(t, err)
	require.Equal(t, shared.OutcomeDispatched, added.Outcome)
	pub.waitSettled(t, 1)
	require.Equal(t, "hello", lastAgentText(t, st, s.ID))
}
