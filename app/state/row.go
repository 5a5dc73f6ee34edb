package state

import (
	"time"

	"github.com/herd-dev/herd/shared"
)

// Indicator is the one state icon a task row or a session header shows.
// RowOf picks it by a fixed precedence: a pending permission, then a
// pending clarification, then foreground activity (generating or
// background), then the primary session's lifecycle state, and with no
// session a neutral dot. Generating, background and completed each have
// their own label and their own shape in app.css, so none of them is told
// apart by colour alone and background work never reads as done.
type Indicator string

// Row state indicators. The values double as CSS class suffixes.
const (
	IndicatorPermission    Indicator = "permission"
	IndicatorClarification Indicator = "clarification"
	IndicatorGenerating    Indicator = "generating"
	IndicatorBackground    Indicator = "background"
	IndicatorCreated       Indicator = "created"
	IndicatorStarting      Indicator = "starting"
	IndicatorRunning       Indicator = "running"
	IndicatorWaiting       Indicator = "waiting"
	IndicatorCompleted     Indicator = "completed"
	IndicatorIdle          Indicator = "idle"
	IndicatorFailed        Indicator = "failed"
	IndicatorCancelled     Indicator = "cancelled"
	// IndicatorNoSession marks a task that has no session yet.
	IndicatorNoSession Indicator = "no-session"
	// IndicatorUnknown marks a task with a session whose summary has not
	// arrived yet (a task.created event precedes its summary).
	IndicatorUnknown Indicator = "unknown"
)

// Label returns the indicator's accessible name, a short phrase a person
// understands without the icon's colour.
func (i Indicator) Label() string {
	switch i {
	case IndicatorPermission:
		return "Needs permission"
	case IndicatorClarification:
		return "Has a question"
	case IndicatorGenerating:
		return "Generating"
	case IndicatorBackground:
		return "Working in the background"
	case IndicatorCreated:
		return "Session created"
	case IndicatorStarting:
		return "Starting"
	case IndicatorRunning:
		return "Running"
	case IndicatorWaiting:
		return "Waiting for input"
	case IndicatorCompleted:
		return "Completed"
	case IndicatorIdle:
		return "Idle"
	case IndicatorFailed:
		return "Failed"
	case IndicatorCancelled:
		return "Cancelled"
	case IndicatorNoSession:
		return "No session"
	default:
		return "Status not loaded"
	}
}

// Indicators returns every indicator, for checks that each one has a
// label and a style.
func Indicators() []Indicator {
	return []Indicator{
		IndicatorPermission, IndicatorClarification, IndicatorGenerating, IndicatorBackground,
		IndicatorCreated, IndicatorStarting, IndicatorRunning, IndicatorWaiting, IndicatorCompleted,
		IndicatorIdle, IndicatorFailed, IndicatorCancelled, IndicatorNoSession, IndicatorUnknown,
	}
}

// lifecycleIndicators maps a primary session's state to its indicator.
var lifecycleIndicators = map[shared.SessionState]Indicator{
	shared.SessionCreated:         IndicatorCreated,
	shared.SessionStarting:        IndicatorStarting,
	shared.SessionRunning:         IndicatorRunning,
	shared.SessionWaitingForInput: IndicatorWaiting,
	shared.SessionCompleted:       IndicatorCompleted,
	shared.SessionIdle:            IndicatorIdle,
	shared.SessionFailed:          IndicatorFailed,
	shared.SessionCancelled:       IndicatorCancelled,
}

// lifecycleIndicator is a session state's indicator; unknown for a state
// this client does not know (or a session not loaded yet).
func lifecycleIndicator(st shared.SessionState) Indicator {
	if i, ok := lifecycleIndicators[st]; ok {
		return i
	}
	return IndicatorUnknown
}

// activityIndicators maps a foreground activity to its indicator; a settled
// (empty) activity has none.
var activityIndicators = map[shared.ForegroundActivity]Indicator{
	shared.ActivityGenerating: IndicatorGenerating,
	shared.ActivityBackground: IndicatorBackground,
}

// Row is everything a task switcher row shows. Desktop sidebar and phone
// sheet render the same Row. It holds only comparable values, so two rows
// compare with == and a UI can skip re-rendering an unchanged one.
type Row struct {
	TaskID    string
	Title     string
	Indicator Indicator
	// HasError is set while the task has an active error. The row shows
	// only that there is one; its preview (agent text) is shown as text in
	// the task's detail.
	HasError bool
	// HasGit is set when the summary carries a git observation.
	HasGit       bool
	Additions    int
	Deletions    int
	ChangedFiles int
	// NoBase is set when some repository's base branch could not be
	// compared, so the totals leave its ahead/behind out.
	NoBase bool
	// HasPR is set when the summary carries pull request state.
	HasPR    bool
	PRState  shared.PullRequestState
	PRNumber int
	PRCount  int
	// Queued is the number of prompts waiting for a running turn.
	Queued int
	// LastActivity is when the task last did anything, in Unix
	// milliseconds: the summary's last activity, else the task's update.
	LastActivity int64
	// Preview is the summary's one line of what the task is at (bounded by
	// the server; empty when it has none).
	Preview string
	// Cost is the task's cost from its summary; empty when none.
	Cost Costs
}

// RowOf derives a task's row from the task and its status summary; the
// desktop sidebar and the phone sheet both render what it returns. When the
// summary is present it is authoritative for every status field, including
// the ones it omits. Without one (a task.created event precedes its
// summary) the row falls back to the task's coarse fields and shows no
// decorations: foreground activity if any, otherwise unknown for a task
// with a session. It never asks for a session to find out more.
func RowOf(t shared.Task) Row {
	r := Row{TaskID: t.ID, Title: t.Title, Indicator: IndicatorNoSession, LastActivity: unixMilli(t.UpdatedAt)}
	sum := t.StatusSummary
	if sum != nil && sum.LastActivityAt != nil {
		r.LastActivity = unixMilli(*sum.LastActivityAt)
	}
	if sum == nil {
		r.Indicator = coarseIndicator(t)
		return r
	}
	r.Indicator = indicatorOf(sum)
	r.HasError = sum.ActiveError != nil
	if g := sum.Git; g != nil {
		r.HasGit = true
		r.Additions, r.Deletions, r.ChangedFiles = g.Additions, g.Deletions, g.ChangedFiles
		r.NoBase = g.ComparisonUnavailable
	}
	if pr := sum.PullRequest; pr != nil {
		r.HasPR = true
		r.PRState, r.PRNumber, r.PRCount = pr.AggregateState, pr.Number, pr.Count
	}
	r.Queued = max(sum.QueuedPromptCount, 0)
	r.Preview = sum.Preview
	r.Cost = CostsOf(sum.Cost)
	return r
}

// coarseIndicator is the indicator of a task without a summary.
func coarseIndicator(t shared.Task) Indicator {
	if i, ok := activityIndicators[t.ForegroundActivity]; ok {
		return i
	}
	if t.PrimarySessionID != "" {
		return IndicatorUnknown
	}
	return IndicatorNoSession
}

// SessionIndicator names one session's state in the rows' vocabulary. A
// running session shows its foreground activity; a settled one shows its
// lifecycle state only, whatever activity a stale copy still carries, so a
// session that has left RUNNING never looks busy.
func SessionIndicator(s shared.Session) Indicator {
	if i, ok := activityIndicators[s.ForegroundActivity]; ok && s.State == shared.SessionRunning {
		return i
	}
	return lifecycleIndicator(s.State)
}

// indicatorOf applies the row precedence to a summary.
func indicatorOf(sum *shared.TaskStatusSummary) Indicator {
	switch sum.PendingAction {
	case shared.PendingPermission:
		return IndicatorPermission
	case shared.PendingClarification:
		return IndicatorClarification
	}
	if i, ok := activityIndicators[sum.ForegroundActivity]; ok {
		return i
	}
	if sum.PrimarySession == nil {
		return IndicatorNoSession
	}
	return lifecycleIndicator(sum.PrimarySession.State)
}

// unixMilli is t in Unix milliseconds; 0 for the zero time.
func unixMilli(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}
