package sessions

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/mockagent/mocktest"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// currentValue returns a configuration's value of option id.
func currentValue(c *shared.SessionConfig, id string) string {
	o, _ := c.Option(id)
	return o.CurrentValue
}

// storedConfig waits until the session's stored configuration has option
// id at value, and returns the session.
func storedConfig(t *testing.T, st *store.Store, sessionID, id, value string) shared.Session {
	t.Helper()
	var s shared.Session
	require.Eventually(t, func() bool {
		var err error
		s, err = st.GetSession(context.Background(), sessionID)
		require.NoError(t, err)
		return currentValue(s.Config, id) == value
	}, 10*time.Second, 10*time.Millisecond, "stored config never had %s=%s", id, value)
	return s
}

// lastAgentText returns the content of the session's newest agent message.
func lastAgentText(t *testing.T, st *store.Store, sessionID string) string {
	t.Helper()
	msgs, _, err := st.ListMessages(context.Background(), sessionID, 0, 0)
	require.NoError(t, err)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Type == shared.MessageAgent {
			return msgs[i].Content
		}
	}
	return ""
}

func TestAChosenModelIsStoredAnnouncedAndUsedByTheNextPrompt(t *testing.T) {
	ctx := context.Background()
	st, task, dir := mustTask(t)
	m, pub := startManager(t, st, dir, mocktest.Profile())
	session, err := m.Create(ctx, shared.SessionCreateRequest{TaskID: task.ID, Prompt: "hello"})
	require.NoError(t, err)
	pub.waitSettled(t, 1)
	opened := storedConfig(t, st, session.ID, "model", "mock-fast")
	require.Len(t, opened.Config.Options, 3, "the agent's settings as it opened the session")

	got, err := m.SetConfig(ctx, shared.SessionConfigSetRequest{SessionID: session.ID, OptionID: "model", Value: "mock-smart"})
	require.NoError(t, err)
	require.Equal(t, "mock-smart", currentValue(&got.Config, "model"))
	// Stored before the answer, and announced to the session's clients.
	stored, err := st.GetSession(ctx, session.ID)
	require.NoError(t, err)
	require.Equal(t, "mock-smart", currentValue(stored.Config, "model"))
	require.Equal(t, opened.StateRevision, stored.StateRevision, "a setting is not the session's state")
	pub.mu.Lock()
	last := pub.configs[len(pub.configs)-1]
	n := len(pub.configs)
	pub.mu.Unlock()
	require.Equal(t, session.ID, last.SessionID)
	require.Equal(t, "mock-smart", currentValue(&last.Config, "model"))

	_, err = m.AddMessage(ctx, session.ID, "c-2", "/scenario config")
	require.NoError(t, err)
	pub.waitSettled(t, 2)
	require.Equal(t, "mode=ask model=mock-smart thinking=false", lastAgentText(t, st, session.ID))
	pub.mu.Lock()
	defer pub.mu.Unlock()
	require.Len(t, pub.configs, n, "the same configuration reported again is not announced again")
}

func TestSettingsOutliveARestartAndChangeBeforeTheNextPrompt(t *testing.T) {
	ctx := context.Background()
	st, task, dir := mustTask(t)
	profile := mocktest.Profile("--state-dir", filepath.Join(dir, "mock-state"))
	m1, pub1 := startManager(t, st, dir, profile)
	session, err := m1.Create(ctx, shared.SessionCreateRequest{TaskID: task.ID, Prompt: "hello"})
	require.NoError(t, err)
	pub1.waitSettled(t, 1)
	storedConfig(t, st, session.ID, "model", "mock-fast")
	_, err = m1.SetConfig(ctx, shared.SessionConfigSetRequest{SessionID: session.ID, OptionID: "model", Value: "mock-smart"})
	require.NoError(t, err)
	m1.Close() // herd stops, and its agent with it

	// The stored settings still show; changing one starts the agent, which
	// continues its session with the model chosen before.
	storedConfig(t, st, session.ID, "model", "mock-smart")
	m2, pub2 := startManager(t, st, dir, profile)
	got, err := m2.SetConfig(ctx, shared.SessionConfigSetRequest{SessionID: session.ID, OptionID: "mode", Value: "plan"})
	require.NoError(t, err)
	require.Equal(t, "plan", currentValue(&got.Config, "mode"))
	require.Equal(t, "mock-smart", currentValue(&got.Config, "model"))
	_, err = m2.AddMessage(ctx, session.ID, "c-2", "/scenario config")
	require.NoError(t, err)
	pub2.waitSettled(t, 1)
	require.Equal(t, "mode=plan model=mock-smart thinking=false", lastAgentText(t, st, session.ID))
}

func TestAChangeWhileTheAgentStreamsKeepsItsMessageWhole(t *testing.T) {
	ctx := context.Background()
	st, task, dir := mustTask(t)
	m, pub := startManager(t, st, dir, mocktest.Profile())
	session, err := m.Create(ctx, shared.SessionCreateRequest{TaskID: task.ID, Prompt: "/scenario stream 40 25"})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return lastAgentText(t, st, session.ID) != "" }, 10*time.Second, 5*time.Millisecond)
	// The mock lets the mode change during a turn; the model it refuses,
	// in its own words, and nothing changes.
	_, err = m.SetConfig(ctx, shared.SessionConfigSetRequest{SessionID: session.ID, OptionID: "mode", Value: "code"})
	require.NoError(t, err)
	_, err = m.SetConfig(ctx, shared.SessionConfigSetRequest{SessionID: session.ID, OptionID: "model", Value: "mock-smart"})
	require.Equal(t, shared.CodeConflict, shared.ErrorCode(err), "%v", err)
	require.Contains(t, err.Error(), "cannot change while a turn runs")
	pub.waitSettled(t, 1)
	msgs, _, err := st.ListMessages(ctx, session.ID, 0, 0)
	require.NoError(t, err)
	var agents int
	for _, msg := range msgs {
		if msg.Type == shared.MessageAgent {
			agents++
			require.Equal(t, numbers(40), msg.Content)
		}
	}
	require.Equal(t, 1, agents, "one answer, not cut in two by the change")
	s := storedConfig(t, st, session.ID, "mode", "code")
	require.Equal(t, "mock-fast", currentValue(s.Config, "model"))
}

func TestSetConfigRefusesUnknownOptionsAndEndedSessions(t *testing.T) {
	ctx := context.Background()
	st, task, dir := mustTask(t)
	m, pub := startManager(t, st, dir, mocktest.Profile())
	session, err := m.Create(ctx, shared.SessionCreateRequest{TaskID: task.ID, Prompt: "hello"})
	require.NoError(t, err)
	pub.waitSettled(t, 1)
	storedConfig(t, st, session.ID, "model", "mock-fast")
	for _, tc := range []struct {
		req  shared.SessionConfigSetRequest
		code shared.Code
	}{
		{shared.SessionConfigSetRequest{SessionID: "nope", OptionID: "model", Value: "mock-smart"}, shared.CodeNotFound},
		{shared.SessionConfigSetRequest{SessionID: session.ID, OptionID: "nope", Value: "x"}, shared.CodeNotFound},
		{shared.SessionConfigSetRequest{SessionID: session.ID, OptionID: "model", Value: "nope"}, shared.CodeBadRequest},
	} {
		_, err := m.SetConfig(ctx, tc.req)
		require.Equal(t, tc.code, shared.ErrorCode(err), "%+v: %v", tc.req, err)
	}
	_, err = st.ArchiveTask(ctx, task.ID)
	require.NoError(t, err)
	require.NoError(t, m.EndTask(ctx, task.ID))
	_, err = m.SetConfig(ctx, shared.SessionConfigSetRequest{SessionID: session.ID, OptionID: "mode", Value: "plan"})
	require.Equal(t, shared.CodeConflict, shared.ErrorCode(err), "%v", err)
}
