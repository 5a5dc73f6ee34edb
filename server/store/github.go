package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/herd-dev/herd/shared"
)

// CheckObservation is the state of one source of checks on one commit, as
// GitHub reported it at ObservedAt.
type CheckObservation struct {
	Repository string
	HeadSHA    string
	// Source names what is checked on the commit, such as a check suite or
	// a commit status context; the store only compares it.
	Source string
	// State is ChecksPending, ChecksSuccess or ChecksFailure.
	State string
	// ObservedAt orders the observations of one source: an older one never
	// replaces a newer. Zero means now.
	ObservedAt time.Time
}

// PullRequestTx is one transaction over pull requests and their checks, as
// ApplyDelivery and UpdatePullRequests open it. It is valid only inside the
// function they call, on that function's goroutine.
//
// On PostgreSQL the pull requests it reads stay locked until it ends, so
// that two transactions that read, change and save the same pull request
// take turns; on SQLite every transaction holds the write lock.
type PullRequestTx struct {
	tx       *gorm.DB
	postgres bool
	// held are the stored pull requests the transaction read or wrote. It
	// holds them locked, so they stay as it last saw them and saving one
	// need not read it again.
	held map[pullRequestKey]PullRequest
	// changed lists the tasks whose pull requests changed, without repeats.
	changed []string
}

// pullRequestKey identifies a pull request.
type pullRequestKey struct {
	repository string
	number     int
}

// ApplyDelivery records the GitHub webhook delivery deliveryID of event
// and calls apply, in one transaction: a delivery is recorded if and only
// if its effect is stored. A delivery recorded before is a replay: apply
// is not called and fresh is false. changedTasks are the tasks whose pull
// requests apply changed (both the previous and the new task of a pull
// request that moved), to be projected once the call returned. An error
// from apply rolls everything back, the delivery record included, and is
// returned as it is.
func (s *Store) ApplyDelivery(ctx context.Context, deliveryID, event string, apply func(*PullRequestTx) error) (fresh bool, changedTasks []string, err error) {
	if strings.TrimSpace(deliveryID) == "" || strings.TrimSpace(event) == "" {
		return false, nil, shared.Errorf(shared.CodeBadRequest, "a GitHub delivery needs an id and an event")
	}
	var t *PullRequestTx // nil for a replay
	err = s.write.WithContext(ctx).Transaction(func(db *gorm.DB) error {
		res := db.Exec(`INSERT INTO github_deliveries (delivery_id, event, received_at) VALUES (?, ?, ?)
			ON CONFLICT (delivery_id) DO NOTHING`, deliveryID, event, now())
		if res.Error != nil {
			return fmt.Errorf("record GitHub delivery %s: %w", deliveryID, res.Error)
		}
		if res.RowsAffected == 0 {
			return nil
		}
		t = s.pullRequestTx(db)
		return apply(t)
	})
	if err != nil || t == nil {
		return false, nil, err
	}
	return true, t.changed, nil
}

// UpdatePullRequests calls apply in one transaction and returns the tasks
// whose pull requests it changed, as ApplyDelivery does for a change that
// no webhook delivery carries (a poll of GitHub's API).
func (s *Store) UpdatePullRequests(ctx context.Context, apply func(*PullRequestTx) error) (changedTasks []string, err error) {
	var t *PullRequestTx
	err = s.write.WithContext(ctx).Transaction(func(db *gorm.DB) error {
		t = s.pullRequestTx(db)
		return apply(t)
	})
	if err != nil {
		return nil, err
	}
	return t.changed, nil
}

// pullRequestTx returns a PullRequestTx over the transaction db.
func (s *Store) pullRequestTx(db *gorm.DB) *PullRequestTx {
	return &PullRequestTx{tx: db, postgres: s.dialect == dialectPostgres, held: make(map[pullRequestKey]PullRequest)}
}

// PruneDeliveries deletes the webhook deliveries received before before,
// and the check observations stored before it, and returns how many rows
// it deleted. A delivery GitHub redelivers after its record was pruned is
// applied again.
func (s *Store) PruneDeliveries(ctx context.Context, before time.Time) (int64, error) {
	db := s.write.WithContext(ctx)
	at := dbTime(before)
	res := db.Exec(`DELETE FROM github_deliveries WHERE received_at < ?`, at)
	if res.Error != nil {
		return 0, fmt.Errorf("prune GitHub deliveries: %w", res.Error)
	}
	n := res.RowsAffected
	if res = db.Exec(`DELETE FROM github_checks WHERE updated_at < ?`, at); res.Error != nil {
		return n, fmt.Errorf("prune GitHub checks: %w", res.Error)
	}
	return n + res.RowsAffected, nil
}

// LinkedPullRequestURLs returns the distinct pull request URLs that tasks
// not archived link to explicitly (tasks.pull_request_url), in byte order.
func (s *Store) LinkedPullRequestURLs(ctx context.Context) ([]string, error) {
	var urls []string
	err := s.read.WithContext(ctx).Model(&taskRow{}).
		Where("pull_request_url IS NOT NULL AND pull_request_url <> '' AND archived = ?", false).
		Distinct("pull_request_url").Order("pull_request_url").Pluck("pull_request_url", &urls).Error
	if err != nil {
		return nil, fmt.Errorf("list linked pull request URLs: %w", err)
	}
	return urls, nil
}

// OpenPullRequests returns the open pull requests of tasks not archived,
// by repository and number.
func (s *Store) OpenPullRequests(ctx context.Context) ([]PullRequest, error) {
	prs, err := selectPullRequests(s.read.WithContext(ctx), `WHERE state = ? AND task_id IN (SELECT id FROM tasks WHERE archived = ?)
		ORDER BY repository, number`, PullRequestOpen, false)
	if err != nil {
		return nil, fmt.Errorf("list open pull requests: %w", err)
	}
	return prs, nil
}

// BranchToDiscover is a working branch of a task's repository that no
// stored pull request has as its head: the Poller asks GitHub for its pull
// requests.
type BranchToDiscover struct {
	TaskID string
	// Path is the repository's local path (task_repositories.path), whose
	// origin remote names its GitHub repository.
	Path   string
	Branch string
}

// BranchesToDiscover returns the working branches of the repositories of
// tasks not archived that no stored pull request, of any task or none,
// has as its head branch, by path, branch and task. A branch leaves the
// list once a pull request of it is stored.
func (s *Store) BranchesToDiscover(ctx context.Context) ([]BranchToDiscover, error) {
	var out []BranchToDiscover
	err := s.read.WithContext(ctx).Raw(`SELECT r.task_id, r.path, r.branch
		FROM task_repositories r JOIN tasks t ON t.id = r.task_id
		WHERE t.archived = ? AND r.branch <> ''
			AND NOT EXISTS (SELECT 1 FROM pull_requests p WHERE p.head_branch = r.branch)
		ORDER BY r.path, r.branch, r.task_id`, false).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("list branches to discover: %w", err)
	}
	return out, nil
}

// UpsertPullRequest stores a pull request by repository and number,
// replacing every field of a stored one, and returns the task the stored
// one belonged to ("" when none was stored or it had no task): when the
// pull request moved, both tasks need projecting. A zero UpdatedAt means
// now.
func (s *Store) UpsertPullRequest(ctx context.Context, pr PullRequest) (previousTaskID string, err error) {
	err = s.write.WithContext(ctx).Transaction(func(db *gorm.DB) error {
		prev, err := s.pullRequestTx(db).save(pr)
		previousTaskID = prev.TaskID
		return err
	})
	if err != nil {
		return "", err
	}
	return previousTaskID, nil
}

// PullRequest returns the stored pull request number of repository; ok is
// false when there is none.
func (t *PullRequestTx) PullRequest(repository string, number int) (pr PullRequest, ok bool, err error) {
	if pr, ok := t.held[pullRequestKey{repository, number}]; ok {
		return pr, true, nil
	}
	prs, err := t.hold(`WHERE repository = ? AND number = ?`, repository, number)
	if err != nil {
		return PullRequest{}, false, fmt.Errorf("load pull request %s#%d: %w", repository, number, err)
	}
	if len(prs) == 0 {
		return PullRequest{}, false, nil
	}
	return prs[0], true, nil
}

// PullRequestsAt returns the stored pull requests of repository whose head
// is the commit sha, by number.
func (t *PullRequestTx) PullRequestsAt(repository, sha string) ([]PullRequest, error) {
	if sha == "" {
		return nil, nil
	}
	prs, err := t.hold(`WHERE repository = ? AND head_sha = ? ORDER BY number`, repository, sha)
	if err != nil {
		return nil, fmt.Errorf("load pull requests of %s at %s: %w", repository, sha, err)
	}
	return prs, nil
}

// LinkedTask returns the task a pull request belongs to: the task whose
// pull_request_url is url, else the task with a repository whose working
// branch is headBranch, else "". Among several matches the newest task
// (created_at, then id) wins: herd names branches herd/<task id
// prefix>-<slug>, so several matches mean a link was copied to a newer
// task on purpose. Archived tasks still own their pull requests.
func (t *PullRequestTx) LinkedTask(url, headBranch string) (string, error) {
	var ids []string
	if url != "" {
		err := t.tx.Model(&taskRow{}).Where("pull_request_url = ?", url).
			Order("created_at DESC, id DESC").Limit(1).Pluck("id", &ids).Error
		if err != nil {
			return "", fmt.Errorf("find the task linked to %s: %w", url, err)
		}
		if len(ids) > 0 {
			return ids[0], nil
		}
	}
	if headBranch == "" {
		return "", nil
	}
	err := t.tx.Raw(`SELECT t.id FROM tasks t JOIN task_repositories r ON r.task_id = t.id
		WHERE r.branch = ? ORDER BY t.created_at DESC, t.id DESC LIMIT 1`, headBranch).Scan(&ids).Error
	if err != nil {
		return "", fmt.Errorf("find the task of branch %s: %w", headBranch, err)
	}
	if len(ids) > 0 {
		return ids[0], nil
	}
	return "", nil
}

// SavePullRequest stores pr as UpsertPullRequest does. When the stored
// pull request differs, the task it belonged to and pr's task count as
// changed; an identical one is not rewritten.
func (t *PullRequestTx) SavePullRequest(pr PullRequest) error {
	_, err := t.save(pr)
	return err
}

// save stores pr unless the stored one is identical, records the changed
// tasks and returns the stored one (zero when none was stored).
func (t *PullRequestTx) save(pr PullRequest) (prev PullRequest, err error) {
	if err := pr.validate(); err != nil {
		return PullRequest{}, err
	}
	if pr.UpdatedAt.IsZero() {
		pr.UpdatedAt = now()
	}
	pr.UpdatedAt = dbTime(pr.UpdatedAt)
	prev, found, err := t.PullRequest(pr.Repository, pr.Number)
	if err != nil || (found && prev.same(pr)) {
		return prev, err
	}
	err = t.tx.Exec(`INSERT INTO pull_requests
			(id, task_id, repository, number, url, head_branch, head_sha, state, draft, merged, checks_state,
			review_state, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (repository, number) DO UPDATE SET task_id = excluded.task_id, url = excluded.url,
			head_branch = excluded.head_branch, head_sha = excluded.head_sha, state = excluded.state,
			draft = excluded.draft, merged = excluded.merged, checks_state = excluded.checks_state,
			review_state = excluded.review_state, updated_at = excluded.updated_at`,
		NewID(), optional(pr.TaskID), pr.Repository, pr.Number, pr.URL, pr.HeadBranch, pr.HeadSHA, pr.State,
		pr.Draft, pr.Merged, pr.ChecksState, pr.ReviewState, pr.UpdatedAt).Error
	if err != nil {
		if isForeignKeyViolation(err) {
			return PullRequest{}, taskNotFound(pr.TaskID)
		}
		return PullRequest{}, fmt.Errorf("store pull request %s#%d: %w", pr.Repository, pr.Number, err)
	}
	t.held[pullRequestKey{pr.Repository, pr.Number}] = pr
	t.touch(prev.TaskID, pr.TaskID)
	return prev, nil
}

// RecordCheck stores c as the state of its source on its commit, unless
// the stored observation of that source is newer. applied reports whether
// c was stored.
func (t *PullRequestTx) RecordCheck(c CheckObservation) (applied bool, err error) {
	switch {
	case c.Repository == "" || c.HeadSHA == "" || c.Source == "":
		return false, shared.Errorf(shared.CodeBadRequest, "a check needs a repository, a commit and a source")
	case c.State != ChecksPending && c.State != ChecksSuccess && c.State != ChecksFailure:
		return false, shared.Errorf(shared.CodeBadRequest, "check state %q is not pending, success or failure", c.State)
	}
	stored := now()
	if c.ObservedAt.IsZero() {
		c.ObservedAt = stored
	}
	res := t.tx.Exec(`INSERT INTO github_checks (repository, head_sha, source, state, observed_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (repository, head_sha, source) DO UPDATE SET state = excluded.state,
			observed_at = excluded.observed_at, updated_at = excluded.updated_at
		WHERE github_checks.observed_at <= excluded.observed_at`,
		c.Repository, c.HeadSHA, c.Source, c.State, dbTime(c.ObservedAt), stored)
	if res.Error != nil {
		return false, fmt.Errorf("record check %s of %s at %s: %w", c.Source, c.Repository, c.HeadSHA, res.Error)
	}
	return res.RowsAffected > 0, nil
}

// CheckStates returns the distinct states of the check sources recorded
// on the commit sha of repository, in byte order.
func (t *PullRequestTx) CheckStates(repository, sha string) ([]string, error) {
	var states []string
	err := t.tx.Raw(`SELECT DISTINCT state FROM github_checks WHERE repository = ? AND head_sha = ?`,
		repository, sha).Scan(&states).Error
	if err != nil {
		return nil, fmt.Errorf("load checks of %s at %s: %w", repository, sha, err)
	}
	slices.Sort(states)
	return states, nil
}

// hold reads the pull requests that where (a WHERE clause and an order)
// selects and keeps them locked until the transaction ends: PostgreSQL
// needs FOR UPDATE for that; SQLite has none and needs none, since its
// transactions hold the write lock.
func (t *PullRequestTx) hold(where string, args ...any) ([]PullRequest, error) {
	if t.postgres {
		where += " FOR UPDATE"
	}
	prs, err := selectPullRequests(t.tx, where, args...)
	for _, pr := range prs {
		t.held[pullRequestKey{pr.Repository, pr.Number}] = pr
	}
	return prs, err
}

// touch records the non-empty task ids as changed.
func (t *PullRequestTx) touch(ids ...string) {
	for _, id := range ids {
		if id != "" && !slices.Contains(t.changed, id) {
			t.changed = append(t.changed, id)
		}
	}
}

// validate refuses a pull request whose identity or states the store
// cannot keep.
func (pr PullRequest) validate() error {
	switch {
	case strings.TrimSpace(pr.Repository) == "":
		return shared.Errorf(shared.CodeBadRequest, "pull request repository is required")
	case pr.Number <= 0:
		return shared.Errorf(shared.CodeBadRequest, "pull request number must be positive")
	case pr.State != PullRequestOpen && pr.State != PullRequestClosed:
		return shared.Errorf(shared.CodeBadRequest, "pull request state %q is not open or closed", pr.State)
	}
	switch pr.ChecksState {
	case "", ChecksPending, ChecksSuccess, ChecksFailure:
	default:
		return shared.Errorf(shared.CodeBadRequest, "pull request checks state %q is not pending, success or failure", pr.ChecksState)
	}
	switch pr.ReviewState {
	case "", ReviewRequired, ReviewApproved, ReviewChangesRequested:
	default:
		return shared.Errorf(shared.CodeBadRequest, "pull request review state %q is not review_required, approved or changes_requested", pr.ReviewState)
	}
	return nil
}

// selectPullRequests reads the pull requests that the clauses following
// FROM pull_requests (a WHERE clause, an order, a lock) select.
func selectPullRequests(db *gorm.DB, clauses string, args ...any) ([]PullRequest, error) {
	rows, err := db.Raw(`SELECT task_id, repository, number, url, head_branch, head_sha, state, draft, merged,
		checks_state, review_state, updated_at FROM pull_requests `+clauses, args...).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []PullRequest
	for rows.Next() {
		var pr PullRequest
		var task sql.NullString
		var at nullTime
		err := rows.Scan(&task, &pr.Repository, &pr.Number, &pr.URL, &pr.HeadBranch, &pr.HeadSHA, &pr.State,
			&pr.Draft, &pr.Merged, &pr.ChecksState, &pr.ReviewState, &at)
		if err != nil {
			return nil, err
		}
		pr.TaskID, pr.UpdatedAt = task.String, at.t
		out = append(out, pr)
	}
	return out, classify(rows.Err())
}

// same reports whether pr and o hold the same values.
func (pr PullRequest) same(o PullRequest) bool {
	a, b := pr, o
	a.UpdatedAt, b.UpdatedAt = time.Time{}, time.Time{}
	return a == b && pr.UpdatedAt.Equal(o.UpdatedAt)
}
