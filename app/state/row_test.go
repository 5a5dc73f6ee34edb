package state

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/herd-dev/herd/shared"
)

func TestRowIndicatorPrecedence(t *testing.T) {
	running := &shared.PrimarySession{ID: "s1", State: shared.SessionRunning}
	tests := []struct {
		name string
		task shared.Task
		want Indicator
	}{
		{
			name: "permission outranks clarification, activity and state",
			task: shared.Task{StatusSummary: &shared.TaskStatusSummary{
				PendingAction: shared.PendingPermission, ForegroundActivity: shared.ActivityGenerating, PrimarySession: running,
			}},
			want: IndicatorPermission,
		},
		{
			name: "clarification outranks activity and state",
			task: shared.Task{StatusSummary: &shared.TaskStatusSummary{
				PendingAction: shared.PendingClarification, ForegroundActivity: shared.ActivityBackground, PrimarySession: running,
			}},
			want: IndicatorClarification,
		},
		{
			name: "generating outranks the lifecycle state",
			task: shared.Task{StatusSummary: &shared.TaskStatusSummary{ForegroundActivity: shared.ActivityGenerating, PrimarySession: running}},
			want: IndicatorGenerating,
		},
		{
			name: "background outranks the lifecycle state",
			task: shared.Task{StatusSummary: &shared.TaskStatusSummary{
				ForegroundActivity: shared.ActivityBackground, PrimarySession: &shared.PrimarySession{State: shared.SessionWaitingForInput},
			}},
			want: IndicatorBackground,
		},
		{
			name: "settled session shows its lifecycle state",
			task: shared.Task{StatusSummary: &shared.TaskStatusSummary{PrimarySession: &shared.PrimarySession{State: shared.SessionFailed}}},
			want: IndicatorFailed,
		},
		{
			name: "summary without a primary session is a no-session dot",
			task: shared.Task{StatusSummary: &shared.TaskStatusSummary{}},
			want: IndicatorNoSession,
		},
		{
			name: "no summary and no session is a no-session dot",
			task: shared.Task{},
			want: IndicatorNoSession,
		},
		{
			name: "no summary yet for a task with a session is unknown",
			task: shared.Task{PrimarySessionID: "s1"},
			want: IndicatorUnknown,
		},
		{
			name: "no summary falls back to the task's coarse generating activity",
			task: shared.Task{PrimarySessionID: "s1", ForegroundActivity: shared.ActivityGenerating},
			want: IndicatorGenerating,
		},
		{
			name: "no summary falls back to the task's coarse background activity",
			task: shared.Task{PrimarySessionID: "s1", ForegroundActivity: shared.ActivityBackground},
			want: IndicatorBackground,
		},
		{
			name: "a summary outranks the task's coarse fields, even when it omits activity",
			task: shared.Task{
				PrimarySessionID: "s1", ForegroundActivity: shared.ActivityGenerating,
				StatusSummary: &shared.TaskStatusSummary{PrimarySession: &shared.PrimarySession{ID: "s1", State: shared.SessionCompleted}},
			},
			want: IndicatorCompleted,
		},
		{
			name: "running primary session without an activity shows running",
			task: shared.Task{StatusSummary: &shared.TaskStatusSummary{PrimarySession: running}},
			want: IndicatorRunning,
		},
		{
			name: "unrecognised lifecycle state is unknown",
			task: shared.Task{StatusSummary: &shared.TaskStatusSummary{PrimarySession: &shared.PrimarySession{State: "PAUSED"}}},
			want: IndicatorUnknown,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, RowOf(tt.task).Indicator)
		})
	}
}

func TestRowLifecycleStatesAllHaveIndicatorsAndLabels(t *testing.T) {
	states := []shared.SessionState{
		shared.SessionCreated, shared.SessionStarting, shared.SessionRunning, shared.SessionWaitingForInput,
		shared.SessionCompleted, shared.SessionIdle, shared.SessionFailed, shared.SessionCancelled,
	}
	seen := make(map[Indicator]bool)
	for _, st := range states {
		i := RowOf(shared.Task{StatusSummary: &shared.TaskStatusSummary{PrimarySession: &shared.PrimarySession{State: st}}}).Indicator
		assert.NotEqual(t, IndicatorUnknown, i, "state %s", st)
		assert.NotEqual(t, IndicatorUnknown.Label(), i.Label(), "state %s needs its own label", st)
		seen[i] = true
	}
	assert.Len(t, seen, len(states), "every lifecycle state has its own indicator")
}

func TestRowDecorations(t *testing.T) {
	tests := []struct {
		name string
		sum  *shared.TaskStatusSummary
		want Row
	}{
		{
			name: "error dot is independent of the state icon",
			sum: &shared.TaskStatusSummary{
				PendingAction: shared.PendingPermission,
				ActiveError:   &shared.ActiveError{Preview: "boom"},
			},
			want: Row{Indicator: IndicatorPermission, HasError: true},
		},
		{
			name: "git totals shown when git is present",
			sum:  &shared.TaskStatusSummary{Git: &shared.GitSummary{Additions: 10, Deletions: 2, ChangedFiles: 3}},
			want: Row{Indicator: IndicatorNoSession, HasGit: true, Additions: 10, Deletions: 2, ChangedFiles: 3},
		},
		{
			name: "an unavailable base comparison is carried with the totals",
			sum:  &shared.TaskStatusSummary{Git: &shared.GitSummary{Additions: 1, ChangedFiles: 1, ComparisonUnavailable: true}},
			want: Row{Indicator: IndicatorNoSession, HasGit: true, Additions: 1, ChangedFiles: 1, NoBase: true},
		},
		{
			name: "pull request badge when pull_request is present",
			sum: &shared.TaskStatusSummary{PullRequest: &shared.PullRequestSummary{
				Count: 2, OpenCount: 1, AggregateState: shared.PRFailure, Number: 17,
			}},
			want: Row{Indicator: IndicatorNoSession, HasPR: true, PRState: shared.PRFailure, PRNumber: 17, PRCount: 2},
		},
		{
			name: "queued count carried",
			sum:  &shared.TaskStatusSummary{QueuedPromptCount: 2},
			want: Row{Indicator: IndicatorNoSession, Queued: 2},
		},
		{
			name: "summary omitting decorations shows none",
			sum:  &shared.TaskStatusSummary{},
			want: Row{Indicator: IndicatorNoSession},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RowOf(shared.Task{StatusSummary: tt.sum})
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestRowWithoutSummaryShowsNoDecorations(t *testing.T) {
	got := RowOf(shared.Task{ID: "a", Title: "t", PrimarySessionID: "s1", ForegroundActivity: shared.ActivityGenerating, ActiveSubagentCount: 2})
	assert.Equal(t, Row{TaskID: "a", Title: "t", Indicator: IndicatorGenerating}, got)
}

func TestIndicatorLabelsAreDistinct(t *testing.T) {
	labels := make(map[string]Indicator)
	for _, i := range Indicators() {
		l := i.Label()
		assert.NotEmpty(t, l, "indicator %s", i)
		if other, dup := labels[l]; dup {
			t.Errorf("indicators %s and %s share the label %q", i, other, l)
		}
		labels[l] = i
	}
	assert.Equal(t, "Generating", IndicatorGenerating.Label())
	assert.Equal(t, "Working in the background", IndicatorBackground.Label())
	assert.Equal(t, "Completed", IndicatorCompleted.Label())
}

func TestSessionIndicator(t *testing.T) {
	tests := []struct {
		name    string
		session shared.Session
		want    Indicator
	}{
		{"running and generating", shared.Session{State: shared.SessionRunning, ForegroundActivity: shared.ActivityGenerating}, IndicatorGenerating},
		{"running in the background", shared.Session{State: shared.SessionRunning, ForegroundActivity: shared.ActivityBackground}, IndicatorBackground},
		{"running without an activity", shared.Session{State: shared.SessionRunning}, IndicatorRunning},
		{"settled with a stale background is not busy", shared.Session{State: shared.SessionWaitingForInput, ForegroundActivity: shared.ActivityBackground}, IndicatorWaiting},
		{"completed", shared.Session{State: shared.SessionCompleted}, IndicatorCompleted},
		{"failed", shared.Session{State: shared.SessionFailed}, IndicatorFailed},
		{"not loaded yet", shared.Session{}, IndicatorUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, SessionIndicator(tt.session))
		})
	}
}
