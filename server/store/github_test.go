package store

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

// setBranch sets the working branch of a task repository, as creating its
// worktree would.
func setBranch(t testing.TB, s *Store, repositoryID, branch string) {
	t.Helper()
	require.NoError(t, s.write.Exec("UPDATE task_repositories SET branch = ? WHERE id = ?", branch, repositoryID).Error)
}

// setPullRequestURL links a task to a pull request explicitly.
func setPullRequestURL(t testing.TB, s *Store, taskID, url string) {
	t.Helper()
	require.NoError(t, s.write.Exec("UPDATE tasks SET pull_request_url = ? WHERE id = ?", url, taskID).Error)
}

// storedPullRequest reads a pull request outside any delivery.
func storedPullRequest(t testing.TB, s *Store, repository string, number int) (pr PullRequest, ok bool) {
	t.Helper()
	_, err := s.UpdatePullRequests(context.Background(), func(tx *PullRequestTx) error {
		var err error
		pr, ok, err = tx.PullRequest(repository, number)
		return err
	})
	require.NoError(t, err)
	return pr, ok
}

// countDeliveries counts the recorded webhook deliveries.
func countDeliveries(t testing.TB, s *Store) int64 {
	t.Helper()
	var n int64
	require.NoError(t, s.read.Table("github_deliveries").Count(&n).Error)
	return n
}

func TestApplyDeliveryAppliesADeliveryOnce(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		task := sourceTask(t, s, mustWorkspace(t, s, "w").ID)
		pr := PullRequest{TaskID: task.ID, Repository: "o/r", Number: 1, URL: "u", HeadSHA: "abc", State: PullRequestOpen}
		calls := 0
		apply := func(tx *PullRequestTx) error {
			calls++
			return tx.SavePullRequest(pr)
		}

		fresh, changed, err := s.ApplyDelivery(ctx, "d-1", "pull_request", apply)
		require.NoError(t, err)
		require.True(t, fresh)
		require.Equal(t, []string{task.ID}, changed)

		fresh, changed, err = s.ApplyDelivery(ctx, "d-1", "pull_request", apply)
		require.NoError(t, err)
		require.False(t, fresh, "a replay")
		require.Empty(t, changed)
		require.Equal(t, 1, calls, "a replay applies nothing")

		stored, ok := storedPullRequest(t, s, "o/r", 1)
		require.True(t, ok)
		require.Equal(t, "abc", stored.HeadSHA)
	})
}

func TestApplyDeliveryRecordsNothingWhenTheChangeFails(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		task := sourceTask(t, s, mustWorkspace(t, s, "w").ID)
		boom := errors.New("boom")
		_, _, err := s.ApplyDelivery(ctx, "d-1", "pull_request", func(tx *PullRequestTx) error {
			require.NoError(t, tx.SavePullRequest(PullRequest{TaskID: task.ID, Repository: "o/r", Number: 1, State: PullRequestOpen}))
			return boom
		})
		require.ErrorIs(t, err, boom)
		require.Zero(t, countDeliveries(t, s), "the delivery is not seen")
		_, ok := storedPullRequest(t, s, "o/r", 1)
		require.False(t, ok, "nor its effect kept")

		fresh, _, err := s.ApplyDelivery(ctx, "d-1", "pull_request", func(*PullRequestTx) error { return nil })
		require.NoError(t, err)
		require.True(t, fresh, "a redelivery is applied")

		_, _, err = s.ApplyDelivery(ctx, "", "pull_request", func(*PullRequestTx) error { return nil })
		require.Equal(t, shared.CodeBadRequest, shared.ErrorCode(err))
	})
}

func TestApplyDeliveryOfOneIDRacingIsFreshOnce(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		var wg sync.WaitGroup
		var mu sync.Mutex
		fresh := 0
		for range 8 {
			wg.Go(func() {
				ok, _, err := s.ApplyDelivery(ctx, "d-1", "status", func(*PullRequestTx) error { return nil })
				if err != nil {
					t.Error(err)
				}
				if ok {
					mu.Lock()
					fresh++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		require.Equal(t, 1, fresh)
	})
}

func TestSavingAPullRequestReportsItsTasks(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		w := mustWorkspace(t, s, "w")
		a, b := sourceTask(t, s, w.ID), sourceTask(t, s, w.ID)
		at := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
		pr := PullRequest{TaskID: a.ID, Repository: "o/r", Number: 1, URL: "u", State: PullRequestOpen, UpdatedAt: at}
		save := func(pr PullRequest) []string {
			t.Helper()
			changed, err := s.UpdatePullRequests(ctx, func(tx *PullRequestTx) error { return tx.SavePullRequest(pr) })
			require.NoError(t, err)
			return changed
		}

		require.Equal(t, []string{a.ID}, save(pr), "a new pull request")
		require.Empty(t, save(pr), "an identical one is not rewritten")

		pr.TaskID = b.ID
		require.Equal(t, []string{a.ID, b.ID}, save(pr), "moving marks both tasks")

		pr.ChecksState = ChecksFailure
		require.Equal(t, []string{b.ID}, save(pr))

		pr.TaskID = ""
		require.Equal(t, []string{b.ID}, save(pr), "unlinking marks the task it left")
	})
}

func TestUpsertPullRequestReturnsThePreviousTask(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		w := mustWorkspace(t, s, "w")
		a, b := sourceTask(t, s, w.ID), sourceTask(t, s, w.ID)
		pr := PullRequest{TaskID: a.ID, Repository: "o/r", Number: 1, URL: "u", HeadSHA: "abc", State: PullRequestOpen}

		prev, err := s.UpsertPullRequest(ctx, pr)
		require.NoError(t, err)
		require.Empty(t, prev, "nothing was stored")

		pr.TaskID = b.ID
		prev, err = s.UpsertPullRequest(ctx, pr)
		require.NoError(t, err)
		require.Equal(t, a.ID, prev)

		stored, ok := storedPullRequest(t, s, "o/r", 1)
		require.True(t, ok)
		require.Equal(t, b.ID, stored.TaskID)
		require.Equal(t, "abc", stored.HeadSHA)
	})
}

func TestPullRequestsAtFindsThePullRequestsOfACommit(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		for n, sha := range map[int]string{1: "abc", 2: "abc", 3: "def"} {
			_, err := s.UpsertPullRequest(ctx, PullRequest{Repository: "o/r", Number: n, URL: "u", HeadSHA: sha, State: PullRequestOpen})
			require.NoError(t, err)
		}
		_, err := s.UpsertPullRequest(ctx, PullRequest{Repository: "o/other", Number: 4, URL: "u", HeadSHA: "abc", State: PullRequestOpen})
		require.NoError(t, err)

		_, err = s.UpdatePullRequests(ctx, func(tx *PullRequestTx) error {
			prs, err := tx.PullRequestsAt("o/r", "abc")
			require.NoError(t, err)
			require.Len(t, prs, 2)
			require.Equal(t, []int{1, 2}, []int{prs[0].Number, prs[1].Number})
			none, err := tx.PullRequestsAt("o/r", "")
			require.NoError(t, err)
			require.Empty(t, none, "an unknown head matches nothing")
			return nil
		})
		require.NoError(t, err)
	})
}

func TestLinkedTaskPrefersTheExplicitLinkThenTheNewestBranchMatch(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		w := mustWorkspace(t, s, "w")
		older := sourceTask(t, s, w.ID, "/a")
		newer := sourceTask(t, s, w.ID, "/b", "/c")
		linked := sourceTask(t, s, w.ID)
		setBranch(t, s, older.Repositories[0].ID, "herd/1234abcd-fix")
		setBranch(t, s, newer.Repositories[1].ID, "herd/1234abcd-fix")
		setPullRequestURL(t, s, linked.ID, "https://github.com/o/r/pull/1")

		for name, tc := range map[string]struct {
			url, branch, want string
		}{
			"explicit link wins over the branch":   {"https://github.com/o/r/pull/1", "herd/1234abcd-fix", linked.ID},
			"newest of two tasks with the branch":  {"https://github.com/o/r/pull/2", "herd/1234abcd-fix", newer.ID},
			"no link and an unknown branch":        {"https://github.com/o/r/pull/2", "feature", ""},
			"no branch never matches empty branch": {"", "", ""},
		} {
			_, err := s.UpdatePullRequests(ctx, func(tx *PullRequestTx) error {
				got, err := tx.LinkedTask(tc.url, tc.branch)
				require.NoError(t, err)
				require.Equal(t, tc.want, got, name)
				return nil
			})
			require.NoError(t, err)
		}
	})
}

func TestRecordCheckKeepsTheNewestObservationOfEachSource(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		at := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
		check := func(source, state string, observed time.Time) CheckObservation {
			return CheckObservation{Repository: "o/r", HeadSHA: "abc", Source: source, State: state, ObservedAt: observed}
		}
		_, err := s.UpdatePullRequests(ctx, func(tx *PullRequestTx) error {
			for _, tc := range []struct {
				name  string
				check CheckObservation
				want  bool
			}{
				{"first observation", check("suite:1", ChecksPending, at), true},
				{"newer", check("suite:1", ChecksFailure, at.Add(time.Minute)), true},
				{"older does not regress", check("suite:1", ChecksSuccess, at), false},
				{"another source", check("status:ci", ChecksSuccess, at), true},
			} {
				applied, err := tx.RecordCheck(tc.check)
				require.NoError(t, err)
				require.Equal(t, tc.want, applied, tc.name)
			}
			states, err := tx.CheckStates("o/r", "abc")
			require.NoError(t, err)
			require.Equal(t, []string{ChecksFailure, ChecksSuccess}, states)
			other, err := tx.CheckStates("o/r", "def")
			require.NoError(t, err)
			require.Empty(t, other)

			_, err = tx.RecordCheck(check("suite:1", "green", at))
			require.Equal(t, shared.CodeBadRequest, shared.ErrorCode(err))
			_, err = tx.RecordCheck(check("", ChecksPending, at))
			require.Equal(t, shared.CodeBadRequest, shared.ErrorCode(err))
			return nil
		})
		require.NoError(t, err)
	})
}

func TestPruneDeliveriesForgetsOldDeliveriesAndChecks(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		for _, id := range []string{"old", "new"} {
			_, _, err := s.ApplyDelivery(ctx, id, "check_run", func(tx *PullRequestTx) error {
				_, err := tx.RecordCheck(CheckObservation{Repository: "o/r", HeadSHA: id, Source: "suite:1", State: ChecksSuccess})
				return err
			})
			require.NoError(t, err)
		}
		weekAgo := now().Add(-8 * 24 * time.Hour)
		require.NoError(t, s.write.Exec("UPDATE github_deliveries SET received_at = ? WHERE delivery_id = 'old'", weekAgo).Error)
		require.NoError(t, s.write.Exec("UPDATE github_checks SET updated_at = ? WHERE head_sha = 'old'", weekAgo).Error)

		n, err := s.PruneDeliveries(ctx, now().Add(-7*24*time.Hour))
		require.NoError(t, err)
		require.Equal(t, int64(2), n)
		require.Equal(t, int64(1), countDeliveries(t, s))

		fresh, _, err := s.ApplyDelivery(ctx, "old", "check_run", func(*PullRequestTx) error { return nil })
		require.NoError(t, err)
		require.True(t, fresh, "a pruned delivery counts as new")
	})
}

func TestPollTargetsAreTheLinkedURLsAndOpenPullRequestsOfLiveTasks(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		w := mustWorkspace(t, s, "w")
		a, b, archived, unlinked := sourceTask(t, s, w.ID), sourceTask(t, s, w.ID), sourceTask(t, s, w.ID), sourceTask(t, s, w.ID)
		setPullRequestURL(t, s, a.ID, "https://github.com/o/r/pull/2")
		setPullRequestURL(t, s, b.ID, "https://github.com/o/r/pull/2")
		setPullRequestURL(t, s, archived.ID, "https://github.com/o/r/pull/3")
		setPullRequestURL(t, s, unlinked.ID, "")
		for _, pr := range []PullRequest{
			{TaskID: a.ID, Repository: "o/r", Number: 5, URL: "u5", State: PullRequestOpen},
			{TaskID: a.ID, Repository: "o/r", Number: 4, URL: "u4", State: PullRequestOpen},
			{TaskID: b.ID, Repository: "o/r", Number: 6, URL: "u6", State: PullRequestClosed, Merged: true},
			{TaskID: archived.ID, Repository: "o/r", Number: 7, URL: "u7", State: PullRequestOpen},
			{Repository: "o/r", Number: 8, URL: "u8", State: PullRequestOpen},
		} {
			_, err := s.UpsertPullRequest(ctx, pr)
			require.NoError(t, err)
		}
		_, err := s.ArchiveTask(ctx, archived.ID)
		require.NoError(t, err)

		urls, err := s.LinkedPullRequestURLs(ctx)
		require.NoError(t, err)
		require.Equal(t, []string{"https://github.com/o/r/pull/2"}, urls)

		open, err := s.OpenPullRequests(ctx)
		require.NoError(t, err)
		require.Len(t, open, 2)
		require.Equal(t, []int{4, 5}, []int{open[0].Number, open[1].Number})
		require.Equal(t, a.ID, open[0].TaskID)
	})
}

func TestBranchesToDiscoverAreTheLiveBranchesNoStoredPullRequestHeads(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		w := mustWorkspace(t, s, "w")
		checkedOut := func(paths []string, branches ...string) shared.Task {
			t.Helper()
			in := shared.TaskCreateRequest{WorkspaceID: w.ID, Title: "t"}
			var checkouts []RepositoryCheckout
			for i, p := range paths {
				in.Repositories = append(in.Repositories, shared.RepositoryInput{Path: p, BaseBranch: "main"})
				checkouts = append(checkouts, RepositoryCheckout{Branch: branches[i]})
			}
			task, err := s.CreateTaskAs(ctx, NewTaskID(), in, checkouts)
			require.NoError(t, err)
			return task
		}
		waiting := checkedOut([]string{"/b"}, "herd/aaaa0001-login")
		twoRepos := checkedOut([]string{"/a", "/c"}, "herd/aaaa0002-api", "")
		open := checkedOut([]string{"/a"}, "herd/aaaa0003-open")
		merged := checkedOut([]string{"/a"}, "herd/aaaa0004-merged")
		checkedOut([]string{"/a"}, "herd/aaaa0005-foreign") // its pull request is stored unlinked
		archived := checkedOut([]string{"/a"}, "herd/aaaa0006-archived")
		checkedOut([]string{"/a"}, "") // runs in place: no branch of its own
		for _, pr := range []PullRequest{
			{TaskID: open.ID, Repository: "o/r", Number: 1, URL: "u1", HeadBranch: "herd/aaaa0003-open", State: PullRequestOpen},
			{TaskID: merged.ID, Repository: "o/r", Number: 2, URL: "u2", HeadBranch: "herd/aaaa0004-merged", State: PullRequestClosed, Merged: true},
			{Repository: "o/r", Number: 3, URL: "u3", HeadBranch: "herd/aaaa0005-foreign", State: PullRequestOpen},
		} {
			_, err := s.UpsertPullRequest(ctx, pr)
			require.NoError(t, err)
		}
		_, err := s.ArchiveTask(ctx, archived.ID)
		require.NoError(t, err)

		branches, err := s.BranchesToDiscover(ctx)
		require.NoError(t, err)
		require.Equal(t, []BranchToDiscover{
			{TaskID: twoRepos.ID, Path: "/a", Branch: "herd/aaaa0002-api"},
			{TaskID: waiting.ID, Path: "/b", Branch: "herd/aaaa0001-login"},
		}, branches, "by path; open, merged and unlinked pull requests' branches, archived tasks and empty branches left out")

		_, err = s.UpsertPullRequest(ctx, PullRequest{
			TaskID: waiting.ID, Repository: "o/r", Number: 4, URL: "u4", HeadBranch: "herd/aaaa0001-login", State: PullRequestOpen,
		})
		require.NoError(t, err)
		branches, err = s.BranchesToDiscover(ctx)
		require.NoError(t, err)
		require.Equal(t, []BranchToDiscover{{TaskID: twoRepos.ID, Path: "/a", Branch: "herd/aaaa0002-api"}}, branches,
			"a branch leaves once its pull request is stored")
	})
}
