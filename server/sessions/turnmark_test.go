package sessions

import (
	"context"
	"encoding/json"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/mockagent/mocktest"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/server/store/storetest"
	"github.com/herd-dev/herd/shared"
)

// markDatabases lists the databases the turn mark tests run on.
var markDatabases = []string{"sqlite", "postgres"}

// openStore opens a store on a fresh database of db: SQLite in a temporary
// directory, or PostgreSQL on the tests' shared server.
func openStore(t *testing.T, db string) *store.Store {
	t.Helper()
	d := storetest.NewDatabase(t, db)
	st, err := store.Open(context.Background(), store.Config{DataDir: d.DataDir, URL: d.URL})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st
}

// turnMarks returns the turn marks of a transcript.
func turnMarks(msgs []shared.Message) []shared.Message {
	var marks []shared.Message
	for _, m := range msgs {
		if m.Metadata != nil && m.Metadata.Turn != nil {
			marks = append(marks, m)
		}
	}
	return marks
}

// requireOneMark asserts that the transcript holds exactly one turn mark,
// a complete status message naming outcome and prompt, stored after every
// other message of the turn, and returns it.
func requireOneMark(t *testing.T, msgs []shared.Message, outcome shared.TurnOutcome, prompt string) shared.Message {
	t.Helper()
	marks := turnMarks(msgs)
	require.Len(t, marks, 1, "one mark for the turn: %+v", msgs)
	mark := marks[0]
	assert.Equal(t, shared.MessageStatus, mark.Type)
	assert.Equal(t, shared.MessageComplete, mark.Status)
	assert.Equal(t, shared.TurnMark{Outcome: outcome, PromptMessageID: prompt}, *mark.Metadata.Turn)
	for _, m := range msgs {
		if m.ID != mark.ID {
			assert.Less(t, m.Seq, mark.Seq, "the mark follows everything the turn stored: %+v", m)
		}
	}
	return mark
}

// waitSettledAs waits until the session's turn settled with outcome.
func (rig *sessionRig) waitSettledAs(t *testing.T, outcome shared.TurnOutcome) {
	t.Helper()
	require.Eventually(t, func() bool {
		return rig.pub.has(rig.session.ID + " " + shared.NotifySessionTurnSettled + " " + string(outcome))
	}, 60*time.Second, 10*time.Millisecond, "the turn never settled %s", outcome)
}

// Cancelling a running turn marks it cancelled, naming its prompt, in a
// status message that is stored and published; the session then waits
// for input.
func TestCancellingARunningTurnMarksItCancelled(t *testing.T) {
	for _, db := range markDatabases {
		t.Run(db, func(t *testing.T) {
			ctx := context.Background()
			rig := newRigOn(t, outage{st: openStore(t, db)})
			sent, err := rig.m.AddMessage(ctx, rig.session.ID, "c-long", "/scenario stream 100000 1")
			require.NoError(t, err)
			rig.waitStreaming(t)

			_, err = rig.m.Cancel(ctx, rig.session.ID)
			require.NoError(t, err)
			rig.waitSettledAs(t, shared.TurnCancelled)
			rig.waitState(t, shared.SessionWaitingForInput)

			mark := requireOneMark(t, rig.transcript(t), shared.TurnCancelled, sent.Message.ID)
			assert.Equal(t, "Cancelled: you stopped this turn.", mark.Content)
			assert.True(t, rig.pub.has(rig.session.ID+" "+shared.NotifySessionMessageAdded+" "+mark.ID), "the mark is published")
			wire, err := json.Marshal(mark.Metadata)
			require.NoError(t, err)
			assert.JSONEq(t, `{"turn":{"outcome":"cancelled","prompt_message_id":"`+sent.Message.ID+`"}}`, string(wire))
		})
	}
}

// A turn that ends normally leaves no mark.
func TestANormalTurnLeavesNoMark(t *testing.T) {
	rig := newSessionRig(t, "sqlite")
	_, err := rig.m.AddMessage(context.Background(), rig.session.ID, "c-hello", "hello")
	require.NoError(t, err)
	rig.waitSettledAs(t, shared.TurnEndTurn)
	rig.waitState(t, shared.SessionWaitingForInput)
	msgs := rig.transcript(t)
	require.Len(t, msgs, 2, "the prompt and its answer: %+v", msgs)
	assert.Empty(t, turnMarks(msgs))
}

// An agent that dies in the middle of a turn, whether it exits or is
// killed, marks the turn failed with the reason, after what it had said;
// the session fails.
func TestAnAgentThatDiesMidTurnMarksTheTurnFailed(t *testing.T) {
	tests := []struct {
		name   string
		prompt string
		kill   bool
	}{
		{"it exits", "/scenario crash", false},
		{"it is killed", "/scenario stream 100000 1", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			rig := newSessionRig(t, "sqlite")
			sent, err := rig.m.AddMessage(ctx, rig.session.ID, "c-die", tt.prompt)
			require.NoError(t, err)
			if tt.kill {
				rig.waitStreaming(t)
				r, _, err := rig.m.runOf(ctx, rig.session.ID)
				require.NoError(t, err)
				exec := r.execution()
				require.NotNil(t, exec)
				require.NoError(t, syscall.Kill(exec.Pid(), syscall.SIGKILL))
			}
			rig.waitSettledAs(t, shared.TurnFailed)
			rig.waitState(t, shared.SessionFailed)

			msgs := rig.transcript(t)
			mark := requireOneMark(t, msgs, shared.TurnFailed, sent.Message.ID)
			assert.Contains(t, mark.Content, "The agent stopped during this turn: ")
			assert.Greater(t, len(mark.Content), len("The agent stopped during this turn: "), "with the reason")
			var answers int
			for _, m := range msgs {
				if m.Type == shared.MessageAgent {
					answers++
					assert.Equal(t, shared.MessageFailed, m.Status)
				}
			}
			assert.Equal(t, 1, answers, "the answer the agent had begun")
		})
	}
}

// An error the agent reports ends the turn: the error is stored as the
// agent said it, the turn is marked failed, and the session waits for
// input.
func TestAnAgentErrorMarksTheTurnFailed(t *testing.T) {
	ctx := context.Background()
	rig := newSessionRig(t, "sqlite")
	sent, err := rig.m.AddMessage(ctx, rig.session.ID, "c-err", "/scenario error")
	require.NoError(t, err)
	rig.waitSettledAs(t, shared.TurnFailed)
	rig.waitState(t, shared.SessionWaitingForInput)

	msgs := rig.transcript(t)
	mark := requireOneMark(t, msgs, shared.TurnFailed, sent.Message.ID)
	assert.Contains(t, mark.Content, "The agent ended this turn with an error: ")
	assert.Contains(t, mark.Content, "scripted recoverable error")
	var errs int
	for _, m := range msgs {
		if m.Type == shared.MessageError {
			errs++
		}
	}
	assert.Equal(t, 1, errs, "the agent's error is stored too")
}

// Archiving a task cuts off its running turn: the turn is marked cancelled
// with the reason.
func TestArchivingATaskMarksItsRunningTurnCancelled(t *testing.T) {
	ctx := context.Background()
	rig := newSessionRig(t, "sqlite")
	sent, err := rig.m.AddMessage(ctx, rig.session.ID, "c-long", "/scenario stream 100000 1")
	require.NoError(t, err)
	rig.waitStreaming(t)

	require.NoError(t, rig.m.EndTask(ctx, rig.session.TaskID))
	rig.waitSettledAs(t, shared.TurnCancelled)
	mark := requireOneMark(t, rig.transcript(t), shared.TurnCancelled, sent.Message.ID)
	assert.Equal(t, "Cancelled: the task was archived while the agent was working on this turn.", mark.Content)
	assert.Equal(t, shared.SessionCompleted, rig.storedSession(t).State)
}

// A turn the agent ends itself is marked unless it ended normally, with
// the outcome session.turn.settled says and words for people.
func TestATurnTheAgentEndsIsMarkedUnlessItEndedNormally(t *testing.T) {
	tests := []struct {
		stop    agent.StopReason
		err     error
		outcome shared.TurnOutcome
		notice  string
	}{
		{agent.StopEndTurn, nil, shared.TurnEndTurn, ""},
		{agent.StopCancelled, nil, shared.TurnCancelled, "Cancelled: you stopped this turn."},
		{agent.StopMaxTokens, nil, shared.TurnMaxTokens, "Stopped: the agent hit its output limit during this turn."},
		{agent.StopMaxTurnRequests, nil, shared.TurnMaxTurnRequests, "Stopped: the agent reached its limit of model requests during this turn."},
		{agent.StopRefusal, nil, shared.TurnRefusal, "Stopped: the agent refused to continue this turn."},
		{"", &agent.AgentError{Code: -32603, Message: "Internal error"}, shared.TurnFailed, "The agent ended this turn with an error: "},
	}
	for _, tt := range tests {
		t.Run(string(tt.outcome), func(t *testing.T) {
			outcome, notice, marked := settledMark(tt.stop, tt.err)
			assert.Equal(t, tt.outcome, outcome)
			assert.Equal(t, settleOutcome(tt.stop, tt.err), outcome, "the outcome session.turn.settled says")
			assert.Equal(t, tt.outcome != shared.TurnEndTurn, marked)
			if tt.err != nil {
				assert.Contains(t, notice, tt.notice)
				assert.Contains(t, notice, tt.err.Error())
			} else {
				assert.Equal(t, tt.notice, notice)
			}
		})
	}
}

// runningSession stores a session of a new task, RUNNING as a previous
// process left it.
func runningSession(t *testing.T, st *store.Store) shared.Session {
	t.Helper()
	ctx := context.Background()
	ws, err := st.CreateWorkspace(ctx, "w")
	require.NoError(t, err)
	task, err := st.CreateTask(ctx, shared.TaskCreateRequest{WorkspaceID: ws.ID, Title: "t"})
	require.NoError(t, err)
	session, err := st.CreateSession(ctx, task.ID, agent.MockProfileID)
	require.NoError(t, err)
	for _, step := range [][2]shared.SessionState{
		{shared.SessionCreated, shared.SessionStarting}, {shared.SessionStarting, shared.SessionWaitingForInput},
		{shared.SessionWaitingForInput, shared.SessionRunning},
	} {
		_, err := st.Transition(ctx, session.ID, []shared.SessionState{step[0]}, step[1], "", store.Activity{})
		require.NoError(t, err)
	}
	return session
}

// sendPrompt stores a prompt as a turn sends it: claimed, then sent when
// sent is set.
func sendPrompt(t *testing.T, st *store.Store, sessionID, clientID, content string, sent bool) shared.Message {
	t.Helper()
	ctx := context.Background()
	msg, created, claimed, err := st.AddAndClaimUserMessage(ctx, sessionID, clientID, content, "dead-process")
	require.NoError(t, err)
	require.True(t, created && claimed)
	if sent {
		require.NoError(t, st.MarkSent(ctx, msg.ID, "dead-process"))
	}
	return msg
}

// recoverWith starts a manager with the mock agent over st, so that it
// recovers what an earlier process left, and returns it with what it
// published.
func recoverWith(t *testing.T, st *store.Store) (*Manager, *recorder) {
	t.Helper()
	pub := &recorder{}
	mock := mocktest.Profile()
	m, err := New(Config{
		Store:      st,
		Profile:    func(context.Context, string) (agent.Profile, error) { return mock, nil },
		ScratchDir: filepath.Join(t.TempDir(), "scratch"),
	})
	require.NoError(t, err)
	t.Cleanup(m.Close)
	require.NoError(t, m.Start(context.Background(), pub))
	return m, pub
}

// A turn that herd stopped while it ran (herd found its session RUNNING at
// start-up) is marked interrupted, after what the agent had said. A crash
// during that recovery, after the mark and before the session settled,
// leaves the session RUNNING again; the next start keeps the one mark.
func TestRecoveryMarksTheTurnItFoundRunningInterruptedOnce(t *testing.T) {
	for _, db := range markDatabases {
		t.Run(db, func(t *testing.T) {
			ctx := context.Background()
			st := openStore(t, db)
			session := runningSession(t, st)
			prompt := sendPrompt(t, st, session.ID, "c-1", "work on it", true)
			half, err := st.AppendMessage(ctx, store.NewMessage{SessionID: session.ID, Type: shared.MessageAgent, Content: "half ", Status: shared.MessageStreaming})
			require.NoError(t, err)

			m, pub := recoverWith(t, st)
			msgs, _, err := st.ListMessages(ctx, session.ID, 0, 0)
			require.NoError(t, err)
			mark := requireOneMark(t, msgs, shared.TurnInterrupted, prompt.ID)
			assert.Equal(t, "Interrupted: herd stopped while the agent was working on this turn.", mark.Content)
			assert.True(t, pub.has(session.ID+" "+shared.NotifySessionMessageAdded+" "+mark.ID), "the mark is published")
			got, err := st.GetMessage(ctx, session.ID, half.ID)
			require.NoError(t, err)
			assert.Equal(t, shared.MessageFailed, got.Status)
			stored, err := st.GetSession(ctx, session.ID)
			require.NoError(t, err)
			assert.Equal(t, shared.SessionWaitingForInput, stored.State)

			// A crash between the mark and the session's settling.
			m.Close()
			_, err = st.Transition(ctx, session.ID, states(shared.SessionWaitingForInput), shared.SessionRunning, "", store.Activity{})
			require.NoError(t, err)
			recoverWith(t, st)
			msgs, _, err = st.ListMessages(ctx, session.ID, 0, 0)
			require.NoError(t, err)
			again := requireOneMark(t, msgs, shared.TurnInterrupted, prompt.ID)
			assert.Equal(t, mark.ID, again.ID)
			stored, err = st.GetSession(ctx, session.ID)
			require.NoError(t, err)
			assert.Equal(t, shared.SessionWaitingForInput, stored.State)
		})
	}
}

// A session left RUNNING by a turn that claimed its prompt and stopped
// before sending it has no turn to mark: not that prompt's, which never
// ran (it runs now, once), nor the earlier turn's, which had ended.
func TestRecoveryMarksNoTurnWhosePromptWasNeverSent(t *testing.T) {
	for _, db := range markDatabases {
		t.Run(db, func(t *testing.T) {
			ctx := context.Background()
			st := openStore(t, db)
			session := runningSession(t, st)
			sendPrompt(t, st, session.ID, "c-1", "done before", true)
			_, err := st.AppendMessage(ctx, store.NewMessage{SessionID: session.ID, Type: shared.MessageAgent, Content: "done before", Status: shared.MessageComplete})
			require.NoError(t, err)
			sendPrompt(t, st, session.ID, "c-2", "never sent", false)

			_, pub := recoverWith(t, st)
			require.Eventually(t, func() bool {
				return pub.has(session.ID + " " + shared.NotifySessionTurnSettled + " end_turn")
			}, 30*time.Second, 10*time.Millisecond, "the unsent prompt runs")
			msgs, _, err := st.ListMessages(ctx, session.ID, 0, 0)
			require.NoError(t, err)
			assert.Empty(t, turnMarks(msgs), "%+v", msgs)
			var echoes int
			for _, msg := range msgs {
				if msg.Type == shared.MessageAgent && msg.Content == "never sent" {
					echoes++
				}
			}
			assert.Equal(t, 1, echoes)
		})
	}
}
