package ui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/app/wsclient"
	"github.com/herd-dev/herd/shared"
)

// stateIconTag finds the first state icon's start tag.
func stateIconTag(t *testing.T, markup string) string {
	t.Helper()
	return tagWithClass(t, markup, "state-icon")
}

func TestRowIndicatorsAreNamedAndDistinctOnDesktopAndPhone(t *testing.T) {
	tests := []struct {
		name  string
		sum   *shared.TaskStatusSummary
		class string
		label string
	}{
		{
			name:  "generating",
			sum:   &shared.TaskStatusSummary{Revision: 1, ForegroundActivity: shared.ActivityGenerating, PrimarySession: &shared.PrimarySession{ID: "s1", State: shared.SessionRunning}},
			class: "state-generating", label: "Generating",
		},
		{
			name:  "background",
			sum:   &shared.TaskStatusSummary{Revision: 1, ForegroundActivity: shared.ActivityBackground, PrimarySession: &shared.PrimarySession{ID: "s1", State: shared.SessionRunning}},
			class: "state-background", label: "Working in the background",
		},
		{
			name:  "completed",
			sum:   &shared.TaskStatusSummary{Revision: 1, PrimarySession: &shared.PrimarySession{ID: "s1", State: shared.SessionCompleted}},
			class: "state-completed", label: "Completed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := booted(newTask("a", "Busy", 1, tt.sum))
			for _, phone := range []bool{false, true} {
				s.phone, s.sheetOpen = phone, phone
				tag := stateIconTag(t, html(s))
				assert.Contains(t, tag, `class="state-icon `+tt.class+`"`)
				assertNamed(t, tag, tt.label)
			}
		})
	}
}

func TestRowWithoutSummaryFallsBackToTheTasksCoarseActivity(t *testing.T) {
	task := newTask("a", "Fresh", 1, nil)
	task.PrimarySessionID, task.ForegroundActivity = "s1", shared.ActivityGenerating
	markup := html(booted(task))
	assert.Contains(t, stateIconTag(t, markup), `aria-label="Generating"`)
	assert.NotContains(t, markup, "row-meta")
}

func TestGitLabelSaysTheTotalsInWords(t *testing.T) {
	assert.Equal(t, "10 additions, 2 deletions in 3 files", gitLabel(10, 2, 3))
	assert.Equal(t, "1 addition, 0 deletions in 1 file", gitLabel(1, 0, 1))
}

// Every indicator is styled in the one stylesheet; the sidebar and the
// sheet render the same row, so one rule serves both.
func TestStylesheetCoversEveryIndicator(t *testing.T) {
	css := stylesheet(t)
	for _, i := range state.Indicators() {
		assert.Regexp(t, `(?m)^\.state-`+regexp.QuoteMeta(string(i))+`\b[^{]*\{`, css, "no rule for indicator %s", i)
	}
	assertStyled(t, css, "error-dot", "git", "queued", "pr", "error-banner", "subagents")
}

func TestErrorBannerShowsThePreviewAsTextWithADismissButton(t *testing.T) {
	evil := `"><img src=x onerror=alert(1)> \" onmouseover="alert(2)`
	sum := &shared.TaskStatusSummary{Revision: 3, ActiveError: &shared.ActiveError{SessionID: "s1", Stamp: "e-1", Preview: evil}}
	s := booted(newTask("a", "Broken", 1, sum))
	s.route = state.Route{TaskID: "a"}
	markup := html(s)

	banner := elementWith(t, markup, "error-banner")
	assert.Contains(t, banner, `role="alert"`)
	assert.NotContains(t, markup, "<img src=x")
	assert.Contains(t, markup, "&lt;img src=x onerror=alert(1)&gt;", "the preview is escaped text")
	dismiss := elementWith(t, markup, idErrorDismiss)
	assert.False(t, regexpDisabled.MatchString(dismiss), dismiss)
	assert.Contains(t, markup, ">Dismiss</button>")

	for _, tag := range regexp.MustCompile(`<[a-z]+[^>]*>`).FindAllString(markup, -1) {
		assert.NotContains(t, tag, "onerror", "no agent text in an attribute: %s", tag)
		assert.NotContains(t, tag, "onmouseover", "no agent text in an attribute: %s", tag)
	}
}

func TestErrorBannerWhileDismissingAndAfterAFailure(t *testing.T) {
	sum := &shared.TaskStatusSummary{Revision: 3, ActiveError: &shared.ActiveError{Stamp: "e-1", Preview: "exit status 1"}}
	s := booted(newTask("a", "Broken", 1, sum))
	s.route = state.Route{TaskID: "a"}
	tv := viewOf(t, s)
	req := shared.ErrorDismissRequest{TaskID: "a", Stamp: "e-1"}

	tv.dismissal = dismissal{taskID: "a", stamp: "e-1", request: request{busy: true}}
	markup := rendered(s, tv)
	dismiss := elementWith(t, markup, idErrorDismiss)
	assert.True(t, regexpDisabled.MatchString(dismiss), dismiss)
	assert.Regexp(t, `\baria-busy\b`, dismiss)
	assert.Contains(t, markup, "Dismissing…")

	tv.dismissed(req, shared.Errorf(shared.CodeNotFound, "task a does not exist"))
	markup = rendered(s, tv)
	assert.Contains(t, markup, "exit status 1", "a failed dismissal keeps the banner")
	assert.Contains(t, markup, "Could not dismiss: task a does not exist")
	assert.False(t, regexpDisabled.MatchString(elementWith(t, markup, idErrorDismiss)))

	// A newer error starts with a fresh banner.
	s.store.Apply(state.SummaryWrite("a", shared.TaskStatusSummary{Revision: 4, ActiveError: &shared.ActiveError{Stamp: "e-2", Preview: "again"}}))
	assert.NotContains(t, rendered(s, tv), "Could not dismiss")
}

func TestErrorBannerStaysAfterTheAnswerUntilASummaryWithoutTheError(t *testing.T) {
	sum := &shared.TaskStatusSummary{Revision: 3, ActiveError: &shared.ActiveError{Stamp: "e-1", Preview: "exit status 1"}}
	s := booted(newTask("a", "Broken", 1, sum))
	s.route = state.Route{TaskID: "a"}
	tv := viewOf(t, s)
	tv.dismissal = dismissal{taskID: "a", stamp: "e-1", request: request{busy: true}}

	tv.dismissed(shared.ErrorDismissRequest{TaskID: "a", Stamp: "e-1"}, nil)
	assert.Contains(t, rendered(s, tv), `id="error-banner"`, "the answer alone does not remove the banner")

	s.store.Apply(state.SummaryWrite("a", shared.TaskStatusSummary{Revision: 3}))
	assert.Contains(t, rendered(s, tv), `id="error-banner"`, "a summary that is not newer changes nothing")

	s.store.Apply(state.SummaryWrite("a", shared.TaskStatusSummary{Revision: 4}))
	markup := rendered(s, tv)
	assert.NotContains(t, markup, `id="error-banner"`)
	assert.NotContains(t, markup, "error-dot")
}

func TestRequestFailureSaysWhatToDo(t *testing.T) {
	assert.Equal(t, "task a does not exist", requestFailure(shared.Errorf(shared.CodeNotFound, "task a does not exist")))
	assert.True(t, strings.HasPrefix(requestFailure(fmt.Errorf("error.dismiss: %w", wsclient.ErrNotConnected)), "not connected"))
	assert.True(t, strings.HasPrefix(requestFailure(fmt.Errorf("error.dismiss: %w", wsclient.ErrTimeout)), "the server did not answer"))
}

// rendered renders tv as its shell would now: with the store's copy of its
// task.
func rendered(s *shell, tv *taskView) string {
	tv.Task, _ = s.store.Task(tv.Task.ID)
	return html(tv)
}
