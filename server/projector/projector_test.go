package projector

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

func TestNewValidatesItsConfig(t *testing.T) {
	_, err := New(Config{})
	require.Error(t, err, "no store")
	db := openDB(t, "sqlite")
	_, err = New(Config{Store: db.Store, Debounce: -time.Second})
	require.Error(t, err)
	_, err = New(Config{Store: db.Store, BatchSize: -1})
	require.Error(t, err)

	p, err := New(Config{Store: db.Store})
	require.NoError(t, err)
	require.ErrorIs(t, p.Flush(context.Background()), ErrNotStarted)
	require.ErrorIs(t, p.Rebuild(context.Background()), ErrNotStarted)
	p.Close()
	require.ErrorIs(t, p.Flush(context.Background()), ErrClosed)
	p.Close()
}

// A semantic no-op writes nothing, publishes nothing and keeps the revision.
func TestSemanticNoOpWritesAndPublishesNothing(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testDB) {
		pub := &recorder{}
		p := start(t, db, pub)
		task := db.task(t)
		s := db.session(t, task.ID)

		markAndFlush(t, p, task.ID)
		got := pub.forTask(task.ID)
		require.Len(t, got, 1)
		require.Equal(t, int64(2), got[0].Revision)
		require.Equal(t, &shared.PrimarySession{ID: s.ID, State: shared.SessionCreated}, got[0].PrimarySession)
		before := db.stored(t, task.ID)
		require.Equal(t, got[0], before)

		// Marks without a change, and a change no rule looks at.
		markAndFlush(t, p, task.ID, task.ID, task.ID)
		db.message(t, s.ID, shared.MessageThinking, shared.MessageComplete, "", "hmm")
		markAndFlush(t, p, task.ID)

		require.Len(t, pub.forTask(task.ID), 1, "publications")
		require.Equal(t, before, db.stored(t, task.ID), "stored summary, revision and updated_at")
		require.Zero(t, p.Stats().Conflicts)
	})
}

// GIVEN a session's agent requests permission and, before that request is
// answered, the same session emits an unrelated tool call message that
// reaches its own terminal status, WHEN the projector processes that
// unrelated message, THEN pending_action remains permission.
func TestPermissionStaysWhileAnUnrelatedToolCallCompletes(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testDB) {
		ctx := context.Background()
		pub := &recorder{}
		p := start(t, db, pub)
		task := db.task(t)
		s, other := db.session(t, task.ID), db.session(t, task.ID)

		db.message(t, s.ID, shared.MessagePermissionRequest, shared.MessagePending, "perm-1", "may I?")
		markAndFlush(t, p, task.ID)
		require.Equal(t, shared.PendingPermission, db.stored(t, task.ID).PendingAction)
		published := len(pub.forTask(task.ID))

		tool := db.message(t, s.ID, shared.MessageToolCall, shared.MessageStreaming, "", "ls")
		markAndFlush(t, p, task.ID)
		complete := shared.MessageComplete
		_, err := db.UpdateMessage(ctx, s.ID, tool.ID, store.MessageUpdate{Status: &complete})
		require.NoError(t, err)
		markAndFlush(t, p, task.ID)
		require.Equal(t, shared.PendingPermission, db.stored(t, task.ID).PendingAction)
		require.Len(t, pub.forTask(task.ID), published, "the unrelated message published nothing")

		// A clarification in another session does not outrank it.
		db.message(t, other.ID, shared.MessageClarificationRequest, shared.MessagePending, "clar-1", "which?")
		markAndFlush(t, p, task.ID)
		require.Equal(t, shared.PendingPermission, db.stored(t, task.ID).PendingAction)

		// Only resolving that same request clears it.
		_, err = db.ResolveRequest(ctx, s.ID, "perm-1", shared.MessageComplete, &shared.MessageMetadata{SelectedOptionID: "allow"})
		require.NoError(t, err)
		markAndFlush(t, p, task.ID)
		require.Equal(t, shared.PendingClarification, db.stored(t, task.ID).PendingAction)

		_, err = db.ResolveRequest(ctx, other.ID, "clar-1", shared.MessageComplete, nil)
		require.NoError(t, err)
		markAndFlush(t, p, task.ID)
		require.Empty(t, db.stored(t, task.ID).PendingAction)
		last := pub.forTask(task.ID)
		require.Empty(t, last[len(last)-1].PendingAction)
	})
}

// GIVEN a recoverable error is dismissed or followed by a newer agent
// response, WHEN the projector processes that occurrence, THEN the error
// indicator clears.
func TestAgentErrorClearsOnDismissalAndOnANewerAgentResponse(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testDB) {
		ctx := context.Background()
		pub := &recorder{}
		p := start(t, db, pub)
		task := db.task(t)
		s := db.session(t, task.ID)

		boom := db.message(t, s.ID, shared.MessageError, shared.MessageComplete, "", "rate limited: "+strings.Repeat("é", 400))
		markAndFlush(t, p, task.ID)
		got := db.stored(t, task.ID).ActiveError
		require.NotNil(t, got)
		require.Equal(t, shared.ActiveError{SessionID: s.ID, Stamp: boom.ID, OccurredAt: boom.CreatedAt, Preview: Preview(boom.Content)}, *got)
		require.LessOrEqual(t, len(got.Preview), shared.MaxErrorPreviewBytes)

		// Dismiss returns once the cleared summary is stored and published.
		require.NoError(t, p.Dismiss(ctx, task.ID, boom.ID))
		require.Nil(t, db.stored(t, task.ID).ActiveError)
		events := pub.forTask(task.ID)
		require.Nil(t, events[len(events)-1].ActiveError)
		require.Equal(t, shared.CodeNotFound, shared.ErrorCode(p.Dismiss(ctx, task.ID, "no-such-error")))

		// A newer error shows; an agent answer after it clears it.
		again := db.message(t, s.ID, shared.MessageError, shared.MessageComplete, "", "again")
		markAndFlush(t, p, task.ID)
		require.Equal(t, again.ID, db.stored(t, task.ID).ActiveError.Stamp)
		db.message(t, s.ID, shared.MessageAgent, shared.MessageStreaming, "", "")
		markAndFlush(t, p, task.ID)
		require.Nil(t, db.stored(t, task.ID).ActiveError)
	})
}

// A multi-repository update never exposes a partial replacement that
// forgets unchanged repositories, and a failed observation keeps the last
// one.
func TestGitTotalsNeverForgetAnUnchangedRepository(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testDB) {
		ctx := context.Background()
		pub := &recorder{}
		p := start(t, db, pub)
		task := db.task(t, "/a", "/b", "/c")
		a, b := task.Repositories[0].ID, task.Repositories[1].ID
		observe := func(repo string, o store.GitObservation) {
			t.Helper()
			require.NoError(t, db.RecordGitObservation(ctx, repo, o))
			markAndFlush(t, p, task.ID)
		}

		markAndFlush(t, p, task.ID)
		require.Nil(t, db.stored(t, task.ID).Git, "nothing observed: no clean tree claimed")

		observe(a, store.GitObservation{Additions: 1, Deletions: 2, ChangedFiles: 3, Ahead: 1, Behind: 0})
		require.Equal(t, &shared.GitSummary{Additions: 1, Deletions: 2, ChangedFiles: 3, Ahead: 1}, db.stored(t, task.ID).Git)

		observe(b, store.GitObservation{Additions: 10, Deletions: 20, ChangedFiles: 30, Ahead: 2, Behind: 3})
		want := &shared.GitSummary{Additions: 11, Deletions: 22, ChangedFiles: 33, Ahead: 3, Behind: 3}
		require.Equal(t, want, db.stored(t, task.ID).Git)

		published := len(pub.forTask(task.ID))
		observe(a, store.GitObservation{Error: "fatal: index.lock exists"})
		require.Equal(t, want, db.stored(t, task.ID).Git, "a failed observation keeps the last one")
		require.Len(t, pub.forTask(task.ID), published)

		observe(b, store.GitObservation{Additions: 5, Ahead: 9, ComparisonUnavailable: true})
		require.Equal(t, &shared.GitSummary{Additions: 6, Deletions: 2, ChangedFiles: 3, Ahead: 1, ComparisonUnavailable: true}, db.stored(t, task.ID).Git)
	})
}

func TestPullRequestUpdatesReachTheSummary(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testDB) {
		ctx := context.Background()
		p := start(t, db, &recorder{})
		task := db.task(t)
		pr := store.PullRequest{TaskID: task.ID, Repository: "o/r", Number: 12, URL: "https://example.test/o/r/pull/12", State: store.PullRequestOpen, ChecksState: store.ChecksPending}
		_, err := db.UpsertPullRequest(ctx, pr)
		require.NoError(t, err)
		markAndFlush(t, p, task.ID)
		require.Equal(t, &shared.PullRequestSummary{Count: 1, OpenCount: 1, AggregateState: shared.PRPending, Number: 12, URL: pr.URL}, db.stored(t, task.ID).PullRequest)

		pr.ChecksState = store.ChecksFailure
		_, err = db.UpsertPullRequest(ctx, pr)
		require.NoError(t, err)
		markAndFlush(t, p, task.ID)
		require.Equal(t, shared.PRFailure, db.stored(t, task.ID).PullRequest.AggregateState)
	})
}

func TestRebuildRestoresAMissingSummary(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testDB) {
		ctx := context.Background()
		pub := &recorder{}
		p := start(t, db, pub)
		task := db.task(t)
		db.message(t, db.session(t, task.ID).ID, shared.MessagePermissionRequest, shared.MessagePending, "p", "")
		_, err := db.Raw.Exec(rebind(db, "DELETE FROM task_status_summaries WHERE task_id = ?"), task.ID)
		require.NoError(t, err)
		require.Nil(t, db.sources(t, task.ID).Current)

		require.NoError(t, p.Rebuild(ctx))
		got := db.stored(t, task.ID)
		require.Greater(t, got.Revision, time.Now().Add(-time.Hour).UnixMicro(),
			"a rebuilt row's revision is above any a client can hold of the lost row")
		require.Equal(t, shared.PendingPermission, got.PendingAction)
		require.Equal(t, []shared.TaskStatusSummary{got}, pub.forTask(task.ID))
		db.requireConverged(t, task.ID)
	})
}

func TestRebuildRepairsAStaleSummary(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testDB) {
		ctx := context.Background()
		pub := &recorder{}
		p := start(t, db, pub)
		stale, fresh, missing := db.task(t), db.task(t), db.task(t)
		for _, task := range []shared.Task{stale, fresh, missing} {
			db.session(t, task.ID)
		}
		markAndFlush(t, p, stale.ID, fresh.ID, missing.ID)
		before := db.stored(t, stale.ID)
		freshBefore := db.stored(t, fresh.ID)
		published := len(pub.all())

		// A wrong payload written behind the projector's back, under the
		// same revision; another row lost.
		_, err := db.Raw.Exec(rebind(db, "UPDATE task_status_summaries SET payload = ? WHERE task_id = ?"),
			`{"revision":2,"updated_at":"2026-01-01T00:00:00Z","queued_prompt_count":99,"pending_action":"permission"}`, stale.ID)
		require.NoError(t, err)
		_, err = db.Raw.Exec(rebind(db, "DELETE FROM task_status_summaries WHERE task_id = ?"), missing.ID)
		require.NoError(t, err)

		require.NoError(t, p.Rebuild(ctx))
		repaired := db.stored(t, stale.ID)
		require.Equal(t, before.Revision+1, repaired.Revision)
		require.Zero(t, repaired.QueuedPromptCount)
		require.Empty(t, repaired.PendingAction)
		db.requireConverged(t, stale.ID)
		db.requireConverged(t, missing.ID)
		require.Equal(t, freshBefore, db.stored(t, fresh.ID), "a correct summary is left alone")

		events := pub.all()[published:]
		require.Len(t, events, 2)
		for _, e := range events {
			require.Equal(t, shared.NotifyTaskStatusSummaryUpdated, e.action)
			require.Equal(t, db.Workspace.ID, e.workspaceID)
			require.Equal(t, db.Workspace.ID, e.event.WorkspaceID)
			require.Contains(t, []string{stale.ID, missing.ID}, e.event.TaskID)
			require.Equal(t, db.stored(t, e.event.TaskID), e.event.StatusSummary)
		}
	})
}

// GIVEN a stored summary reports a RUNNING primary session with generating
// activity, WHEN startup recovery changes that session to
// WAITING_FOR_INPUT, THEN a newer summary reports the waiting state and no
// generating activity before the backend reports readiness.
func TestRebuildAfterStartupRecoveryReportsTheWaitingState(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testDB) {
		ctx := context.Background()
		task := db.task(t)
		s := db.session(t, task.ID)
		for _, step := range [][2]shared.SessionState{
			{shared.SessionCreated, shared.SessionStarting},
			{shared.SessionStarting, shared.SessionWaitingForInput},
			{shared.SessionWaitingForInput, shared.SessionRunning},
		} {
			_, err := db.Transition(ctx, s.ID, []shared.SessionState{step[0]}, step[1], "", store.Activity{Foreground: shared.ActivityGenerating})
			require.NoError(t, err)
		}
		before := start(t, db, &recorder{})
		markAndFlush(t, before, task.ID)
		running := db.stored(t, task.ID)
		require.Equal(t, shared.SessionRunning, running.PrimarySession.State)
		require.Equal(t, shared.ActivityGenerating, running.ForegroundActivity)
		before.Close()

		// The restart: recovery changes the session and marks nothing.
		_, err := db.Transition(ctx, s.ID, []shared.SessionState{shared.SessionRunning}, shared.SessionWaitingForInput, "", store.Activity{})
		require.NoError(t, err)
		pub := &recorder{}
		after := start(t, db, pub)
		require.NoError(t, after.Rebuild(ctx))

		waiting := db.stored(t, task.ID)
		require.Greater(t, waiting.Revision, running.Revision)
		require.Equal(t, shared.SessionWaitingForInput, waiting.PrimarySession.State)
		require.Empty(t, waiting.ForegroundActivity)
		require.Equal(t, []shared.TaskStatusSummary{waiting}, pub.forTask(task.ID))
	})
}

func TestMarkFromInsideAPublication(t *testing.T) {
	db := openDB(t, "sqlite")
	a, b := db.task(t), db.task(t)
	db.session(t, a.ID)
	db.session(t, b.ID)
	var p *Projector
	pub := &recorder{onPublish: func(e shared.StatusSummaryEvent) {
		if e.TaskID == a.ID {
			p.Mark(b.ID)
		}
	}}
	p = start(t, db, pub)
	markAndFlush(t, p, a.ID)
	require.NoError(t, p.Flush(context.Background()))
	require.Len(t, pub.forTask(b.ID), 1)
}

func TestMarksAreProjectedAfterTheDebounceWithoutFlush(t *testing.T) {
	db := openDB(t, "sqlite")
	task := db.task(t)
	db.session(t, task.ID)
	pub := &recorder{ch: make(chan published, 16)}
	p := start(t, db, pub, func(c *Config) { c.Debounce = time.Millisecond })
	p.Mark(task.ID)
	select {
	case e := <-pub.ch:
		require.Equal(t, task.ID, e.event.TaskID)
	case <-time.After(10 * time.Second):
		t.Fatal("no publication after a mark")
	}
}

func TestCloseProjectsWhatIsMarked(t *testing.T) {
	db := openDB(t, "sqlite")
	task := db.task(t)
	db.session(t, task.ID)
	pub := &recorder{}
	p := start(t, db, pub, func(c *Config) { c.Debounce = time.Hour })
	p.Mark(task.ID)
	p.Close()
	require.Len(t, pub.forTask(task.ID), 1)
	db.requireConverged(t, task.ID)

	p.Mark(task.ID)
	require.ErrorIs(t, p.Flush(context.Background()), ErrClosed)
	require.ErrorIs(t, p.Dismiss(context.Background(), task.ID, "x"), ErrClosed)
}

func TestBatchesAreBounded(t *testing.T) {
	db := openDB(t, "sqlite")
	var ids []string
	for range 10 {
		task := db.task(t)
		db.session(t, task.ID)
		ids = append(ids, task.ID)
	}
	spy := &spySources{}
	p := startSpied(t, db, &recorder{}, spy, func(c *Config) { c.BatchSize = 3 })
	markAndFlush(t, p, ids...)
	for _, id := range ids {
		db.requireConverged(t, id)
	}
	require.LessOrEqual(t, spy.largest.Load(), int64(3))
	require.NoError(t, p.Rebuild(context.Background()))
	require.LessOrEqual(t, spy.largest.Load(), int64(3))
}

// If projection fails, the last valid summary remains visible, the failure
// is logged with the task, and a later projection repairs the summary.
func TestAFailedProjectionKeepsTheLastSummaryAndRetries(t *testing.T) {
	db := openDB(t, "sqlite")
	ctx := context.Background()
	task := db.task(t)
	s := db.session(t, task.ID)
	var logs logBuffer
	pub := &recorder{}
	spy := &spySources{}
	p := startSpied(t, db, pub, spy, func(c *Config) { c.Logger = logs.logger() })
	markAndFlush(t, p, task.ID)
	last := db.stored(t, task.ID)

	spy.failLoads.Store(true)
	db.message(t, s.ID, shared.MessagePermissionRequest, shared.MessagePending, "p", "")
	p.Mark(task.ID)
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	err := p.Flush(short)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, errInjected.Error())
	require.Equal(t, last, db.stored(t, task.ID), "the last valid summary stays")
	require.Contains(t, logs.String(), task.ID)
	require.Contains(t, logs.String(), errInjected.Error())
	require.NotZero(t, p.Stats().Failures)

	spy.failLoads.Store(false)
	require.NoError(t, p.Flush(ctx))
	require.Equal(t, shared.PendingPermission, db.stored(t, task.ID).PendingAction)
	db.requireConverged(t, task.ID)
}

// rebind turns ? placeholders into PostgreSQL's $n for the raw connection.
func rebind(db *testDB, query string) string {
	if db.Dialect() != "postgres" {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + string(rune('0'+n)))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
