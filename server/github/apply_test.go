package github

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/store"
)

func TestPullRequestDeliveries(t *testing.T) {
	at := func(hhmm string) string { return "2026-08-01T" + hhmm + ":00Z" }
	type delivery struct {
		event, fixture string
		edits          map[string]any
	}
	for _, tc := range []struct {
		name  string
		steps []delivery
		check func(t *testing.T, pr store.PullRequest)
	}{
		{"closed and merged is merged", []delivery{
			{"pull_request", "pull_request_opened", nil},
			{"pull_request", "pull_request_closed_merged", nil},
		}, func(t *testing.T, pr store.PullRequest) {
			require.Equal(t, store.PullRequestClosed, pr.State)
			require.True(t, pr.Merged)
		}},
		{"closed without merging is closed", []delivery{
			{"pull_request", "pull_request_opened", nil},
			{"pull_request", "pull_request_opened", map[string]any{
				"action": "closed", "pull_request.state": "closed", "pull_request.updated_at": at("13:00"),
			}},
		}, func(t *testing.T, pr store.PullRequest) {
			require.Equal(t, store.PullRequestClosed, pr.State)
			require.False(t, pr.Merged)
		}},
		{"converted to draft is a draft", []delivery{
			{"pull_request", "pull_request_opened", nil},
			{"pull_request", "pull_request_opened", map[string]any{
				"action": "converted_to_draft", "pull_request.draft": true, "pull_request.updated_at": at("13:00"),
			}},
		}, func(t *testing.T, pr store.PullRequest) {
			require.True(t, pr.Draft)
		}},
		{"an older delivery does not regress a newer state", []delivery{
			{"pull_request", "pull_request_closed_merged", nil},
			{"pull_request", "pull_request_opened", nil},
		}, func(t *testing.T, pr store.PullRequest) {
			require.Equal(t, store.PullRequestClosed, pr.State)
			require.True(t, pr.Merged)
		}},
		{"review approved is approved", []delivery{
			{"pull_request", "pull_request_opened", nil},
			{"pull_request_review", "pull_request_review_submitted", nil},
		}, func(t *testing.T, pr store.PullRequest) {
			require.Equal(t, store.ReviewApproved, pr.ReviewState)
		}},
		{"changes requested are changes_requested", []delivery{
			{"pull_request_review", "pull_request_review_submitted", map[string]any{"review.state": "changes_requested"}},
		}, func(t *testing.T, pr store.PullRequest) {
			require.Equal(t, store.ReviewChangesRequested, pr.ReviewState)
		}},
		{"a comment leaves the review state", []delivery{
			{"pull_request_review", "pull_request_review_submitted", nil},
			{"pull_request_review", "pull_request_review_submitted", map[string]any{
				"review.state": "commented", "pull_request.updated_at": at("14:00"),
			}},
		}, func(t *testing.T, pr store.PullRequest) {
			require.Equal(t, store.ReviewApproved, pr.ReviewState)
		}},
		{"a dismissed review asks for review again", []delivery{
			{"pull_request_review", "pull_request_review_submitted", nil},
			{"pull_request_review", "pull_request_review_submitted", map[string]any{
				"action": "dismissed", "review.state": "dismissed", "pull_request.updated_at": at("14:00"),
			}},
		}, func(t *testing.T, pr store.PullRequest) {
			require.Equal(t, store.ReviewRequired, pr.ReviewState)
		}},
		{"requested reviewers require review", []delivery{
			{"pull_request", "pull_request_opened", map[string]any{
				"pull_request.requested_reviewers": []any{map[string]any{"login": "hubot"}},
			}},
		}, func(t *testing.T, pr store.PullRequest) {
			require.Equal(t, store.ReviewRequired, pr.ReviewState)
		}},
		{"check suite failure fails the checks", []delivery{
			{"pull_request", "pull_request_opened", nil},
			{"check_suite", "check_suite_completed", nil},
		}, func(t *testing.T, pr store.PullRequest) {
			require.Equal(t, store.ChecksFailure, pr.ChecksState)
		}},
		{"checks recorded before the pull request count", []delivery{
			{"check_suite", "check_suite_completed", nil},
			{"pull_request", "pull_request_opened", nil},
		}, func(t *testing.T, pr store.PullRequest) {
			require.Equal(t, store.ChecksFailure, pr.ChecksState)
		}},
		{"status pending makes the checks pending", []delivery{
			{"pull_request", "pull_request_opened", nil},
			{"status", "status", nil},
		}, func(t *testing.T, pr store.PullRequest) {
			require.Equal(t, store.ChecksPending, pr.ChecksState)
		}},
		{"status error fails the checks", []delivery{
			{"pull_request", "pull_request_opened", nil},
			{"status", "status", map[string]any{"state": "error"}},
		}, func(t *testing.T, pr store.PullRequest) {
			require.Equal(t, store.ChecksFailure, pr.ChecksState)
		}},
		{"a failed suite is not hidden by another suite's success", []delivery{
			{"pull_request", "pull_request_opened", nil},
			{"check_suite", "check_suite_completed", nil},
			{"check_suite", "check_suite_completed", map[string]any{
				"check_suite.id": 18563402462, "check_suite.conclusion": "success",
			}},
		}, func(t *testing.T, pr store.PullRequest) {
			require.Equal(t, store.ChecksFailure, pr.ChecksState)
		}},
		{"a rerun suite that passes clears its failure", []delivery{
			{"pull_request", "pull_request_opened", nil},
			{"check_suite", "check_suite_completed", nil},
			{"check_suite", "check_suite_completed", map[string]any{
				"check_suite.conclusion": "success", "check_suite.updated_at": at("12:30"),
			}},
		}, func(t *testing.T, pr store.PullRequest) {
			require.Equal(t, store.ChecksSuccess, pr.ChecksState)
		}},
		{"a check run started after its suite passed is pending", []delivery{
			{"pull_request", "pull_request_opened", nil},
			{"check_suite", "check_suite_completed", map[string]any{"check_suite.conclusion": "success"}},
			{"check_run", "check_run_created", map[string]any{"check_run.started_at": at("12:20")}},
		}, func(t *testing.T, pr store.PullRequest) {
			require.Equal(t, store.ChecksPending, pr.ChecksState)
		}},
		{"a late check run start does not undo its completion", []delivery{
			{"pull_request", "pull_request_opened", nil},
			{"check_run", "check_run_created", map[string]any{
				"action": "completed", "check_run.status": "completed", "check_run.conclusion": "skipped",
				"check_run.completed_at": at("12:02"),
			}},
			{"check_run", "check_run_created", nil},
		}, func(t *testing.T, pr store.PullRequest) {
			require.Equal(t, store.ChecksSuccess, pr.ChecksState)
		}},
		{"a new head starts with its own checks", []delivery{
			{"pull_request", "pull_request_opened", nil},
			{"check_suite", "check_suite_completed", nil},
			{"pull_request", "pull_request_opened", map[string]any{
				"action": "synchronize", "pull_request.updated_at": at("13:00"),
				"pull_request.head": map[string]any{"ref": testBranch, "sha": "0123456789abcdef0123456789abcdef01234567"},
			}},
		}, func(t *testing.T, pr store.PullRequest) {
			require.Equal(t, "0123456789abcdef0123456789abcdef01234567", pr.HeadSHA)
			require.Empty(t, pr.ChecksState)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forEachDialect(t, func(t *testing.T, db *testDB) {
				w, m := newTestWebhook(t, db.Store)
				task := db.task(t, testBranch)
				for i, d := range tc.steps {
					body := fixture(t, d.fixture, d.edits)
					requireStatus(t, http.StatusOK, deliver(w, d.event, "d-"+string(rune('a'+i)), body))
				}
				pr := db.mustPullRequest(t)
				require.Equal(t, task.ID, pr.TaskID)
				tc.check(t, pr)
				require.Equal(t, []string{task.ID}, m.take())
			})
		})
	}
}

func TestExplicitLinkWinsOverTheBranch(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testDB) {
		w, m := newTestWebhook(t, db.Store)
		db.task(t, testBranch)
		linked := db.task(t, "")
		db.link(t, linked.ID, testURL)

		requireStatus(t, http.StatusOK, deliver(w, "pull_request", "d-1", fixture(t, "pull_request_opened", nil)))
		require.Equal(t, linked.ID, db.mustPullRequest(t).TaskID)
		require.Equal(t, []string{linked.ID}, m.take())
	})
}

func TestALinkMovingToAnotherTaskMarksBoth(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testDB) {
		w, m := newTestWebhook(t, db.Store)
		first := db.task(t, testBranch)
		requireStatus(t, http.StatusOK, deliver(w, "pull_request", "d-1", fixture(t, "pull_request_opened", nil)))
		require.Equal(t, []string{first.ID}, m.take())

		second := db.task(t, "")
		db.link(t, second.ID, testURL)
		requireStatus(t, http.StatusOK, deliver(w, "pull_request_review", "d-2", fixture(t, "pull_request_review_submitted", nil)))
		require.Equal(t, second.ID, db.mustPullRequest(t).TaskID)
		want := []string{first.ID, second.ID}
		if want[0] > want[1] {
			want[0], want[1] = want[1], want[0]
		}
		require.Equal(t, want, m.take())
	})
}

func TestAPullRequestOfNoTaskIsNotStored(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testDB) {
		w, m := newTestWebhook(t, db.Store)
		db.task(t, "herd/ffffffff-other")
		requireStatus(t, http.StatusOK, deliver(w, "pull_request", "d-1", fixture(t, "pull_request_opened", nil)))
		_, stored := db.pullRequest(t)
		require.False(t, stored)
		require.Empty(t, m.take())
	})
}
