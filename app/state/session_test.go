package state

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

var st0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func msg(id string, seq int64, content string, status shared.MessageState, at int) shared.Message {
	return shared.Message{
		ID: id, SessionID: "s1", Seq: seq, Type: shared.MessageAgent, Content: content, Status: status,
		UpdatedAt: st0.Add(time.Duration(at) * time.Millisecond),
	}
}

// note builds a session notification; like the server's, a map payload
// names its session (s1 unless given).
func note(action string, seq uint64, payload any) shared.Envelope {
	if m, ok := payload.(map[string]any); ok {
		if _, named := m["session_id"]; !named {
			m["session_id"] = "s1"
		}
	}
	raw, _ := json.Marshal(payload)
	return shared.Envelope{Type: shared.TypeNotification, Action: action, Seq: seq, Payload: raw}
}

func added(seq uint64, m shared.Message) shared.Envelope {
	return note(shared.NotifySessionMessageAdded, seq, m)
}

func updated(seq uint64, m shared.Message) shared.Envelope {
	return note(shared.NotifySessionMessageUpdated, seq, m)
}

func loaded(t *testing.T, msgs ...shared.Message) *SessionDetail {
	t.Helper()
	d := NewSessionDetail("s1")
	d.Load(shared.SessionSnapshot{Session: shared.Session{ID: "s1", State: shared.SessionWaitingForInput}, Messages: msgs})
	require.True(t, d.Loaded())
	return d
}

func contents(d *SessionDetail) []string {
	var out []string
	for _, m := range d.Messages() {
		out = append(out, m.ID+":"+m.Content+":"+string(m.Status))
	}
	return out
}

func TestSessionSnapshotThenNotificationsInSeqOrder(t *testing.T) {
	d := loaded(t, msg("m2", 2, "b", shared.MessageComplete, 0), msg("m1", 1, "a", shared.MessageComplete, 0))
	assert.False(t, d.Push(added(1, msg("m3", 3, "c", shared.MessageStreaming, 1))))
	assert.False(t, d.Push(note(shared.NotifySessionStateChanged, 2, map[string]any{"state": "RUNNING", "foreground_activity": "generating"})))
	assert.False(t, d.Push(note(shared.NotifySessionQueueChanged, 3, map[string]any{"queue": []shared.QueuedPrompt{{ID: "q1", Content: "next"}}})))
	assert.Equal(t, []string{"m1:a:complete", "m2:b:complete", "m3:c:streaming"}, contents(d))
	assert.Equal(t, shared.SessionRunning, d.Session().State)
	assert.Equal(t, shared.ActivityGenerating, d.Session().ForegroundActivity)
	require.Len(t, d.Queue(), 1)
	assert.False(t, d.Resync())
}

func TestSessionGapNeedsResync(t *testing.T) {
	tests := []struct {
		name string
		env  shared.Envelope
		gap  bool
	}{
		{"next seq is accepted", added(1, msg("m1", 1, "a", shared.MessageComplete, 0)), false},
		{"skipped seq is a gap", added(2, msg("m1", 1, "a", shared.MessageComplete, 0)), true},
		{"repeated seq on a semantic frame is a gap", note(shared.NotifySessionTurnSettled, 0, map[string]any{}), true},
		{"intermediate update repeats the seq", updated(0, msg("m0", 0, "x", shared.MessageStreaming, 1)), false},
		{"final update with a repeated seq is a gap", updated(0, msg("m0", 0, "x", shared.MessageComplete, 1)), true},
		{"streaming update may be semantic", updated(1, msg("m0", 0, "x", shared.MessageStreaming, 1)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := loaded(t, msg("m0", 0, "", shared.MessageStreaming, 0))
			assert.Equal(t, tt.gap, d.Push(tt.env))
			assert.Equal(t, tt.gap, d.Resync())
		})
	}
}

func TestSessionResyncStopsApplyingUntilLoad(t *testing.T) {
	d := loaded(t)
	require.True(t, d.Push(added(5, msg("m1", 1, "a", shared.MessageComplete, 0))))
	assert.True(t, d.Push(added(6, msg("m2", 2, "b", shared.MessageComplete, 0))))
	assert.Empty(t, d.Messages())

	d.Reset()
	d.Load(shared.SessionSnapshot{Session: shared.Session{ID: "s1"}, Messages: []shared.Message{msg("m1", 1, "a", shared.MessageComplete, 0)}})
	assert.False(t, d.Resync())
	assert.False(t, d.Push(added(1, msg("m2", 2, "b", shared.MessageComplete, 0))))
	assert.Equal(t, []string{"m1:a:complete", "m2:b:complete"}, contents(d))
}

func TestSessionNotificationsBeforeSnapshotAreAppliedAfterIt(t *testing.T) {
	d := NewSessionDetail("s1")
	d.Push(added(1, msg("m2", 2, "b", shared.MessageStreaming, 1)))
	d.Push(updated(1, msg("m2", 2, "b c", shared.MessageStreaming, 1)))
	d.Push(updated(2, msg("m2", 2, "b c d", shared.MessageComplete, 2)))
	assert.Empty(t, d.Messages(), "nothing shows before the snapshot")

	// The snapshot already holds m2's first bytes: the join came first.
	d.Load(shared.SessionSnapshot{Messages: []shared.Message{
		msg("m1", 1, "a", shared.MessageComplete, 0), msg("m2", 2, "b", shared.MessageStreaming, 1),
	}})
	assert.Equal(t, []string{"m1:a:complete", "m2:b c d:complete"}, contents(d))
	assert.False(t, d.Resync())
	assert.False(t, d.Push(note(shared.NotifySessionTurnSettled, 3, map[string]any{"outcome": "end_turn"})))
}

func TestSessionLateIntermediateUpdateNeverOverwritesFinalState(t *testing.T) {
	tests := []struct {
		name string
		late shared.Message
	}{
		{"older updated_at", msg("m1", 1, "0 1", shared.MessageStreaming, 1)},
		{"same updated_at, streaming", msg("m1", 1, "0 1", shared.MessageStreaming, 5)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := loaded(t, msg("m1", 1, "0", shared.MessageStreaming, 0))
			d.Push(updated(1, msg("m1", 1, "0 1 2", shared.MessageComplete, 5)))
			d.Flush()
			d.Push(updated(1, tt.late))
			d.Flush()
			assert.Equal(t, []string{"m1:0 1 2:complete"}, contents(d))
		})
	}
}

// Flush stands in for the animation frame: the test is the frame clock.
func TestSessionBatchingAppliesOneWritePerMessagePerFrame(t *testing.T) {
	d := loaded(t, msg("a", 1, "", shared.MessageStreaming, 0), msg("b", 2, "", shared.MessageStreaming, 0))
	before := d.Writes()
	text := ""
	for i := range 50 {
		text += strconv.Itoa(i) + " "
		d.Push(updated(0, msg("a", 1, text, shared.MessageStreaming, 0)))
		d.Push(updated(0, msg("b", 2, text, shared.MessageStreaming, 0)))
	}
	assert.Equal(t, before, d.Writes(), "nothing is applied between frames")
	assert.True(t, d.Pending())

	assert.Equal(t, 2, d.Flush(), "one write per changed message")
	assert.Equal(t, before+2, d.Writes())
	m, _ := d.Message("a")
	assert.Equal(t, text, m.Content)
	assert.Zero(t, d.Flush(), "an idle frame writes nothing")
}

func TestSessionBarriersFlushTheBatchFirst(t *testing.T) {
	tests := []struct {
		name    string
		barrier shared.Envelope
	}{
		{"message added", added(1, msg("c", 3, "next", shared.MessageComplete, 9))},
		{"message deleted", note(shared.NotifySessionMessageDeleted, 1, map[string]any{"id": "b"})},
		{"turn settled", note(shared.NotifySessionTurnSettled, 1, map[string]any{"outcome": "end_turn"})},
		{"git updated", gitNote(1, repoGit("r1", 1))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := loaded(t, msg("a", 1, "", shared.MessageStreaming, 0), msg("b", 2, "x", shared.MessageComplete, 0))
			d.Push(updated(0, msg("a", 1, "0 1 ", shared.MessageStreaming, 0)))
			d.Push(tt.barrier)
			assert.False(t, d.Pending(), "the barrier flushed the batch")
			m, _ := d.Message("a")
			assert.Equal(t, "0 1 ", m.Content)
		})
	}
}

func TestSessionAppendFromCompletesFromTheNewestCopy(t *testing.T) {
	d := loaded(t, msg("a", 1, "0 ", shared.MessageStreaming, 0))
	part := func(from int, text string) shared.Message {
		m := msg("a", 1, text, shared.MessageStreaming, 0)
		m.AppendFrom = &from
		return m
	}
	d.Push(updated(0, part(2, "1 ")))
	d.Push(updated(0, part(4, "2 ")))
	d.Flush()
	m, _ := d.Message("a")
	assert.Equal(t, "0 1 2 ", m.Content)
	assert.True(t, d.Push(updated(0, part(99, "x"))), "an offset past the known text needs a resync")
}

func TestSessionFinalStateAsADeltaCompletesTheStreamedText(t *testing.T) {
	from := 4
	final := msg("a", 1, "2 ", shared.MessageComplete, 9)
	final.AppendFrom = &from

	d := loaded(t, msg("a", 1, "0 ", shared.MessageStreaming, 0))
	d.Push(updated(0, msg("a", 1, "0 1 ", shared.MessageStreaming, 1)))
	assert.False(t, d.Push(updated(1, final)))
	d.Flush()
	assert.Equal(t, []string{"a:0 1 2 :complete"}, contents(d))

	// A client that holds less than the delta starts from (it reloaded
	// between the frames) fetches the session instead of guessing.
	d = loaded(t, msg("a", 1, "0 ", shared.MessageStreaming, 0))
	assert.True(t, d.Push(updated(1, final)), "a final delta past the known text needs a resync")
}

func TestSessionResubscribeDropsTheOldStreamsLateFrames(t *testing.T) {
	d := loaded(t)
	d.Reset()
	d.Push(added(57, msg("old", 9, "stale", shared.MessageComplete, 0)))
	d.Push(added(1, msg("m2", 2, "b", shared.MessageComplete, 0)))
	d.Load(shared.SessionSnapshot{Messages: []shared.Message{msg("m1", 1, "a", shared.MessageComplete, 0)}})
	assert.False(t, d.Resync())
	assert.Equal(t, []string{"m1:a:complete", "m2:b:complete"}, contents(d))

	d.Reset()
	d.Push(added(58, msg("old", 9, "stale", shared.MessageComplete, 0)))
	d.Load(shared.SessionSnapshot{})
	assert.False(t, d.Resync())
	assert.Empty(t, d.Messages())
}

func TestSessionQueuedPromptLeavesTheQueueWhenItJoinsTheTranscript(t *testing.T) {
	d := loaded(t)
	q := []shared.QueuedPrompt{{ID: "p1", Content: "next"}}
	d.Push(note(shared.NotifySessionQueueChanged, 1, map[string]any{"queue": q}))
	require.Len(t, d.Queue(), 1)

	sent := msg("p1", 5, "next", shared.MessageComplete, 0)
	sent.Type = shared.MessageUser
	d.Push(added(2, sent))
	assert.Empty(t, d.Queue())

	// A listing read before the prompt was sent, arriving after it.
	d.Push(note(shared.NotifySessionQueueChanged, 3, map[string]any{"queue": q}))
	assert.Empty(t, d.Queue())
}

// A session just closed may still send notifications; the detail of
// another session ignores them, seq and all.
func TestSessionIgnoresOtherSessions(t *testing.T) {
	d := loaded(t)
	other := msg("x", 1, "elsewhere", shared.MessageStreaming, 1)
	other.SessionID = "s2"
	assert.False(t, d.Push(added(1, other)))
	assert.False(t, d.Push(updated(1, other)))
	assert.False(t, d.Push(note(shared.NotifySessionTurnSettled, 5, map[string]any{"session_id": "s2", "outcome": "end_turn"})))
	assert.Empty(t, contents(d))
	assert.False(t, d.Push(added(1, msg("m1", 1, "mine", shared.MessageComplete, 1))), "the own stream's seq is untouched")
	assert.Equal(t, []string{"m1:mine:complete"}, contents(d))
}

// stateNote is a session.state_changed or session.activity_changed at rev.
func stateNote(action string, seq uint64, rev int64, st shared.SessionState, act shared.ForegroundActivity, subagents int) shared.Envelope {
	return note(action, seq, shared.SessionStateEvent{
		TaskID: "t1", SessionID: "s1", State: st, ForegroundActivity: act, ActiveSubagentCount: subagents, StateRevision: rev,
	})
}

// sessionAt is session s1 at rev.
func sessionAt(rev int64, st shared.SessionState, act shared.ForegroundActivity, subagents int) shared.Session {
	return shared.Session{ID: "s1", TaskID: "t1", State: st, ForegroundActivity: act, ActiveSubagentCount: subagents, StateRevision: rev}
}

func TestSessionStateEventsApplyOnlyWhenNewer(t *testing.T) {
	tests := []struct {
		name   string
		events []shared.Envelope
		want   shared.Session
	}{
		{
			name: "a newer state event applies",
			events: []shared.Envelope{
				stateNote(shared.NotifySessionStateChanged, 1, 4, shared.SessionRunning, shared.ActivityGenerating, 0),
			},
			want: sessionAt(4, shared.SessionRunning, shared.ActivityGenerating, 0),
		},
		{
			name: "an activity event carries activity and subagents",
			events: []shared.Envelope{
				stateNote(shared.NotifySessionStateChanged, 1, 4, shared.SessionRunning, shared.ActivityGenerating, 0),
				stateNote(shared.NotifySessionActivityChanged, 2, 5, shared.SessionRunning, shared.ActivityBackground, 2),
			},
			want: sessionAt(5, shared.SessionRunning, shared.ActivityBackground, 2),
		},
		{
			name: "an event not newer than the held revision is ignored",
			events: []shared.Envelope{
				stateNote(shared.NotifySessionActivityChanged, 1, 5, shared.SessionRunning, shared.ActivityBackground, 1),
				stateNote(shared.NotifySessionStateChanged, 2, 4, shared.SessionRunning, shared.ActivityGenerating, 0),
				stateNote(shared.NotifySessionStateChanged, 3, 5, shared.SessionFailed, "", 0),
			},
			want: sessionAt(5, shared.SessionRunning, shared.ActivityBackground, 1),
		},
		{
			name: "a settled state event clears the activity it omits",
			events: []shared.Envelope{
				stateNote(shared.NotifySessionActivityChanged, 1, 4, shared.SessionRunning, shared.ActivityBackground, 1),
				stateNote(shared.NotifySessionStateChanged, 2, 5, shared.SessionWaitingForInput, "", 0),
			},
			want: sessionAt(5, shared.SessionWaitingForInput, "", 0),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewSessionDetail("s1")
			d.Load(shared.SessionSnapshot{Session: sessionAt(3, shared.SessionWaitingForInput, "", 0)})
			for _, env := range tt.events {
				require.False(t, d.Push(env))
			}
			assert.Equal(t, tt.want, d.Session())
		})
	}
}

// The header's "context not restored" follows the newest state: set when
// the agent started afresh, cleared once a later start restored it.
func TestSessionStateEventsCarryTheLostContext(t *testing.T) {
	d := NewSessionDetail("s1")
	d.Load(shared.SessionSnapshot{Session: sessionAt(3, shared.SessionWaitingForInput, "", 0)})
	lost := shared.SessionStateEvent{TaskID: "t1", SessionID: "s1", State: shared.SessionWaitingForInput, StateRevision: 4,
		ContextLost: "the agent offers neither session/resume nor session/load"}
	require.False(t, d.Push(note(shared.NotifySessionStateChanged, 1, lost)))
	assert.Equal(t, lost.ContextLost, d.Session().ContextLost)
	stale := lost
	stale.StateRevision, stale.ContextLost = 4, ""
	require.False(t, d.Push(note(shared.NotifySessionStateChanged, 2, stale)))
	assert.Equal(t, lost.ContextLost, d.Session().ContextLost, "an event not newer changes nothing")
	require.False(t, d.Push(stateNote(shared.NotifySessionStateChanged, 3, 5, shared.SessionRunning, shared.ActivityGenerating, 0)))
	assert.Empty(t, d.Session().ContextLost, "restored")
}

func TestSessionRecordReplacesStateAtAnEqualOrNewerRevision(t *testing.T) {
	tests := []struct {
		name   string
		record shared.Session
		want   shared.Session
	}{
		{
			name:   "newer record replaces",
			record: sessionAt(6, shared.SessionRunning, shared.ActivityGenerating, 0),
			want:   sessionAt(6, shared.SessionRunning, shared.ActivityGenerating, 0),
		},
		{
			name:   "equal record replaces, its omitted activity clearing the held one",
			record: sessionAt(5, shared.SessionRunning, "", 0),
			want:   sessionAt(5, shared.SessionRunning, "", 0),
		},
		{
			name:   "older record is ignored",
			record: sessionAt(4, shared.SessionWaitingForInput, "", 0),
			want:   sessionAt(5, shared.SessionRunning, shared.ActivityBackground, 3),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewSessionDetail("s1")
			d.SetSession(sessionAt(5, shared.SessionRunning, shared.ActivityBackground, 3))
			d.SetSession(tt.record)
			assert.Equal(t, tt.want, d.Session())
		})
	}
}

// After a reconnect the server's revisions keep rising; the session
// record outlives the resubscribe, and the snapshot of a session that
// settled meanwhile clears the background it held.
func TestSessionSettledSnapshotClearsStaleBackground(t *testing.T) {
	for _, rev := range []int64{7, 8} {
		t.Run("snapshot at revision "+strconv.FormatInt(rev, 10), func(t *testing.T) {
			d := NewSessionDetail("s1")
			d.Load(shared.SessionSnapshot{Session: sessionAt(6, shared.SessionRunning, shared.ActivityGenerating, 0)})
			require.False(t, d.Push(stateNote(shared.NotifySessionActivityChanged, 1, 7, shared.SessionRunning, shared.ActivityBackground, 2)))
			require.Equal(t, IndicatorBackground, SessionIndicator(d.Session()))

			d.Reset() // the reconnect's resubscribe
			assert.Equal(t, IndicatorBackground, SessionIndicator(d.Session()), "the view keeps the last known state meanwhile")
			d.Load(shared.SessionSnapshot{Session: sessionAt(rev, shared.SessionWaitingForInput, "", 0)})

			assert.Equal(t, sessionAt(rev, shared.SessionWaitingForInput, "", 0), d.Session())
			assert.Equal(t, IndicatorWaiting, SessionIndicator(d.Session()))
		})
	}
}

func TestSessionLiveActivityEventNewerThanASnapshotInFlightWins(t *testing.T) {
	d := NewSessionDetail("s1")
	d.Load(shared.SessionSnapshot{Session: sessionAt(6, shared.SessionRunning, shared.ActivityGenerating, 0)})
	d.Reset() // subscribe sent; the snapshot is read at revision 7

	// The activity event of revision 8 arrives before the snapshot.
	d.Push(stateNote(shared.NotifySessionActivityChanged, 1, 8, shared.SessionRunning, shared.ActivityBackground, 1))
	d.Load(shared.SessionSnapshot{Session: sessionAt(7, shared.SessionRunning, shared.ActivityGenerating, 0)})
	assert.Equal(t, sessionAt(8, shared.SessionRunning, shared.ActivityBackground, 1), d.Session())

	// A session.list answer read before the event changes nothing either.
	d.SetSession(sessionAt(7, shared.SessionRunning, shared.ActivityGenerating, 0))
	assert.Equal(t, sessionAt(8, shared.SessionRunning, shared.ActivityBackground, 1), d.Session())
}

func TestSessionStateEventWithoutRevisionAppliesInArrivalOrder(t *testing.T) {
	d := NewSessionDetail("s1")
	d.Load(shared.SessionSnapshot{Session: sessionAt(3, shared.SessionWaitingForInput, "", 0)})
	require.False(t, d.Push(stateNote(shared.NotifySessionStateChanged, 1, 0, shared.SessionRunning, shared.ActivityGenerating, 0)))
	assert.Equal(t, sessionAt(3, shared.SessionRunning, shared.ActivityGenerating, 0), d.Session(),
		"applied, without moving the revision")
}

// repoGit is repository id observed with adds additions (nil observedAt
// when adds < 0: not observed yet).
func repoGit(id string, adds int) shared.RepositoryGit {
	r := shared.RepositoryGit{RepositoryID: id, Path: "/src/" + id, BaseBranch: "main"}
	if adds >= 0 {
		at := st0
		r.ObservedAt, r.Additions, r.ChangedFiles = &at, adds, 1
	}
	return r
}

func gitNote(seq uint64, repos ...shared.RepositoryGit) shared.Envelope {
	return note(shared.NotifySessionGitUpdated, seq, shared.SessionGitEvent{SessionID: "s1", TaskID: "t1", Repositories: repos})
}

func gitAdds(d *SessionDetail) map[string]int {
	out := make(map[string]int)
	for _, r := range d.Git() {
		out[r.RepositoryID] = r.Additions
	}
	return out
}

func TestSessionGitComesFromTheSnapshot(t *testing.T) {
	d := NewSessionDetail("s1")
	assert.Empty(t, d.Git(), "nothing before the snapshot")
	d.Load(shared.SessionSnapshot{Session: shared.Session{ID: "s1"}, Git: []shared.RepositoryGit{repoGit("r1", 3), repoGit("r2", -1)}})
	require.Len(t, d.Git(), 2)
	assert.Equal(t, "r1", d.Git()[0].RepositoryID, "the server's order is kept")
	assert.Nil(t, d.Git()[1].ObservedAt, "a repository not observed yet stays unobserved")
}

func TestSessionGitUpdateReplacesEveryRepository(t *testing.T) {
	d := NewSessionDetail("s1")
	d.Load(shared.SessionSnapshot{Git: []shared.RepositoryGit{repoGit("r1", 3), repoGit("r2", 5)}})

	require.False(t, d.Push(gitNote(1, repoGit("r1", 7))))
	assert.Equal(t, map[string]int{"r1": 7}, gitAdds(d), "a repository the update omits is gone")

	require.False(t, d.Push(gitNote(2)))
	assert.Empty(t, d.Git())
}

func TestSessionGitUpdateBeforeTheSnapshotIsAppliedAfterIt(t *testing.T) {
	d := NewSessionDetail("s1")
	assert.False(t, d.Push(gitNote(1, repoGit("r1", 9))))
	assert.Empty(t, d.Git(), "nothing shows before the snapshot")

	d.Load(shared.SessionSnapshot{Git: []shared.RepositoryGit{repoGit("r1", 3)}})
	assert.Equal(t, map[string]int{"r1": 9}, gitAdds(d))
	assert.False(t, d.Push(note(shared.NotifySessionTurnSettled, 2, map[string]any{"outcome": "end_turn"})), "the update took its seq")
}

func TestSessionGitUpdateAfterAGapNeedsResync(t *testing.T) {
	d := NewSessionDetail("s1")
	d.Load(shared.SessionSnapshot{Git: []shared.RepositoryGit{repoGit("r1", 3)}})
	assert.True(t, d.Push(gitNote(2, repoGit("r1", 9))))
	assert.True(t, d.Resync())
	assert.Equal(t, map[string]int{"r1": 3}, gitAdds(d), "nothing is applied after a gap")

	// Until the new snapshot the view keeps the last known observation.
	d.Reset()
	assert.Equal(t, map[string]int{"r1": 3}, gitAdds(d))
	d.Load(shared.SessionSnapshot{Git: []shared.RepositoryGit{repoGit("r1", 4)}})
	assert.False(t, d.Resync())
	assert.Equal(t, map[string]int{"r1": 4}, gitAdds(d))
}

func TestSessionGitUpdateOfAnotherSessionIsIgnored(t *testing.T) {
	d := NewSessionDetail("s1")
	d.Load(shared.SessionSnapshot{Git: []shared.RepositoryGit{repoGit("r1", 3)}})
	other := note(shared.NotifySessionGitUpdated, 1, shared.SessionGitEvent{SessionID: "s2", Repositories: []shared.RepositoryGit{repoGit("r9", 1)}})
	assert.False(t, d.Push(other))
	assert.Equal(t, map[string]int{"r1": 3}, gitAdds(d))
	assert.False(t, d.Push(gitNote(1, repoGit("r1", 5))), "the own stream's seq is untouched")
}

func TestEarlierMessagesJoinTheTranscriptBelowTheSnapshot(t *testing.T) {
	d := NewSessionDetail("s1")
	msg := func(id string, seq int64, content string) shared.Message {
		return shared.Message{ID: id, SessionID: "s1", Seq: seq, Type: shared.MessageAgent, Content: content,
			Status: shared.MessageComplete, UpdatedAt: time.Unix(seq, 0)}
	}
	d.Load(shared.SessionSnapshot{Session: shared.Session{ID: "s1"}, Messages: []shared.Message{msg("m3", 3, "three"), msg("m4", 4, "four")}})
	require.True(t, d.HasEarlier(), "the oldest held is seq 3: the server has older ones")
	require.EqualValues(t, 3, d.OldestSeq())

	stale := msg("m3", 3, "stale")
	stale.UpdatedAt = time.Unix(1, 0)
	d.Earlier([]shared.Message{msg("m1", 1, "one"), msg("m2", 2, "two"), stale}, false)
	var texts []string
	for _, m := range d.Messages() {
		texts = append(texts, m.Content)
	}
	assert.Equal(t, []string{"one", "two", "three", "four"}, texts, "in seq order, and an older copy never undoes a newer one")
	assert.False(t, d.HasEarlier())

	d2 := NewSessionDetail("s2")
	d2.Load(shared.SessionSnapshot{Session: shared.Session{ID: "s2"}, Messages: []shared.Message{{ID: "x", SessionID: "s2", Seq: 1}}})
	assert.False(t, d2.HasEarlier(), "a transcript that starts at seq 1 is whole")
}

func TestTheLowestChangedSeqIsReportedOnceTaken(t *testing.T) {
	d := NewSessionDetail("s1")
	msg := func(id string, seq int64, content string) shared.Message {
		return shared.Message{ID: id, SessionID: "s1", Seq: seq, Type: shared.MessageAgent, Content: content,
			Status: shared.MessageComplete, UpdatedAt: time.Unix(seq, 0)}
	}
	d.Load(shared.SessionSnapshot{Session: shared.Session{ID: "s1"}, Messages: []shared.Message{msg("a", 1, "a"), msg("b", 2, "b"), msg("c", 3, "c")}})
	assert.EqualValues(t, 1, d.TakeLowestChanged(), "a load changes everything")
	assert.Zero(t, d.TakeLowestChanged(), "taken: nothing changed since")

	newer := msg("c", 3, "c2")
	newer.UpdatedAt = time.Unix(10, 0)
	require.False(t, d.Push(note(shared.NotifySessionMessageAdded, 1, msg("d", 4, "d"))))
	require.False(t, d.Push(note(shared.NotifySessionMessageAdded, 2, newer)))
	assert.EqualValues(t, 3, d.TakeLowestChanged(), "the lowest of the messages written since")

	require.False(t, d.Push(note(shared.NotifySessionMessageDeleted, 3, map[string]any{"id": "a", "message_id": "a"})))
	assert.EqualValues(t, 1, d.TakeLowestChanged(), "a deletion counts at the deleted message's seq")
}

func TestSessionToolOutputDeltaCompletesEachPart(t *testing.T) {
	tool := func(status shared.MessageState, at int, parts ...shared.ToolContent) shared.Message {
		m := msg("t", 1, "Run", status, at)
		m.Type = shared.MessageToolCall
		m.Metadata = &shared.MessageMetadata{Content: parts}
		return m
	}
	from := func(n int) *int { return &n }
	d := loaded(t, tool(shared.MessageStreaming, 0,
		shared.ToolContent{Type: shared.ToolContentText, Body: "a\n"},
		shared.ToolContent{Type: shared.ToolContentDiff, Body: "@@ -0,0 +1,1 @@\n+x\n"}))
	d.Push(updated(0, tool(shared.MessageStreaming, 1,
		shared.ToolContent{Type: shared.ToolContentText, Body: "b\n", AppendFrom: from(2), Size: 4},
		shared.ToolContent{Type: shared.ToolContentDiff, Body: "@@ -0,0 +1,1 @@\n+y\n"})))
	d.Flush()
	m, _ := d.Message("t")
	require.Len(t, m.Metadata.Content, 2)
	assert.Equal(t, "a\nb\n", m.Metadata.Content[0].Body)
	assert.Nil(t, m.Metadata.Content[0].AppendFrom)
	assert.Equal(t, 4, m.Metadata.Content[0].Size)
	assert.Equal(t, "@@ -0,0 +1,1 @@\n+y\n", m.Metadata.Content[1].Body, "a whole part replaces the held one")

	assert.True(t, d.Push(updated(1, tool(shared.MessageComplete, 2,
		shared.ToolContent{Type: shared.ToolContentText, Body: "c\n", AppendFrom: from(99)}))),
		"a part delta past the held body needs a resync")
	d = loaded(t, tool(shared.MessageStreaming, 0))
	assert.True(t, d.Push(updated(1, tool(shared.MessageComplete, 2,
		shared.ToolContent{Type: shared.ToolContentText, Body: "c\n", AppendFrom: from(0)}))),
		"a delta of a part the client never had needs a resync")
}
