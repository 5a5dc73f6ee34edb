package sessions

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/coalescer"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// storedSession reads the session as stored.
func (rig *sessionRig) storedSession(t *testing.T) shared.Session {
	t.Helper()
	s, err := rig.st.GetSession(context.Background(), rig.session.ID)
	require.NoError(t, err)
	return s
}

// An agent that crashes mid-answer leaves nothing streaming: its partial
// message ends failed with the text it had, and the session fails with
// the agent's exit, without a restart of herd.
func TestAgentCrashFinishesItsPartialMessage(t *testing.T) {
	rig := newSessionRig(t, "sqlite")
	_, err := rig.m.AddMessage(context.Background(), rig.session.ID, "c-crash", "/scenario crash")
	require.NoError(t, err)
	rig.waitState(t, shared.SessionFailed)
	require.Eventually(t, func() bool {
		ids, err := rig.st.StreamingMessageIDs(context.Background())
		return err == nil && len(ids) == 0
	}, 10*time.Second, 10*time.Millisecond, "no message keeps streaming after its agent died")
	var partial []shared.Message
	for _, m := range rig.transcript(t) {
		if m.Type == shared.MessageAgent {
			partial = append(partial, m)
		}
	}
	require.Len(t, partial, 1)
	assert.Equal(t, "0 1 2 ", partial[0].Content)
	assert.Equal(t, shared.MessageFailed, partial[0].Status, "a message cut off by the crash reads as such")
	assert.Contains(t, rig.storedSession(t).ErrorMessage, "3", "the agent's exit status")
}

// waitSubagents waits until the stored session counts n live subagents.
func (rig *sessionRig) waitSubagents(t *testing.T, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		s, err := rig.st.GetSession(context.Background(), rig.session.ID)
		return err == nil && s.ActiveSubagentCount == n
	}, 20*time.Second, 10*time.Millisecond, "the session never counted %d subagents", n)
}

// Cancelling a session retires its background work: subagents that the
// agent stops without reporting each end no longer count.
func TestCancelRetiresBackgroundWork(t *testing.T) {
	ctx := context.Background()
	rig := newSessionRig(t, "sqlite")
	_, err := rig.m.AddMessage(ctx, rig.session.ID, "c-bg", "/scenario background 2 60000")
	require.NoError(t, err)
	rig.waitSubagents(t, 2)

	_, err = rig.m.Cancel(ctx, rig.session.ID)
	require.NoError(t, err)
	rig.waitSubagents(t, 0)
	assert.True(t, live(rig.storedSession(t).State), "the session itself goes on")
}

// Archiving a task whose session has live subagents ends the session with
// none: an ended session shows no activity, whichever of the transition
// and the agent's teardown lands first.
func TestEndedSessionKeepsNoSubagents(t *testing.T) {
	ctx := context.Background()
	rig := newSessionRig(t, "sqlite")
	_, err := rig.m.AddMessage(ctx, rig.session.ID, "c-bg", "/scenario background 2 60000")
	require.NoError(t, err)
	rig.waitSubagents(t, 2)

	require.NoError(t, rig.m.EndTask(ctx, rig.session.TaskID))
	s := rig.storedSession(t)
	assert.Equal(t, shared.SessionCompleted, s.State)
	assert.Zero(t, s.ActiveSubagentCount)
	assert.Empty(t, s.ForegroundActivity)
}

// The queue of a session that does not exist is not an empty queue.
func TestQueueOfAnUnknownSessionIsNotFound(t *testing.T) {
	rig := newSessionRig(t, "sqlite")
	_, err := rig.m.Queue(context.Background(), "no-such-session")
	assert.Equal(t, shared.CodeNotFound, shared.ErrorCode(err), "%v", err)
	q, err := rig.m.Queue(context.Background(), rig.session.ID)
	require.NoError(t, err)
	assert.Empty(t, q)
}

// Agent text holding a NUL character is stored with U+FFFD in its place,
// the same on every database (PostgreSQL's text cannot hold NUL): the
// agent's words are not ours to refuse.
func TestAgentNULIsStoredAsReplacementCharacter(t *testing.T) {
	for db := range outages {
		t.Run(db, func(t *testing.T) {
			rig := newSessionRig(t, db)
			r, _, err := rig.m.runOf(context.Background(), rig.session.ID)
			require.NoError(t, err)
			s := newSink(r)
			s.handle(coalescer.Output{Op: coalescer.OpOpen, Key: "k", Kind: coalescer.KindAgent, Text: "a\x00b"})
			s.handle(coalescer.Output{Op: coalescer.OpAppend, Key: "k", Kind: coalescer.KindAgent, Text: "\x00c"})
			s.handle(coalescer.Output{Op: coalescer.OpBarrier, Event: agent.Event{Kind: agent.EventToolCall,
				Tool: &agent.ToolCall{ID: "t1", Title: "Read \x00", Status: agent.ToolCompleted}}})
			var got []string
			for _, m := range rig.transcript(t) {
				got = append(got, m.Content)
			}
			assert.Equal(t, []string{"a\uFFFDb\uFFFDc", "Read \uFFFD"}, got)
		})
	}
}

// A session left RUNNING with no turn behind it (its turn's end could not
// be stored) is settled by session.cancel, without a restart, and its
// queue runs.
func TestCancelSettlesARunningSessionWithoutATurn(t *testing.T) {
	ctx := context.Background()
	rig := newSessionRig(t, "sqlite")
	stuck, err := rig.st.Transition(ctx, rig.session.ID, states(shared.SessionWaitingForInput), shared.SessionRunning, "", store.Activity{})
	require.NoError(t, err)
	r, _, err := rig.m.runOf(ctx, rig.session.ID)
	require.NoError(t, err)
	r.remember(stuck) // as a turn's end that was never stored leaves it
	queued, err := rig.m.AddMessage(ctx, rig.session.ID, "c-stuck", "behind the stuck turn")
	require.NoError(t, err)
	require.Equal(t, shared.OutcomeQueued, queued.Outcome)

	_, err = rig.m.Cancel(ctx, rig.session.ID)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return rig.settled() == 1 }, 20*time.Second, 10*time.Millisecond, "the queued prompt runs")
	rig.waitState(t, shared.SessionWaitingForInput)
}

// Closing the manager (herd stopping gracefully) in the middle of a stream
// cuts the message off as cancelled, never complete, and does not fail the
// session: its agent did not die, herd stopped it, and start-up recovery
// settles the session.
func TestStoppingMidStreamCancelsTheMessageAndKeepsTheSession(t *testing.T) {
	ctx := context.Background()
	rig := newSessionRig(t, "sqlite")
	_, err := rig.m.AddMessage(ctx, rig.session.ID, "c-stream", "/scenario stream 5000 1")
	require.NoError(t, err)
	rig.waitStreaming(t)

	rig.m.Close()
	var answers []shared.Message
	for _, m := range rig.transcript(t) {
		if m.Type == shared.MessageAgent {
			answers = append(answers, m)
		}
	}
	require.Len(t, answers, 1)
	assert.Equal(t, shared.MessageCancelled, answers[0].Status, "cut off by the stop: %d bytes", len(answers[0].Content))
	assert.Less(t, len(answers[0].Content), len(numbers(5000)))
	assert.Equal(t, shared.SessionRunning, rig.storedSession(t).State, "left for recovery, not failed")
}
