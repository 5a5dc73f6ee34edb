package github

import (
	"slices"

	"github.com/herd-dev/herd/server/store"
)

// change is what one delivery or one poll says, applied in one store
// transaction.
type change interface {
	apply(tx *store.PullRequestTx) error
}

// pullRequestChange is what GitHub says about one pull request.
type pullRequestChange struct {
	repository string
	pr         pullRequestJSON
	// review replaces the stored review state; nil leaves it.
	review *string
}

// apply stores the pull request unless the stored one is newer, linked to
// the task that owns it now. A pull request that no task owns is stored
// only when it was stored before (it is then unlinked): herd keeps the
// pull requests of its tasks, not every pull request a webhook reports.
func (c pullRequestChange) apply(tx *store.PullRequestTx) error {
	stored, found, err := tx.PullRequest(c.repository, c.pr.Number)
	if err != nil {
		return err
	}
	if found && c.pr.UpdatedAt.Before(stored.UpdatedAt) {
		return nil
	}
	task, err := tx.LinkedTask(c.pr.HTMLURL, c.pr.Head.Ref)
	if err != nil {
		return err
	}
	if !found && task == "" {
		return nil
	}
	next := stored
	next.TaskID, next.Repository, next.Number = task, c.repository, c.pr.Number
	next.URL, next.HeadBranch, next.UpdatedAt = c.pr.HTMLURL, c.pr.Head.Ref, c.pr.UpdatedAt
	next.State, next.Draft, next.Merged = c.pr.State, c.pr.Draft, c.pr.Merged || c.pr.MergedAt != nil
	if !found || next.HeadSHA != c.pr.Head.SHA {
		// A new head has none of the old head's checks, only those already
		// recorded on it.
		states, err := tx.CheckStates(c.repository, c.pr.Head.SHA)
		if err != nil {
			return err
		}
		next.HeadSHA, next.ChecksState = c.pr.Head.SHA, aggregate(states)
	}
	switch {
	case c.review != nil:
		next.ReviewState = *c.review
	case next.ReviewState == "" && len(c.pr.RequestedReviewers)+len(c.pr.RequestedTeams) > 0:
		next.ReviewState = store.ReviewRequired
	}
	return tx.SavePullRequest(next)
}

// checkChange is a new state of one check source on one commit.
type checkChange struct {
	obs store.CheckObservation
}

// apply records the observation and, when it is the newest of its source,
// updates the checks state of the pull requests whose head is its commit.
// The pull requests are read (and on PostgreSQL locked) first, so that a
// concurrent change to the same commit's checks waits and then aggregates
// this one too.
func (c checkChange) apply(tx *store.PullRequestTx) error {
	prs, err := tx.PullRequestsAt(c.obs.Repository, c.obs.HeadSHA)
	if err != nil {
		return err
	}
	applied, err := tx.RecordCheck(c.obs)
	if err != nil || !applied {
		return err
	}
	return refreshChecks(tx, c.obs.Repository, c.obs.HeadSHA, prs)
}

// pollChange is what one poll found about a pull request and its head
// commit's checks.
type pollChange struct {
	pr     pullRequestChange
	checks []store.CheckObservation
}

// apply stores the pull request, records the checks and updates the checks
// state of the pull requests whose head is the polled head.
func (c pollChange) apply(tx *store.PullRequestTx) error {
	if err := c.pr.apply(tx); err != nil {
		return err
	}
	for _, obs := range c.checks {
		if _, err := tx.RecordCheck(obs); err != nil {
			return err
		}
	}
	prs, err := tx.PullRequestsAt(c.pr.repository, c.pr.pr.Head.SHA)
	if err != nil {
		return err
	}
	return refreshChecks(tx, c.pr.repository, c.pr.pr.Head.SHA, prs)
}

// refreshChecks sets the checks state of prs, pull requests whose head is
// the commit sha of repository, to the aggregate of that commit's checks.
func refreshChecks(tx *store.PullRequestTx, repository, sha string, prs []store.PullRequest) error {
	if len(prs) == 0 {
		return nil
	}
	states, err := tx.CheckStates(repository, sha)
	if err != nil {
		return err
	}
	state := aggregate(states)
	for _, pr := range prs {
		if pr.ChecksState == state {
			continue
		}
		pr.ChecksState = state
		if err := tx.SavePullRequest(pr); err != nil {
			return err
		}
	}
	return nil
}

// aggregate is the checks state of a commit whose check sources are in
// states: failure when any failed, else pending when any runs, else
// success when any passed, else "" (no checks).
func aggregate(states []string) string {
	for _, s := range []string{store.ChecksFailure, store.ChecksPending, store.ChecksSuccess} {
		if slices.Contains(states, s) {
			return s
		}
	}
	return ""
}
