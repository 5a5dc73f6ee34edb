package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/herd-dev/herd/shared"
)

// errorPreviewChars bounds the characters of an error's content that
// SummarySources reads: far more than a preview of
// shared.MaxErrorPreviewBytes needs, however the content is encoded.
const errorPreviewChars = 2048

// SummarySource is everything a task's status summary derives from, read
// from the authoritative rows.
type SummarySource struct {
	TaskID, WorkspaceID string
	// PrimarySessionID is empty while the task has no primary session.
	PrimarySessionID string
	// AgentLine and PromptLine are the primary session's excerpts of its
	// newest complete agent message and of its newest sent prompt (see
	// previewExcerpt): at most 512 characters each, "" while it has none
	// (and while the task has no primary session).
	AgentLine, PromptLine string
	// ErrorDismissedAt hides every agent error that occurred at or before
	// it; nil when no error was dismissed.
	ErrorDismissedAt *time.Time
	// Sessions are the task's sessions, oldest first, with their usage
	// and cost (the summary's cost sums them) but without their titles.
	Sessions []shared.Session
	// Pending are the unanswered permission and clarification requests of
	// the task's sessions, by session and seq.
	Pending []PendingRequest
	// QueuedPrompts counts the prompts waiting for dispatch across the
	// task's sessions.
	QueuedPrompts int
	// NewestError is the task's newest agent error after ErrorDismissedAt;
	// nil when there is none.
	NewestError *ErrorOccurrence
	// AnsweredError is true when an agent message with a greater seq than
	// NewestError's exists in NewestError's session.
	AnsweredError bool
	// Repositories are the task's repositories in position order, each with
	// its latest successful observation.
	Repositories []RepositoryObservation
	// PullRequests are the task's pull requests by number.
	PullRequests []PullRequest
	// Revision is the stored summary's revision: 0 when the row is missing.
	Revision int64
	// Current is the stored summary; nil when the row is missing or its
	// payload cannot be decoded (a projection then replaces it).
	Current *shared.TaskStatusSummary
}

// PendingRequest is an unanswered permission or clarification request.
type PendingRequest struct {
	SessionID, MessageID, PendingID string
	Type                            shared.MessageType
	Seq                             int64
	// Content is the start of the request's content (a permission's
	// title, a clarification's question): at most 512 characters.
	Content string
}

// ErrorOccurrence is an agent error message.
type ErrorOccurrence struct {
	SessionID string
	// MessageID is the error's message id, the stamp that error.dismiss names.
	MessageID  string
	Seq        int64
	OccurredAt time.Time
	// Content is the start of the message's content: at least the first
	// 2,048 characters.
	Content string
}

// RepositoryObservation is a task repository with its latest successful
// git observation.
type RepositoryObservation struct {
	RepositoryID string
	// Observation is nil until the repository has been observed
	// successfully. A failed observation never replaces it.
	Observation *GitObservation
}

// GitObservation is one observation of a task repository's working tree
// against its base branch.
type GitObservation struct {
	// ObservedAt orders observations; zero means now.
	ObservedAt                         time.Time
	Additions, Deletions, ChangedFiles int
	Ahead, Behind                      int
	// ComparisonUnavailable is true when Ahead and Behind are unknown (no
	// base branch to compare with).
	ComparisonUnavailable bool
	// UpstreamAhead and UpstreamBehind count commits against the branch's
	// upstream; nil when it has none.
	UpstreamAhead, UpstreamBehind *int
	// Error is non-empty for a failed observation, whose totals mean
	// nothing.
	Error string
}

// Pull request states (PullRequest.State).
const (
	PullRequestOpen   = "open"
	PullRequestClosed = "closed"
)

// Check suite states (PullRequest.ChecksState); empty means no checks.
const (
	ChecksPending = "pending"
	ChecksSuccess = "success"
	ChecksFailure = "failure"
)

// Review states (PullRequest.ReviewState); empty means no review asked for.
const (
	ReviewRequired         = "review_required"
	ReviewApproved         = "approved"
	ReviewChangesRequested = "changes_requested"
)

// PullRequest is a pull request as the store keeps it, identified by
// repository and number.
type PullRequest struct {
	// TaskID is the task the pull request belongs to; empty when none.
	TaskID     string
	Repository string
	Number     int
	URL        string
	HeadBranch string
	// HeadSHA is the commit at the head of HeadBranch; empty when unknown.
	// SummarySources leaves it empty: no summary derives from it.
	HeadSHA string
	// State is PullRequestOpen or PullRequestClosed; a merged pull request
	// is closed and Merged.
	State       string
	Draft       bool
	Merged      bool
	ChecksState string
	ReviewState string
	UpdatedAt   time.Time
}

// SummarySources reads the sources of the given tasks' summaries, in the
// order of taskIDs; ids naming no task are left out, repeated ids are read
// once. It takes seven queries per 10,000 tasks whatever their sessions,
// messages, repositories and pull requests, and reads no transcript: of
// the messages only the pending requests, the newest error and the primary
// session's two excerpts (a column of its row), each bounded.
//
// Each task's summary row is read before its source rows, so that a caller
// that derives a summary from them and stores it with
// WriteSummary(…, Revision, …) cannot replace a summary derived from newer
// sources: a writer that read newer sources read the revision no earlier,
// and its write bumped the revision this caller expects. Every statement
// sees what was committed before it began, so the reads go through the
// reader pool and never queue behind the single SQLite writer.
func (s *Store) SummarySources(ctx context.Context, taskIDs []string) ([]SummarySource, error) {
	ids := unique(taskIDs)
	out := make([]SummarySource, 0, len(ids))
	for start := 0; start < len(ids); start += maxIDsPerQuery {
		chunk := ids[start:min(start+maxIDsPerQuery, len(ids))]
		srcs, err := s.summarySources(ctx, chunk)
		if err != nil {
			// Rows read by hand can fail mid-read on a lost connection.
			return nil, classify(err)
		}
		out = append(out, srcs...)
	}
	return out, nil
}

// summarySources reads the sources of at most maxIDsPerQuery distinct tasks.
func (s *Store) summarySources(ctx context.Context, ids []string) ([]SummarySource, error) {
	db := s.read.WithContext(ctx)
	srcs, index, err := loadSummaryRows(db, ids)
	if err != nil || len(srcs) == 0 {
		return srcs, err
	}
	// Only the tasks that exist: the remaining queries bind no missing id.
	ids = make([]string, len(srcs))
	for i := range srcs {
		ids[i] = srcs[i].TaskID
	}
	for _, load := range []func(*gorm.DB, []string, []SummarySource, map[string]int) error{
		loadSourceSessions, loadPendingRequests, loadQueuedPrompts, loadNewestErrors,
		loadRepositoryObservations, loadPullRequests,
	} {
		if err := load(db, ids, srcs, index); err != nil {
			return nil, err
		}
	}
	return srcs, nil
}

// loadSummaryRows reads the tasks named by ids together with their summary
// rows (in one statement, so the revision is never read after a source
// row) and their primary session's excerpts (a primary key lookup each),
// in the order of ids.
func loadSummaryRows(db *gorm.DB, ids []string) ([]SummarySource, map[string]int, error) {
	rows, err := db.Raw(`SELECT t.id, t.workspace_id, t.primary_session_id, t.error_dismissed_at, s.revision, s.payload,
			p.last_agent_line, p.last_prompt_line
		FROM tasks t LEFT JOIN task_status_summaries s ON s.task_id = t.id
			LEFT JOIN sessions p ON p.id = t.primary_session_id
		WHERE t.id IN ?`, ids).Rows()
	if err != nil {
		return nil, nil, fmt.Errorf("load summaries: %w", err)
	}
	defer rows.Close()
	found := make(map[string]SummarySource, len(ids))
	for rows.Next() {
		var (
			src      SummarySource
			primary  sql.NullString
			revision sql.NullInt64
			payload  []byte
			event    nullTime
			agent    sql.NullString
			prompt   sql.NullString
		)
		if err := rows.Scan(&src.TaskID, &src.WorkspaceID, &primary, &event, &revision, &payload, &agent, &prompt); err != nil {
			return nil, nil, fmt.Errorf("load summaries: %w", err)
		}
		src.PrimarySessionID = primary.String
		src.AgentLine, src.PromptLine = agent.String, prompt.String
		src.ErrorDismissedAt = event.ptr()
		if revision.Valid {
			src.Revision = revision.Int64
			// An unreadable payload is replaced by the next projection,
			// which still compares and updates against the stored revision.
			src.Current, _ = decodeSummary(src.TaskID, payload)
		}
		found[src.TaskID] = src
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("load summaries: %w", err)
	}
	srcs := make([]SummarySource, 0, len(found))
	index := make(map[string]int, len(found))
	for _, id := range ids {
		if src, ok := found[id]; ok {
			index[id] = len(srcs)
			srcs = append(srcs, src)
		}
	}
	return srcs, index, nil
}

// loadSourceSessions sets the sessions of each task, oldest first.
func loadSourceSessions(db *gorm.DB, ids []string, srcs []SummarySource, index map[string]int) error {
	rows, err := db.Raw(`SELECT id, task_id, agent_profile_id, state, foreground_activity, active_subagent_count,
			state_revision, error_message, created_at, updated_at,
			has_usage, context_used, context_size, cost_amount, cost_currency
		FROM sessions WHERE task_id IN ? ORDER BY task_id, created_at, id`, ids).Rows()
	if err != nil {
		return fmt.Errorf("load sessions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r sessionRow
		var created, updated nullTime
		err := rows.Scan(&r.ID, &r.TaskID, &r.AgentProfileID, &r.State, &r.ForegroundActivity, &r.ActiveSubagentCount,
			&r.StateRevision, &r.ErrorMessage, &created, &updated,
			&r.HasUsage, &r.ContextUsed, &r.ContextSize, &r.CostAmount, &r.CostCurrency)
		if err != nil {
			return fmt.Errorf("load sessions: %w", err)
		}
		r.CreatedAt, r.UpdatedAt = created.t, updated.t
		src := &srcs[index[r.TaskID]]
		src.Sessions = append(src.Sessions, r.toSession())
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load sessions: %w", err)
	}
	return nil
}

// loadPendingRequests sets the unanswered requests of each task.
func loadPendingRequests(db *gorm.DB, ids []string, srcs []SummarySource, index map[string]int) error {
	rows, err := db.Raw(`SELECT task_id, session_id, id, pending_id, type, seq, substr(content, 1, ?) FROM messages
		WHERE task_id IN ? AND type IN ? AND status = ? ORDER BY task_id, session_id, seq`,
		previewSourceChars, ids, []string{string(shared.MessagePermissionRequest), string(shared.MessageClarificationRequest)},
		string(shared.MessagePending)).Rows()
	if err != nil {
		return fmt.Errorf("load pending requests: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var taskID string
		var p PendingRequest
		var pendingID sql.NullString
		if err := rows.Scan(&taskID, &p.SessionID, &p.MessageID, &pendingID, &p.Type, &p.Seq, &p.Content); err != nil {
			return fmt.Errorf("load pending requests: %w", err)
		}
		p.PendingID = pendingID.String
		src := &srcs[index[taskID]]
		src.Pending = append(src.Pending, p)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load pending requests: %w", err)
	}
	return nil
}

// loadQueuedPrompts counts the prompts waiting for dispatch in each task.
// The join reaches them through messages_dispatch (session_id,
// dispatch_state).
func loadQueuedPrompts(db *gorm.DB, ids []string, srcs []SummarySource, index map[string]int) error {
	rows, err := db.Raw(`SELECT s.task_id, COUNT(*) FROM sessions s JOIN messages m ON m.session_id = s.id
		WHERE s.task_id IN ? AND m.dispatch_state = ? GROUP BY s.task_id`, ids, dispatchPending).Rows()
	if err != nil {
		return fmt.Errorf("load queued prompts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var taskID string
		var n int
		if err := rows.Scan(&taskID, &n); err != nil {
			return fmt.Errorf("load queued prompts: %w", err)
		}
		srcs[index[taskID]].QueuedPrompts = n
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load queued prompts: %w", err)
	}
	return nil
}

// loadNewestErrors sets each task's newest undismissed agent error and
// whether an agent message answered it. Errors of one task may come from
// several sessions, whose seqs do not compare: the newest is the latest
// created (then the greatest id, which is time-ordered).
func loadNewestErrors(db *gorm.DB, ids []string, srcs []SummarySource, index map[string]int) error {
	rows, err := db.Raw(`SELECT e.task_id, e.session_id, e.id, e.seq, e.created_at, e.content,
			EXISTS (SELECT 1 FROM messages a WHERE a.session_id = e.session_id AND a.type = ? AND a.seq > e.seq)
		FROM (
			SELECT m.task_id, m.session_id, m.id, m.seq, m.created_at, substr(m.content, 1, ?) AS content,
				ROW_NUMBER() OVER (PARTITION BY m.task_id ORDER BY m.created_at DESC, m.id DESC) AS rn
			FROM messages m JOIN tasks t ON t.id = m.task_id
			WHERE m.task_id IN ? AND m.type = ?
				AND (t.error_dismissed_at IS NULL OR m.created_at > t.error_dismissed_at)
		) e WHERE e.rn = 1`,
		string(shared.MessageAgent), errorPreviewChars, ids, string(shared.MessageError)).Rows()
	if err != nil {
		return fmt.Errorf("load agent errors: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var taskID string
		var e ErrorOccurrence
		var at nullTime
		var answered bool
		if err := rows.Scan(&taskID, &e.SessionID, &e.MessageID, &e.Seq, &at, &e.Content, &answered); err != nil {
			return fmt.Errorf("load agent errors: %w", err)
		}
		e.OccurredAt = at.t
		src := &srcs[index[taskID]]
		src.NewestError, src.AnsweredError = &e, answered
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load agent errors: %w", err)
	}
	return nil
}

// loadRepositoryObservations sets each task's repositories with their
// latest successful observation. The correlated subquery walks
// git_observations_latest from the newest row and stops at the first
// success, so its cost does not grow with a repository's history.
func loadRepositoryObservations(db *gorm.DB, ids []string, srcs []SummarySource, index map[string]int) error {
	rows, err := db.Raw(`SELECT r.task_id, r.id, o.observed_at, o.additions, o.deletions, o.changed_files,
			o.ahead, o.behind, o.comparison_unavailable
		FROM task_repositories r
		LEFT JOIN git_observations o ON o.id = (
			SELECT g.id FROM git_observations g WHERE g.task_repository_id = r.id AND g.error = ''
			ORDER BY g.observed_at DESC, g.id DESC LIMIT 1)
		WHERE r.task_id IN ? ORDER BY r.task_id, r.position`, ids).Rows()
	if err != nil {
		return fmt.Errorf("load git observations: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var taskID string
		var r RepositoryObservation
		var at nullTime
		var add, del, changed, ahead, behind sql.NullInt64
		var unavailable sql.NullBool
		err := rows.Scan(&taskID, &r.RepositoryID, &at, &add, &del, &changed, &ahead, &behind, &unavailable)
		if err != nil {
			return fmt.Errorf("load git observations: %w", err)
		}
		if at.valid {
			r.Observation = &GitObservation{
				ObservedAt: at.t, Additions: int(add.Int64), Deletions: int(del.Int64), ChangedFiles: int(changed.Int64),
				Ahead: int(ahead.Int64), Behind: int(behind.Int64), ComparisonUnavailable: unavailable.Bool,
			}
		}
		src := &srcs[index[taskID]]
		src.Repositories = append(src.Repositories, r)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load git observations: %w", err)
	}
	return nil
}

// loadPullRequests sets each task's pull requests, by number.
func loadPullRequests(db *gorm.DB, ids []string, srcs []SummarySource, index map[string]int) error {
	prs, err := selectPullRequests(db, "WHERE task_id IN ? ORDER BY task_id, number, repository", ids)
	if err != nil {
		return fmt.Errorf("load pull requests: %w", err)
	}
	for _, pr := range prs {
		src := &srcs[index[pr.TaskID]]
		src.PullRequests = append(src.PullRequests, pr)
	}
	return nil
}

// WriteSummary stores next as the task's summary provided the stored
// revision is still expected (0 = the row is missing: insert it; a
// concurrent insert makes it report false). It reports false, writing
// nothing, when another writer got there first. next.Revision must exceed
// expected; next.UpdatedAt, stored with microsecond precision, stamps the
// row.
func (s *Store) WriteSummary(ctx context.Context, taskID, workspaceID string, expected int64, next shared.TaskStatusSummary) (bool, error) {
	if next.Revision <= expected {
		return false, fmt.Errorf("write summary of task %s: revision %d does not follow %d", taskID, next.Revision, expected)
	}
	if next.UpdatedAt.IsZero() {
		next.UpdatedAt = now()
	}
	next.UpdatedAt = dbTime(next.UpdatedAt)
	payload, err := json.Marshal(next)
	if err != nil {
		return false, fmt.Errorf("encode summary of task %s: %w", taskID, err)
	}
	db := s.write.WithContext(ctx)
	var res *gorm.DB
	if expected == 0 {
		// A row holding revision 0 counts as missing too, so that no stored
		// value makes every write fail.
		res = db.Exec(`INSERT INTO task_status_summaries (task_id, workspace_id, revision, payload, updated_at)
			VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (task_id) DO UPDATE SET workspace_id = excluded.workspace_id, revision = excluded.revision,
				payload = excluded.payload, updated_at = excluded.updated_at
			WHERE task_status_summaries.revision = 0`,
			taskID, workspaceID, next.Revision, string(payload), next.UpdatedAt)
	} else {
		res = db.Exec(`UPDATE task_status_summaries SET revision = ?, payload = ?, updated_at = ?
			WHERE task_id = ? AND revision = ?`,
			next.Revision, string(payload), next.UpdatedAt, taskID, expected)
	}
	if res.Error != nil {
		if isForeignKeyViolation(res.Error) {
			return false, taskNotFound(taskID)
		}
		return false, fmt.Errorf("write summary of task %s: %w", taskID, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// DismissError hides the task's agent error `stamp` (a message id of type
// error in that task; otherwise not_found) and every earlier one:
// tasks.error_dismissed_at moves forward to that message's created_at,
// never back. Dismissing an error already hidden changes nothing.
func (s *Store) DismissError(ctx context.Context, taskID, stamp string) error {
	db := s.write.WithContext(ctx)
	var at []time.Time
	err := db.Model(&messageRow{}).Where("id = ? AND task_id = ? AND type = ?", stamp, taskID, string(shared.MessageError)).
		Pluck("created_at", &at).Error
	if err != nil {
		return fmt.Errorf("load agent error %s: %w", stamp, err)
	}
	if len(at) == 0 {
		return shared.Errorf(shared.CodeNotFound, "no agent error %q in task %q", stamp, taskID)
	}
	err = db.Model(&taskRow{}).
		Where("id = ? AND (error_dismissed_at IS NULL OR error_dismissed_at < ?)", taskID, at[0]).
		UpdateColumn("error_dismissed_at", at[0]).Error
	if err != nil {
		return fmt.Errorf("dismiss agent error %s: %w", stamp, err)
	}
	return nil
}

// AllTaskIDs calls fn with the id of every task, archived or not, in
// batches of at most n (ascending id order), so that memory stays bounded
// by one batch whatever the number of tasks. Each batch is one keyset
// query issued after fn returned for the previous one; tasks created
// meanwhile may or may not be included. An error from fn stops the walk
// and is returned.
func (s *Store) AllTaskIDs(ctx context.Context, n int, fn func(ids []string) error) error {
	if n <= 0 {
		return fmt.Errorf("list task ids: batch size %d is not positive", n)
	}
	after := ""
	for {
		ids := make([]string, 0, n)
		err := s.read.WithContext(ctx).Model(&taskRow{}).Where("id > ?", after).Order("id").Limit(n).Pluck("id", &ids).Error
		if err != nil {
			return fmt.Errorf("list task ids: %w", err)
		}
		if len(ids) == 0 {
			return nil
		}
		if err := fn(ids); err != nil {
			return err
		}
		if len(ids) < n {
			return nil
		}
		after = ids[len(ids)-1]
	}
}

// unique returns ids without repeats, in first-seen order.
func unique(ids []string) []string {
	seen := make(map[string]struct{}, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if _, ok := seen[id]; !ok {
			seen[id] = struct{}{}
			out = append(out, id)
		}
	}
	return out
}

// nullTime scans a nullable time column. It accepts the text SQLite hands
// back where a column's declared type is lost (a subquery's column), as
// well as the drivers' time.Time, and converts to UTC.
type nullTime struct {
	t     time.Time
	valid bool
}

// sqliteTimeLayouts are the layouts mattn/go-sqlite3 writes and parses.
var sqliteTimeLayouts = []string{
	"2006-01-02 15:04:05.999999999-07:00",
	"2006-01-02T15:04:05.999999999-07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05",
	"2006-01-02T15:04:05",
}

// Scan implements sql.Scanner.
func (n *nullTime) Scan(v any) error {
	switch v := v.(type) {
	case nil:
		*n = nullTime{}
		return nil
	case time.Time:
		*n = nullTime{t: v.UTC(), valid: true}
		return nil
	case []byte:
		return n.parse(string(v))
	case string:
		return n.parse(v)
	}
	return fmt.Errorf("scan time: unsupported type %T", v)
}

func (n *nullTime) parse(s string) error {
	s = strings.TrimSuffix(s, "Z")
	for _, layout := range sqliteTimeLayouts {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			*n = nullTime{t: t.UTC(), valid: true}
			return nil
		}
	}
	return errors.New("scan time: unrecognised time text")
}

// ptr returns the time, or nil when NULL.
func (n nullTime) ptr() *time.Time {
	if !n.valid {
		return nil
	}
	t := n.t
	return &t
}
