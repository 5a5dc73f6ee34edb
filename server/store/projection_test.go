package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

// sourceTask creates a task with the given repository paths.
func sourceTask(t testing.TB, s *Store, workspaceID string, repos ...string) shared.Task {
	t.Helper()
	in := shared.TaskCreateRequest{WorkspaceID: workspaceID, Title: "t"}
	for _, p := range repos {
		in.Repositories = append(in.Repositories, shared.RepositoryInput{Path: p, BaseBranch: "main"})
	}
	return mustTask(t, s, in)
}

// mustAppend appends a message or fails t.
func mustAppend(t testing.TB, s *Store, sessionID string, typ shared.MessageType, status shared.MessageState, pendingID, content string) shared.Message {
	t.Helper()
	m, err := s.AppendMessage(context.Background(), NewMessage{SessionID: sessionID, Type: typ, Status: status, PendingID: pendingID, Content: content})
	require.NoError(t, err)
	return m
}

// mustSources reads the sources of one task.
func mustSources(t testing.TB, s *Store, taskID string) SummarySource {
	t.Helper()
	srcs, err := s.SummarySources(context.Background(), []string{taskID})
	require.NoError(t, err)
	require.Len(t, srcs, 1)
	return srcs[0]
}

func TestSummarySourcesReadsEverySource(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		w := mustWorkspace(t, s, "w")
		task := sourceTask(t, s, w.ID, "/a", "/b")
		other := sourceTask(t, s, w.ID, "/c")
		first := mustSession(t, s, task.ID)
		second := mustSession(t, s, task.ID)
		otherSession := mustSession(t, s, other.ID)

		_, changed, err := s.SetActivity(ctx, second, shared.SessionCreated, Activity{Foreground: shared.ActivityBackground, Subagents: 2})
		require.NoError(t, err)
		require.True(t, changed)

		// Requests: one answered, two pending, and one in another task.
		mustAppend(t, s, first, shared.MessagePermissionRequest, shared.MessagePending, "answered", "")
		_, err = s.ResolveRequest(ctx, first, "answered", shared.MessageComplete, nil)
		require.NoError(t, err)
		perm := mustAppend(t, s, first, shared.MessagePermissionRequest, shared.MessagePending, "p1", "")
		clar := mustAppend(t, s, second, shared.MessageClarificationRequest, shared.MessagePending, "c1", "")
		mustAppend(t, s, otherSession, shared.MessagePermissionRequest, shared.MessagePending, "elsewhere", "")

		// Queue: two pending prompts; a claimed one and a removed one do not count.
		for i := range 4 {
			_, _, err := s.AddUserMessage(ctx, second, fmt.Sprintf("q-%d", i), "later")
			require.NoError(t, err)
		}
		queued, err := s.QueuedMessages(ctx, second)
		require.NoError(t, err)
		_, claimed, err := s.ClaimDispatch(ctx, queued[0].ID, "token")
		require.NoError(t, err)
		require.True(t, claimed)
		require.NoError(t, s.RemoveQueued(ctx, second, queued[1].ID))

		// Errors: the newest one counts; an agent answer in another session
		// does not answer it.
		mustAppend(t, s, second, shared.MessageError, shared.MessageComplete, "", "older")
		newest := mustAppend(t, s, first, shared.MessageError, shared.MessageComplete, "", "newest")
		mustAppend(t, s, second, shared.MessageAgent, shared.MessageComplete, "", "hello")

		// Git: /a observed, then a failed observation; /b never observed.
		base := time.Now().UTC().Truncate(time.Microsecond)
		repoA, repoB := task.Repositories[0].ID, task.Repositories[1].ID
		require.NoError(t, s.RecordGitObservation(ctx, repoA, GitObservation{ObservedAt: base, Additions: 1, Deletions: 2, ChangedFiles: 3, Ahead: 4, Behind: 5}))
		require.NoError(t, s.RecordGitObservation(ctx, repoA, GitObservation{ObservedAt: base.Add(-time.Second), Additions: 100}))
		require.NoError(t, s.RecordGitObservation(ctx, repoA, GitObservation{ObservedAt: base.Add(time.Second), Error: "git: not a repository"}))

		// Pull requests: two of the task, one of another.
		prs := []PullRequest{
			{TaskID: task.ID, Repository: "o/r", Number: 7, URL: "https://example.test/o/r/pull/7", State: PullRequestOpen, ChecksState: ChecksPending, UpdatedAt: base},
			{TaskID: task.ID, Repository: "o/r", Number: 3, URL: "https://example.test/o/r/pull/3", State: PullRequestClosed, Merged: true, UpdatedAt: base},
			{TaskID: other.ID, Repository: "o/r", Number: 9, URL: "https://example.test/o/r/pull/9", State: PullRequestOpen, UpdatedAt: base},
		}
		for _, pr := range prs {
			_, err := s.UpsertPullRequest(ctx, pr)
			require.NoError(t, err)
		}

		src := mustSources(t, s, task.ID)
		require.Equal(t, task.ID, src.TaskID)
		require.Equal(t, w.ID, src.WorkspaceID)
		require.Equal(t, first, src.PrimarySessionID)
		require.Nil(t, src.ErrorDismissedAt)

		sessions, err := s.ListSessions(ctx, task.ID)
		require.NoError(t, err)
		require.Equal(t, sessions, src.Sessions)

		require.Equal(t, []PendingRequest{
			{SessionID: perm.SessionID, MessageID: perm.ID, PendingID: "p1", Type: shared.MessagePermissionRequest, Seq: perm.Seq},
			{SessionID: clar.SessionID, MessageID: clar.ID, PendingID: "c1", Type: shared.MessageClarificationRequest, Seq: clar.Seq},
		}, sortPending(src.Pending))
		require.Equal(t, 2, src.QueuedPrompts)

		require.Equal(t, &ErrorOccurrence{SessionID: first, MessageID: newest.ID, Seq: newest.Seq, OccurredAt: newest.CreatedAt, Content: "newest"}, src.NewestError)
		require.False(t, src.AnsweredError)

		require.Equal(t, []RepositoryObservation{
			{RepositoryID: repoA, Observation: &GitObservation{ObservedAt: base, Additions: 1, Deletions: 2, ChangedFiles: 3, Ahead: 4, Behind: 5}},
			{RepositoryID: repoB},
		}, src.Repositories)

		require.Equal(t, []PullRequest{prs[1], prs[0]}, src.PullRequests)

		require.Equal(t, int64(1), src.Revision)
		require.Equal(t, task.StatusSummary, src.Current)
	})
}

// sortPending orders requests by session id then seq, as the query does.
func sortPending(p []PendingRequest) []PendingRequest {
	slices.SortFunc(p, func(a, b PendingRequest) int {
		if a.SessionID != b.SessionID {
			if a.SessionID < b.SessionID {
				return -1
			}
			return 1
		}
		return int(a.Seq - b.Seq)
	})
	return p
}

func TestSummarySourcesAgentErrors(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		task := sourceTask(t, s, mustWorkspace(t, s, "w").ID)
		session := mustSession(t, s, task.ID)

		t.Run("an agent message in the same session answers the error", func(t *testing.T) {
			e := mustAppend(t, s, session, shared.MessageError, shared.MessageComplete, "", "boom")
			src := mustSources(t, s, task.ID)
			require.Equal(t, e.ID, src.NewestError.MessageID)
			require.False(t, src.AnsweredError)

			mustAppend(t, s, session, shared.MessageAgent, shared.MessageStreaming, "", "")
			require.True(t, mustSources(t, s, task.ID).AnsweredError)
		})

		t.Run("a dismissal hides the error and every earlier one", func(t *testing.T) {
			older := mustAppend(t, s, session, shared.MessageError, shared.MessageComplete, "", "older")
			newer := mustAppend(t, s, session, shared.MessageError, shared.MessageComplete, "", "newer")
			require.NoError(t, s.DismissError(ctx, task.ID, newer.ID))
			src := mustSources(t, s, task.ID)
			require.Nil(t, src.NewestError)
			require.Equal(t, newer.CreatedAt, *src.ErrorDismissedAt)

			// Dismissing an older error never moves the mark back.
			require.NoError(t, s.DismissError(ctx, task.ID, older.ID))
			require.Equal(t, newer.CreatedAt, *mustSources(t, s, task.ID).ErrorDismissedAt)

			latest := mustAppend(t, s, session, shared.MessageError, shared.MessageComplete, "", "latest")
			require.Equal(t, latest.ID, mustSources(t, s, task.ID).NewestError.MessageID)
		})

		t.Run("only a stored error of that task can be dismissed", func(t *testing.T) {
			other := sourceTask(t, s, task.WorkspaceID)
			otherErr := mustAppend(t, s, mustSession(t, s, other.ID), shared.MessageError, shared.MessageComplete, "", "x")
			notError := mustAppend(t, s, session, shared.MessageAgent, shared.MessageComplete, "", "x")
			for name, stamp := range map[string]string{"unknown": "missing", "another task's": otherErr.ID, "not an error": notError.ID} {
				err := s.DismissError(ctx, task.ID, stamp)
				require.Equal(t, shared.CodeNotFound, shared.ErrorCode(err), "%s stamp: %v", name, err)
			}
		})

		t.Run("the content is cut", func(t *testing.T) {
			mustAppend(t, s, session, shared.MessageError, shared.MessageComplete, "", strings.Repeat("é", 3000))
			content := mustSources(t, s, task.ID).NewestError.Content
			require.Equal(t, strings.Repeat("é", errorPreviewChars), content, "cut by characters, never inside one")
		})
	})
}

func TestSummarySourcesWithoutASummaryRow(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		w := mustWorkspace(t, s, "w")
		a, b := sourceTask(t, s, w.ID), sourceTask(t, s, w.ID)
		require.NoError(t, s.write.Exec("DELETE FROM task_status_summaries WHERE task_id = ?", a.ID).Error)
		require.NoError(t, s.write.Exec("UPDATE task_status_summaries SET payload = 'not json' WHERE task_id = ?", b.ID).Error)

		srcs, err := s.SummarySources(ctx, []string{b.ID, "missing", a.ID, b.ID})
		require.NoError(t, err)
		require.Len(t, srcs, 2, "unknown ids are left out and repeats read once")
		require.Equal(t, b.ID, srcs[0].TaskID)
		require.Equal(t, int64(1), srcs[0].Revision, "an unreadable payload keeps its revision")
		require.Nil(t, srcs[0].Current)
		require.Equal(t, a.ID, srcs[1].TaskID)
		require.Equal(t, int64(0), srcs[1].Revision)
		require.Nil(t, srcs[1].Current)

		srcs, err = s.SummarySources(ctx, nil)
		require.NoError(t, err)
		require.Empty(t, srcs)
	})
}

// TestSummarySourcesTakesAConstantNumberOfQueries is the budget "loading
// the sources of N tasks does not grow with N".
func TestSummarySourcesTakesAConstantNumberOfQueries(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		w := mustWorkspace(t, s, "w")
		var ids []string
		for i := range 300 {
			task := sourceTask(t, s, w.ID, "/r")
			session := mustSession(t, s, task.ID)
			mustAppend(t, s, session, shared.MessagePermissionRequest, shared.MessagePending, "p", "")
			mustAppend(t, s, session, shared.MessageError, shared.MessageComplete, "", "e")
			_, _, err := s.AddUserMessage(ctx, session, fmt.Sprintf("c-%d", i), "q")
			require.NoError(t, err)
			require.NoError(t, s.RecordGitObservation(ctx, task.Repositories[0].ID, GitObservation{Additions: i}))
			_, err = s.UpsertPullRequest(ctx, PullRequest{TaskID: task.ID, Repository: "o/r", Number: i + 1, URL: "u", State: PullRequestOpen})
			require.NoError(t, err)
			ids = append(ids, task.ID)
		}
		queries := countQueries(t, s)
		counts := map[int]int64{}
		for _, n := range []int{1, 300} {
			queries.Store(0)
			srcs, err := s.SummarySources(ctx, ids[:n])
			require.NoError(t, err)
			require.Len(t, srcs, n)
			for _, src := range srcs {
				require.Len(t, src.Sessions, 1)
				require.Len(t, src.Pending, 1)
				require.NotNil(t, src.NewestError)
				require.Equal(t, 1, src.QueuedPrompts)
				require.NotNil(t, src.Repositories[0].Observation)
				require.Len(t, src.PullRequests, 1)
			}
			counts[n] = queries.Load()
		}
		require.Equal(t, counts[1], counts[300], "queries for 1 task and for 300")
		require.Equal(t, int64(7), counts[1])
	})
}

func TestWriteSummaryComparesAndUpdates(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		w := mustWorkspace(t, s, "w")
		task := sourceTask(t, s, w.ID)
		at := time.Date(2026, 8, 1, 12, 0, 0, 123456789, time.UTC)

		next := shared.TaskStatusSummary{Revision: 2, UpdatedAt: at, QueuedPromptCount: 4}
		ok, err := s.WriteSummary(ctx, task.ID, w.ID, 1, next)
		require.NoError(t, err)
		require.True(t, ok)
		src := mustSources(t, s, task.ID)
		require.Equal(t, int64(2), src.Revision)
		require.Equal(t, 4, src.Current.QueuedPromptCount)
		require.Equal(t, at.Truncate(time.Microsecond), src.Current.UpdatedAt)

		ok, err = s.WriteSummary(ctx, task.ID, w.ID, 1, shared.TaskStatusSummary{Revision: 2})
		require.NoError(t, err)
		require.False(t, ok, "a stale expected revision writes nothing")
		require.Equal(t, 4, mustSources(t, s, task.ID).Current.QueuedPromptCount)

		_, err = s.WriteSummary(ctx, task.ID, w.ID, 2, shared.TaskStatusSummary{Revision: 2})
		require.Error(t, err, "a revision that does not follow")

		ok, err = s.WriteSummary(ctx, task.ID, w.ID, 0, shared.TaskStatusSummary{Revision: 1})
		require.NoError(t, err)
		require.False(t, ok, "expecting a missing row when one exists")

		_, err = s.WriteSummary(ctx, "missing", w.ID, 0, shared.TaskStatusSummary{Revision: 1})
		require.Equal(t, shared.CodeNotFound, shared.ErrorCode(err))
	})
}

// Of concurrent writers expecting the same revision, or racing to insert a
// missing row, exactly one wins.
func TestWriteSummaryHasOneWinnerPerRevision(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		w := mustWorkspace(t, s, "w")
		task := sourceTask(t, s, w.ID)
		require.NoError(t, s.write.Exec("DELETE FROM task_status_summaries WHERE task_id = ?", task.ID).Error)

		for expected := range int64(3) {
			var wins atomic.Int64
			var wg sync.WaitGroup
			for i := range 8 {
				wg.Go(func() {
					ok, err := s.WriteSummary(ctx, task.ID, w.ID, expected, shared.TaskStatusSummary{Revision: expected + 1, QueuedPromptCount: i})
					if err != nil {
						t.Error(err)
					}
					if ok {
						wins.Add(1)
					}
				})
			}
			wg.Wait()
			require.Equal(t, int64(1), wins.Load(), "winners expecting revision %d", expected)
			require.Equal(t, expected+1, mustSources(t, s, task.ID).Revision)
		}
	})
}

func TestAllTaskIDsWalksEveryTaskInBatches(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		var want []string
		for _, name := range []string{"a", "b"} {
			w := mustWorkspace(t, s, name)
			want = append(want, seedTasks(t, s, w.ID, 4, inGroupsOf(1))...)
		}
		_, err := s.ArchiveTask(ctx, want[0])
		require.NoError(t, err)
		slices.Sort(want)

		for _, n := range []int{1, 3, 8, 100} {
			var got []string
			err := s.AllTaskIDs(ctx, n, func(ids []string) error {
				require.LessOrEqual(t, len(ids), n)
				got = append(got, ids...)
				return nil
			})
			require.NoError(t, err)
			require.Equal(t, want, got, "batches of %d", n)
		}

		stop := fmt.Errorf("stop")
		calls := 0
		err = s.AllTaskIDs(ctx, 3, func([]string) error { calls++; return stop })
		require.ErrorIs(t, err, stop)
		require.Equal(t, 1, calls)
		require.Error(t, s.AllTaskIDs(ctx, 0, func([]string) error { return nil }))
	})
}

func TestGitObservationsKeepTheLatestSuccess(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		task := sourceTask(t, s, mustWorkspace(t, s, "w").ID, "/a")
		repo := task.Repositories[0].ID
		base := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
		latest := func() *GitObservation { return mustSources(t, s, task.ID).Repositories[0].Observation }

		require.Nil(t, latest(), "never observed")
		require.NoError(t, s.RecordGitObservation(ctx, repo, GitObservation{ObservedAt: base, Error: "boom"}))
		require.Nil(t, latest(), "a failed observation is no observation")

		require.NoError(t, s.RecordGitObservation(ctx, repo, GitObservation{ObservedAt: base.Add(time.Minute), Additions: 1, ComparisonUnavailable: true}))
		require.Equal(t, &GitObservation{ObservedAt: base.Add(time.Minute), Additions: 1, ComparisonUnavailable: true}, latest())

		require.NoError(t, s.RecordGitObservation(ctx, repo, GitObservation{ObservedAt: base.Add(2 * time.Minute), Error: "boom"}))
		require.NoError(t, s.RecordGitObservation(ctx, repo, GitObservation{ObservedAt: base.Add(30 * time.Second), Additions: 99}))
		require.Equal(t, 1, latest().Additions, "neither a later failure nor an earlier success replaces it")

		require.Equal(t, shared.CodeNotFound, shared.ErrorCode(s.RecordGitObservation(ctx, "missing", GitObservation{})))
	})
}

func TestUpsertPullRequest(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		w := mustWorkspace(t, s, "w")
		a, b := sourceTask(t, s, w.ID), sourceTask(t, s, w.ID)
		at := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)

		pr := PullRequest{TaskID: a.ID, Repository: "o/r", Number: 1, URL: "u1", HeadBranch: "h", State: PullRequestOpen, Draft: true, UpdatedAt: at}
		_, err := s.UpsertPullRequest(ctx, pr)
		require.NoError(t, err)
		require.Equal(t, []PullRequest{pr}, mustSources(t, s, a.ID).PullRequests)

		pr.TaskID, pr.URL, pr.Draft, pr.ChecksState, pr.ReviewState, pr.UpdatedAt = b.ID, "u2", false, ChecksSuccess, ReviewApproved, at.Add(time.Hour)
		_, err = s.UpsertPullRequest(ctx, pr)
		require.NoError(t, err)
		require.Empty(t, mustSources(t, s, a.ID).PullRequests, "the pull request moved")
		require.Equal(t, []PullRequest{pr}, mustSources(t, s, b.ID).PullRequests)

		pr.TaskID = ""
		_, err = s.UpsertPullRequest(ctx, pr)
		require.NoError(t, err)
		require.Empty(t, mustSources(t, s, b.ID).PullRequests)

		for name, bad := range map[string]PullRequest{
			"no repository":  {Number: 1, State: PullRequestOpen},
			"no number":      {Repository: "o/r", State: PullRequestOpen},
			"unknown state":  {Repository: "o/r", Number: 1, State: "merged"},
			"unknown checks": {Repository: "o/r", Number: 1, State: PullRequestOpen, ChecksState: "green"},
			"unknown review": {Repository: "o/r", Number: 1, State: PullRequestOpen, ReviewState: "lgtm"},
		} {
			_, err := s.UpsertPullRequest(ctx, bad)
			require.Equal(t, shared.CodeBadRequest, shared.ErrorCode(err), name)
		}
		_, err = s.UpsertPullRequest(ctx, PullRequest{TaskID: "missing", Repository: "o/r", Number: 2, State: PullRequestOpen})
		require.Equal(t, shared.CodeNotFound, shared.ErrorCode(err))
	})
}

func TestNullTimeScansDriverTimesAndText(t *testing.T) {
	want := time.Date(2026, 8, 1, 12, 0, 0, 123456000, time.UTC)
	for name, v := range map[string]any{
		"time":              want.In(time.FixedZone("x", 3600)),
		"sqlite text":       "2026-08-01 12:00:00.123456+00:00",
		"sqlite bytes":      []byte("2026-08-01 12:00:00.123456+00:00"),
		"text with T and Z": "2026-08-01T12:00:00.123456Z",
		"text without zone": "2026-08-01 12:00:00.123456",
	} {
		var n nullTime
		require.NoError(t, n.Scan(v), name)
		require.Equal(t, &want, n.ptr(), name)
	}
	var n nullTime
	require.NoError(t, n.Scan(nil))
	require.Nil(t, n.ptr())
	require.Error(t, n.Scan("noon"))
	require.Error(t, n.Scan(42))
}
