package ui

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/maxence-charriere/go-app/v10/pkg/app"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/app/wsclient"
	"github.com/herd-dev/herd/shared"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// booted returns a shell as it is after a boot of workspace w1 with tasks.
func booted(tasks ...shared.Task) *shell {
	s := &shell{store: state.New(), inbox: state.NewInbox(), attention: state.NewAttention(state.MapKV{}), ready: true}
	s.store.SetWorkspaces([]shared.Workspace{{ID: "w1", Name: "Main"}})
	s.store.SelectWorkspace("w1")
	s.inbox.SetWorkspace("w1")
	s.store.SetConnection(state.Online)
	for _, t := range tasks {
		s.store.Apply(state.TaskWrite(t))
	}
	return s
}

// newTask returns a task of workspace w1 created i minutes after t0.
func newTask(id, title string, i int, sum *shared.TaskStatusSummary) shared.Task {
	return shared.Task{
		ID: id, WorkspaceID: "w1", Title: title, Repositories: []shared.TaskRepository{},
		CreatedAt: t0.Add(time.Duration(i) * time.Minute), UpdatedAt: t0, StatusSummary: sum,
	}
}

// html renders a component the way the server does.
func html(c app.Composer) string { return app.HTMLString(c) }

// viewOf returns the task view s renders for its selected task.
func viewOf(t *testing.T, s *shell) *taskView {
	t.Helper()
	task, ok := s.selectedTask()
	require.True(t, ok, "no task selected")
	return s.taskViewOf(task)
}

// elementWith finds the start tag of the element with id.
func elementWith(t *testing.T, markup, id string) string {
	t.Helper()
	tag := regexp.MustCompile(`<[a-z]+[^>]*\bid="` + regexp.QuoteMeta(id) + `"[^>]*>`).FindString(markup)
	require.NotEmpty(t, tag, "no element with id %q", id)
	return tag
}

func TestServerRenderIsNotReady(t *testing.T) {
	s := &shell{}
	s.OnInit()
	markup := html(s)
	root := elementWith(t, markup, "app-root")
	assert.NotContains(t, root, "data-ready")
	assert.Contains(t, elementWith(t, markup, "conn-status"), `role="status"`)
	assert.Contains(t, markup, "connecting")
	assert.Contains(t, markup, "Loading tasks…")
}

func TestBootedShellMarksTheRootReady(t *testing.T) {
	// go-app's server encoder writes a "true" attribute bare; the browser
	// sets data-ready="true".
	assert.Regexp(t, `\bdata-ready\b`, elementWith(t, html(booted()), "app-root"))
}

func TestDesktopShowsRowsNewestFirstInTheSidebar(t *testing.T) {
	s := booted(newTask("a", "Older", 1, nil), newTask("b", "Newer", 2, nil))
	s.route = state.Route{TaskID: "a"}
	markup := html(s)

	assert.Contains(t, markup, `class="sidebar"`)
	assert.NotContains(t, markup, `id="switcher-toggle"`)
	rows := regexp.MustCompile(`<a[^>]*class="task-row"[^>]*>`).FindAllString(markup, -1)
	require.Len(t, rows, 2)
	assert.Contains(t, rows[0], `data-task-id="b"`)
	assert.Contains(t, rows[1], `data-task-id="a"`)
	assert.Contains(t, rows[1], `aria-current`)
	assert.NotContains(t, rows[0], `aria-current`)
}

func TestPhoneUsesAHeaderButtonAndASheet(t *testing.T) {
	s := booted(newTask("a", "Only", 1, nil))
	s.phone = true
	closed := html(s)
	assert.Regexp(t, `<aside[^>]*class="sidebar"[^>]*></aside>`, closed,
		"the sidebar's slot stays, empty, so the layout switch never rebuilds the main pane")
	toggle := elementWith(t, closed, "switcher-toggle")
	assert.Contains(t, toggle, `aria-label="Tasks"`)
	assert.Contains(t, toggle, `aria-expanded="false"`)
	layer := regexp.MustCompile(`<div[^>]*class="sheet-layer"[^>]*>`)
	assert.Regexp(t, `\bhidden\b`, layer.FindString(closed), "a closed sheet stays in the page, hidden")

	assert.NotRegexp(t, `<main[^>]*\binert\b`, closed)

	s.sheetOpen = true
	open := html(s)
	assert.NotRegexp(t, `\bhidden\b`, layer.FindString(open))
	assert.Regexp(t, `<main[^>]*\binert\b`, open, "the page behind the open sheet is inert")
	assert.Contains(t, elementWith(t, open, "switcher-sheet"), `role="dialog"`)
	assert.Contains(t, elementWith(t, open, "switcher-close"), `aria-label="Close tasks"`)
	assert.Contains(t, open, `id="switcher-backdrop"`)
	assert.Contains(t, open, `data-task-id="a"`, "the sheet renders the same rows")
}

func TestRowShowsStateDecorations(t *testing.T) {
	sum := &shared.TaskStatusSummary{
		Revision:          1,
		PrimarySession:    &shared.PrimarySession{ID: "s1", State: shared.SessionRunning},
		PendingAction:     shared.PendingPermission,
		ActiveError:       &shared.ActiveError{Preview: "exit status 1"},
		Git:               &shared.GitSummary{Additions: 10, Deletions: 2, ChangedFiles: 3},
		PullRequest:       &shared.PullRequestSummary{Count: 1, AggregateState: shared.PRFailure, Number: 17},
		QueuedPromptCount: 2,
	}
	markup := html(booted(newTask("a", "Busy", 1, sum)))

	assert.Contains(t, markup, `class="state-icon state-permission"`)
	assert.Contains(t, markup, `aria-label="Needs permission"`)
	assertNamed(t, tagWithClass(t, markup, "error-dot"), "Agent error")
	assert.NotContains(t, markup, "exit status 1", "the row shows that there is an error, not its text")
	assert.Contains(t, markup, "+10")
	assert.Contains(t, markup, "−2")
	assert.Contains(t, markup, " · 3 files")
	assertNamed(t, tagWithClass(t, markup, "git"), "10 additions, 2 deletions in 3 files")
	assert.Contains(t, markup, `class="pr pr-failure"`)
	assert.Contains(t, markup, "#17")
	assertNamed(t, tagWithClass(t, markup, "pr"), "Pull request #17, failure")
	assert.Contains(t, markup, "2 queued")
	assertNamed(t, tagWithClass(t, markup, "queued"), "2 queued prompts")
}

// tagWithClass finds the start tag of the first element whose class list
// has class.
func tagWithClass(t *testing.T, markup, class string) string {
	t.Helper()
	tag := regexp.MustCompile(`<[a-z]+[^>]*\bclass="(?:[^"]* )?` + regexp.QuoteMeta(class) + `(?: [^"]*)?"[^>]*>`).FindString(markup)
	require.NotEmpty(t, tag, "no element with class %q", class)
	return tag
}

// assertNamed checks that a start tag is an image named label, with the
// same words as its tooltip.
func assertNamed(t *testing.T, tag, label string) {
	t.Helper()
	assert.Contains(t, tag, `role="img"`)
	assert.Contains(t, tag, `aria-label="`+label+`"`)
	assert.Contains(t, tag, `title="`+label+`"`)
}

func TestTaskWithoutSessionShowsANeutralDot(t *testing.T) {
	markup := html(booted(newTask("a", "Fresh", 1, &shared.TaskStatusSummary{Revision: 1})))
	assert.Contains(t, markup, `class="state-icon state-no-session"`)
	assert.NotContains(t, markup, "error-dot")
	assert.NotContains(t, markup, "row-meta")
}

func TestDetailShowsTheSelectedTaskAndSaysNoSessionYet(t *testing.T) {
	task := newTask("a", "Fix login", 1, &shared.TaskStatusSummary{Revision: 1})
	task.Description = "Users are logged out\nafter a minute."
	task.Repositories = []shared.TaskRepository{{ID: "r1", Path: "/src/app", BaseBranch: "main"}}
	s := booted(task)
	s.route = state.Route{TaskID: "a"}
	markup := html(s)

	assert.Contains(t, elementWith(t, markup, "detail-title"), "<h1")
	assert.Contains(t, markup, "Fix login")
	assert.Contains(t, markup, "Users are logged out\nafter a minute.")
	assert.Contains(t, markup, "/src/app")
	assert.Contains(t, markup, "base main")
	assert.Contains(t, markup, `datetime="`+task.CreatedAt.Format(time.RFC3339)+`"`)
	assert.Contains(t, markup, "No session yet.")
	assert.NotContains(t, markup, `id="new-task-form"`)
}

func TestNewTaskSubmitNeedsATitleAndAWorkspace(t *testing.T) {
	tests := []struct {
		name      string
		title     string
		workspace string
		busy      bool
		disabled  bool
	}{
		{"empty title disables submit", "", "w1", false, true},
		{"blank title disables submit", "   ", "w1", false, true},
		{"title in a workspace enables submit", "Fix login", "w1", false, false},
		{"no workspace disables submit", "Fix login", "", false, true},
		{"request in flight disables submit", "Fix login", "w1", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := booted()
			s.store.SelectWorkspace(tt.workspace)
			s.draft = draft{title: tt.title, busy: tt.busy}
			submit := elementWith(t, html(s), "new-task-submit")
			assert.Equal(t, tt.disabled, regexp.MustCompile(`\bdisabled\b`).MatchString(submit), submit)
		})
	}
}

func TestNewTaskFormShowsItsErrorInline(t *testing.T) {
	s := booted()
	s.draft = draft{title: "x", err: "title is too long"}
	markup := html(s)
	for _, id := range []string{"new-task-form", "new-task-title", "new-task-description"} {
		elementWith(t, markup, id)
	}
	assert.Contains(t, elementWith(t, markup, "new-task-error"), `role="alert"`)
	assert.Contains(t, markup, "title is too long")
	assert.Regexp(t, `<label[^>]*for="new-task-title"`, markup)
	assert.Regexp(t, `<label[^>]*for="new-task-description"`, markup)
}

func TestCreatedTaskIsStoredAndSelected(t *testing.T) {
	s := booted()
	s.draft = draft{title: "Fix login", busy: true}
	assert.True(t, s.created(newTask("n1", "Fix login", 1, nil), s.store.Mark(), nil))

	assert.Equal(t, draft{}, s.draft)
	_, ok := s.store.Task("n1")
	assert.True(t, ok)
}

func TestFailedCreateKeepsTheDraft(t *testing.T) {
	s := booted()
	s.draft = draft{title: "Fix login", busy: true}
	assert.False(t, s.created(shared.Task{}, s.store.Mark(), shared.Errorf(shared.CodeBadRequest, "title is too long")))

	assert.Equal(t, draft{title: "Fix login", err: "title is too long"}, s.draft)
	assert.Equal(t, state.Route{}, s.route)
}

func TestDescribeSaysWhetherTheOutcomeIsKnown(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{shared.Errorf(shared.CodeNotFound, "workspace w9 does not exist"), "workspace w9 does not exist"},
		{fmt.Errorf("task.create: %w", wsclient.ErrNotConnected), "Not connected"},
		{fmt.Errorf("task.create: %w", wsclient.ErrClosed), "may or may not exist"},
		{fmt.Errorf("task.create: %w", wsclient.ErrTimeout), "may or may not exist"},
		{errors.New("decode task.create response: oops"), "oops"},
	}
	for _, tt := range tests {
		assert.Contains(t, describe(tt.err), tt.want)
	}
}

func TestSocketURLFollowsThePageOrigin(t *testing.T) {
	for page, want := range map[string]string{
		"http://localhost:8080/":      "ws://localhost:8080/ws",
		"https://herd.example/tasks/": "wss://herd.example/ws",
	} {
		u, err := url.Parse(page)
		require.NoError(t, err)
		assert.Equal(t, want, socketURL(u))
	}
}

func TestRowShowsTheSummarysPreviewAsText(t *testing.T) {
	evil := `"><img src=x onerror=alert(1)> answer`
	markup := html(booted(newTask("a", "Fix login", 1, &shared.TaskStatusSummary{Revision: 1, Preview: evil})))
	assert.Contains(t, markup, `<span class="row-preview">&#34;&gt;&lt;img src=x onerror=alert(1)&gt; answer</span>`)
	assert.NotContains(t, markup, "<img src=x")
}
