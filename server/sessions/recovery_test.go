package sessions

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/mockagent/mocktest"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// recorder is a Publisher that keeps what was published.
type recorder struct {
	mu     sync.Mutex
	events []string // "session-id action state-outcome-or-message-id"
}

func (r *recorder) PublishSession(sessionID, action string, payload any, _ bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	detail := ""
	switch ev := payload.(type) {
	case shared.SessionStateEvent:
		detail = string(ev.State)
	case shared.TurnSettledEvent:
		detail = string(ev.Outcome)
	case shared.Message:
		detail = ev.ID
	}
	r.events = append(r.events, sessionID+" "+action+" "+detail)
}

func (r *recorder) PublishWorkspace(string, string, any) {}

func (r *recorder) has(event string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events {
		if e == event {
			return true
		}
	}
	return false
}

// A process that died mid-turn left a session RUNNING, a half-streamed
// answer, an unanswered permission request and a claimed but unsent
// prompt. Recovery publishes the session waiting for input, keeps the
// streamed text, cancels the request, and dispatches the prompt once.
func TestRecoveryRepairsWhatACrashLeft(t *testing.T) {
	ctx := context.Background()
	st, task, dir := mustTask(t)
	session, err := st.CreateSession(ctx, task.ID, agent.MockProfileID)
	require.NoError(t, err)
	for _, step := range [][2]shared.SessionState{
		{shared.SessionCreated, shared.SessionStarting}, {shared.SessionStarting, shared.SessionWaitingForInput},
		{shared.SessionWaitingForInput, shared.SessionRunning},
	} {
		_, err := st.Transition(ctx, session.ID, []shared.SessionState{step[0]}, step[1], "", store.Activity{})
		require.NoError(t, err)
	}
	half, err := st.AppendMessage(ctx, store.NewMessage{SessionID: session.ID, Type: shared.MessageAgent, Content: "half ", Status: shared.MessageStreaming})
	require.NoError(t, err)
	require.NoError(t, st.AppendText(ctx, half.ID, len("half "), "an answer"))
	_, err = st.AppendMessage(ctx, store.NewMessage{SessionID: session.ID, Type: shared.MessagePermissionRequest, Status: shared.MessagePending, PendingID: "p"})
	require.NoError(t, err)
	prompt, _, err := st.AddUserMessage(ctx, session.ID, "c-1", "resume me")
	require.NoError(t, err)
	_, claimed, err := st.ClaimDispatch(ctx, prompt.ID, "dead-process")
	require.NoError(t, err)
	require.True(t, claimed)

	pub := &recorder{}
	mock := mocktest.Profile()
	m, err := New(Config{
		Store:      st,
		Profile:    func(context.Context, string) (agent.Profile, error) { return mock, nil },
		ScratchDir: filepath.Join(dir, "scratch"),
	})
	require.NoError(t, err)
	t.Cleanup(m.Close)
	require.NoError(t, m.Start(ctx, pub))
	require.True(t, pub.has(session.ID+" "+shared.NotifySessionStateChanged+" "+string(shared.SessionWaitingForInput)))

	got, err := st.GetMessage(ctx, session.ID, half.ID)
	require.NoError(t, err)
	require.Equal(t, "half an answer", got.Content)
	require.Equal(t, shared.MessageFailed, got.Status, "a stream cut off by the crash reads as such")
	pending, err := st.PendingRequests(ctx, session.ID)
	require.NoError(t, err)
	require.Empty(t, pending)

	// The released prompt runs once, in a fresh agent.
	require.Eventually(t, func() bool {
		return pub.has(session.ID + " " + shared.NotifySessionTurnSettled + " end_turn")
	}, 30*time.Second, 20*time.Millisecond)
	msgs, _, err := st.ListMessages(ctx, session.ID, 0, 0)
	require.NoError(t, err)
	var users, echoes int
	for _, msg := range msgs {
		if msg.Type == shared.MessageUser && msg.Content == "resume me" {
			users++
		}
		if msg.Type == shared.MessageAgent && msg.Content == "resume me" {
			echoes++
		}
	}
	require.Equal(t, 1, users)
	require.Equal(t, 1, echoes)
}
