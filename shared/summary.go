package shared

import "time"

// PendingAction is the input a task's session is waiting for.
type PendingAction string

// Pending actions; permission outranks clarification. Empty means none.
const (
	PendingPermission    PendingAction = "permission"
	PendingClarification PendingAction = "clarification"
)

// PullRequestState is the most attention-worthy state among a task's pull
// requests.
type PullRequestState string

// Pull request aggregate states, from most to least attention-worthy.
const (
	PRFailure        PullRequestState = "failure"
	PRBlocked        PullRequestState = "blocked"
	PRPending        PullRequestState = "pending"
	PRAwaitingReview PullRequestState = "awaiting_review"
	PRReady          PullRequestState = "ready"
	PRPassing        PullRequestState = "passing"
	PRDraft          PullRequestState = "draft"
	PRMerged         PullRequestState = "merged"
	PRClosed         PullRequestState = "closed"
	PRNeutral        PullRequestState = "neutral"
)

// TaskStatusSummary is the bounded, complete set of runtime facts a task row
// needs. It is a read model derived from authoritative rows; every update is
// a complete replacement, and clients ignore one whose Revision is not newer
// than the one they hold. It never holds message bodies, transcript
// entries, file names, patches or unbounded arrays; Preview, one bounded
// line, is the one exception.
type TaskStatusSummary struct {
	// Revision increases by one with every semantic change of this task's summary.
	Revision int64 `json:"revision"`
	// UpdatedAt is when this revision was projected.
	UpdatedAt time.Time `json:"updated_at"`
	// LastActivityAt is the time of the newest activity in the task; absent
	// before any.
	LastActivityAt *time.Time `json:"last_activity_at,omitempty"`
	// PrimarySession is absent while the task has no session.
	PrimarySession *PrimarySession `json:"primary_session,omitempty"`
	// ForegroundActivity is absent when the task's sessions are settled.
	ForegroundActivity  ForegroundActivity `json:"foreground_activity,omitempty"`
	ActiveSubagentCount int                `json:"active_subagent_count"`
	// PendingAction is absent when nothing waits for the user.
	PendingAction PendingAction `json:"pending_action,omitempty"`
	// ActiveError is absent when no undismissed recoverable error stands.
	ActiveError *ActiveError `json:"active_error,omitempty"`
	// Git is absent until a repository of the task has been observed.
	Git *GitSummary `json:"git,omitempty"`
	// PullRequest is absent while the task has no pull request.
	PullRequest       *PullRequestSummary `json:"pull_request,omitempty"`
	QueuedPromptCount int                 `json:"queued_prompt_count"`
	// Preview is one line saying what the primary session is doing: the
	// title of its open permission request, else its open clarification
	// question, else the first line of its newest complete agent message
	// that is not blank, else "You: " and the first line of its newest
	// sent prompt. It is valid UTF-8 without control characters, white
	// space collapsed, at most MaxPreviewBytes bytes (a longer line is cut
	// on a character boundary and ends in "…"). It is the one field taken
	// from message text, and it changes only when a message is final
	// (never while one streams). Absent when there is nothing to show.
	Preview string `json:"preview,omitempty"`
	// Cost sums the cumulative cost of the task's sessions, one entry per
	// currency in currency order; more than one entry means the sessions
	// were charged in mixed currencies, which are never added together.
	// At most MaxSummaryCurrencies entries (further currencies are left
	// out); absent while no session has reported a cost. It changes only
	// when a session's cost does, never with context usage alone.
	Cost []Cost `json:"cost,omitempty"`
}

// MaxPreviewBytes bounds TaskStatusSummary.Preview, "…" included.
const MaxPreviewBytes = 120

// PrimarySession names a task's primary session and its lifecycle state.
type PrimarySession struct {
	ID    string       `json:"id"`
	State SessionState `json:"state"`
}

// MaxErrorPreviewBytes bounds ActiveError.Preview.
const MaxErrorPreviewBytes = 512

// ActiveError is the newest recoverable agent error of a task.
type ActiveError struct {
	SessionID string `json:"session_id"`
	// Stamp identifies the error occurrence; error.dismiss names it.
	Stamp      string    `json:"stamp"`
	OccurredAt time.Time `json:"occurred_at"`
	// Preview is at most MaxErrorPreviewBytes of UTF-8, cut on a rune boundary.
	Preview string `json:"preview"`
}

// GitSummary totals the latest observation of every repository of a task.
type GitSummary struct {
	Additions    int `json:"additions"`
	Deletions    int `json:"deletions"`
	ChangedFiles int `json:"changed_files"`
	Ahead        int `json:"ahead"`
	Behind       int `json:"behind"`
	// ComparisonUnavailable is true when some repository's base branch
	// cannot be resolved; Ahead and Behind leave that repository out.
	ComparisonUnavailable bool `json:"comparison_unavailable,omitempty"`
}

// PullRequestSummary aggregates a task's pull requests.
type PullRequestSummary struct {
	Count          int              `json:"count"`
	OpenCount      int              `json:"open_count"`
	AggregateState PullRequestState `json:"aggregate_state"`
	// Number and URL identify one representative pull request.
	Number int    `json:"number,omitempty"`
	URL    string `json:"url,omitempty"`
}
