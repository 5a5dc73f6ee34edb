package ui

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/shared"
)

// gitView returns the task view of task t1 with its session pane, whose
// open session's snapshot carries repos.
func gitView(repos ...shared.RepositoryGit) (*taskView, *sessionView) {
	v := openView(shared.SessionWaitingForInput)
	v.detail.Load(shared.SessionSnapshot{Session: shared.Session{ID: "s1", State: shared.SessionWaitingForInput}, Git: repos})
	return v.tv, v
}

// gitRepoText returns the words of the panel's entry for repository id,
// as a browser's textContent reads them (spaces collapsed).
func gitRepoText(t *testing.T, markup, id string) string {
	t.Helper()
	start := strings.Index(markup, `data-repository-id="`+id+`"`)
	require.GreaterOrEqual(t, start, 0, "no entry for repository %s", id)
	end := strings.Index(markup[start:], "</li>")
	require.Greater(t, end, 0)
	text := regexp.MustCompile(`<[^>]*>`).ReplaceAllString(markup[start:start+end], " ")
	return strings.Join(strings.Fields(text[strings.Index(text, ">")+1:]), " ")
}

func intp(n int) *int { return &n }

func TestGitPanelShowsEachRepository(t *testing.T) {
	observed := t0
	s, _ := gitView(
		shared.RepositoryGit{
			RepositoryID: "r1", Path: "/src/app", Branch: "herd/fix-login", BaseBranch: "main", ObservedAt: &observed,
			Additions: 10, Deletions: 2, ChangedFiles: 3, Ahead: 2, Behind: 1, UpstreamAhead: intp(1), UpstreamBehind: intp(0),
		},
		shared.RepositoryGit{RepositoryID: "r2", Path: "/src/lib", BaseBranch: "main"},
		shared.RepositoryGit{
			RepositoryID: "r3", Path: "/src/tool", Branch: "trunk", BaseBranch: "gone", ObservedAt: &observed,
			Additions: 1, ChangedFiles: 1, ComparisonUnavailable: true, Error: "git status: exit status 128",
		},
	)
	markup := html(s)

	elementWith(t, markup, "git-panel")
	assert.Contains(t, tagWithClass(t, markup, "git-panel"), `aria-labelledby="git-panel-title"`)
	assert.Len(t, regexp.MustCompile(`<li[^>]*class="git-repo"`).FindAllString(markup, -1), 3)
	refresh := tagWithClass(t, markup, "git-refresh")
	assert.Contains(t, refresh, `aria-label="Refresh git status"`)
	assert.False(t, regexpDisabled.MatchString(refresh), refresh)

	r1 := gitRepoText(t, markup, "r1")
	assert.Contains(t, r1, "/src/app herd/fix-login")
	assert.Contains(t, r1, "+10 −2 · 3 files")
	assert.Contains(t, r1, "↑2 ↓1 vs main")
	assert.Contains(t, r1, "upstream ↑1 ↓0")
	assert.Contains(t, markup, `aria-label="2 commits ahead, 1 behind"`)
	assert.Contains(t, markup, `datetime="`+observed.Format(time.RFC3339)+`"`)

	r2 := gitRepoText(t, markup, "r2")
	assert.Contains(t, r2, "not observed yet")
	assert.NotContains(t, r2, "+0", "an unobserved repository has no totals")
	assert.NotContains(t, r2, "↑")

	r3 := gitRepoText(t, markup, "r3")
	assert.Contains(t, r3, "+1 −0 · 1 file", "the last good totals stay beside the error")
	assert.Contains(t, r3, "no base to compare")
	assert.NotContains(t, r3, "↑", "no ahead/behind without a base")
	assert.NotContains(t, r3, "upstream")
	assert.Contains(t, r3, "Last observation failed: git status: exit status 128")
}

func TestGitRefreshShowsItsBusyStateAndItsFailure(t *testing.T) {
	s, v := gitView(shared.RepositoryGit{RepositoryID: "r1", Path: "/src/app"})
	v.refresh = gitRefresh{sessionID: "s1", request: request{busy: true}}
	markup := html(s)
	assert.True(t, regexpDisabled.MatchString(tagWithClass(t, markup, "git-refresh")))
	assert.Contains(t, markup, "Refreshing…")

	v.refreshed("s2", nil)
	assert.True(t, v.refresh.busy, "an answer for another session changes nothing")

	v.refreshed("s1", shared.Errorf(shared.CodeUnavailable, "git observation is not available"))
	markup = html(s)
	assert.False(t, regexpDisabled.MatchString(tagWithClass(t, markup, "git-refresh")))
	assert.Contains(t, tagWithClass(t, markup, "git-refresh-error"), `role="alert"`)
	assert.Contains(t, markup, "Could not refresh: git observation is not available")

	v.refresh = gitRefresh{sessionID: "s1", request: request{busy: true}}
	v.refreshed("s1", nil)
	markup = html(s)
	assert.NotContains(t, markup, "git-refresh-error", "a scheduled refresh shows no error")
	assert.Contains(t, markup, ">Refresh</button>")
}

func TestGitPanelNeedsAnOpenSessionOfTheTaskWithRepositories(t *testing.T) {
	tests := []struct {
		name  string
		setup func(tv *taskView, v *sessionView)
	}{
		{"server render", func(tv *taskView, _ *sessionView) { tv.view = nil }},
		{"another task's pane", func(_ *taskView, v *sessionView) { v.taskID = "t2" }},
		{"no session open", func(_ *taskView, v *sessionView) { v.detail = nil }},
		{"no repositories", func(_ *taskView, v *sessionView) {
			v.detail.Load(shared.SessionSnapshot{Git: []shared.RepositoryGit{}})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, v := gitView(shared.RepositoryGit{RepositoryID: "r1", Path: "/src/app"})
			tt.setup(s, v)
			assert.NotContains(t, html(s), "git-panel")
		})
	}
}

func TestGitPanelRendersPathsAndBranchesOnlyAsText(t *testing.T) {
	evil := `"><img src=x onerror=alert(1)>`
	observed := t0
	s, _ := gitView(shared.RepositoryGit{RepositoryID: "r1", Path: evil, Branch: evil, BaseBranch: evil, ObservedAt: &observed, Error: evil})
	markup := html(s)
	assert.NotContains(t, markup, "<img src=x")
	assert.Contains(t, markup, "&lt;img src=x onerror=alert(1)&gt;", "the path is escaped text")
	for _, tag := range regexp.MustCompile(`<[a-z]+[^>]*>`).FindAllString(markup, -1) {
		assert.NotContains(t, tag, "onerror", "no repository text in an attribute: %s", tag)
	}
}

func TestRowMarksAnUnavailableBaseComparison(t *testing.T) {
	sum := &shared.TaskStatusSummary{Revision: 1, Git: &shared.GitSummary{Additions: 1, ChangedFiles: 1, ComparisonUnavailable: true}}
	assertNamed(t, tagWithClass(t, html(booted(newTask("a", "No base", 1, sum))), "git-no-base-mark"), "base branch unavailable")

	sum.Git.ComparisonUnavailable = false
	assert.NotContains(t, html(booted(newTask("a", "Base", 1, sum))), "git-no-base-mark")
}

func TestDetailSaysWhereTheAgentWorksInEachRepository(t *testing.T) {
	task := newTask("a", "Two repos", 1, &shared.TaskStatusSummary{Revision: 1})
	task.Repositories = []shared.TaskRepository{
		{ID: "r1", Path: "/src/app", BaseBranch: "main", Branch: "herd/a", WorktreePath: "/data/worktrees/a/app"},
		{ID: "r2", Path: "/src/lib", BaseBranch: "main", RunInPlace: true},
		{ID: "r3", Path: "/src/new", BaseBranch: "main"},
	}
	s := booted(task)
	s.route = state.Route{TaskID: "a"}
	markup := html(s)

	repos := regexp.MustCompile(`(?s)<li class="repo">.*?</li>`).FindAllString(markup, -1)
	require.Len(t, repos, 3)
	assert.Contains(t, repos[0], "/data/worktrees/a/app")
	assert.NotContains(t, repos[0], "in place")
	assert.Contains(t, repos[1], "in place")
	assert.NotContains(t, repos[1], "worktree")
	assert.NotContains(t, repos[2], "worktree", "no worktree yet")
	assert.NotContains(t, repos[2], "in place")
}

// Every pull request state has its own colour rule in the one stylesheet.
func TestStylesheetCoversEveryPullRequestState(t *testing.T) {
	css := stylesheet(t)
	for _, st := range []shared.PullRequestState{
		shared.PRFailure, shared.PRBlocked, shared.PRPending, shared.PRAwaitingReview, shared.PRReady,
		shared.PRPassing, shared.PRDraft, shared.PRMerged, shared.PRClosed, shared.PRNeutral,
	} {
		assert.Regexp(t, `(?m)^\.pr-`+regexp.QuoteMeta(string(st))+`\b[^{]*[{,]`, css, "no rule for pull request state %s", st)
	}
	assertStyled(t, css, "git-panel-head", "git-repo", "git-error", "git-no-base-mark", "repo-input")
}

// stylesheet reads web/static/app.css.
func stylesheet(t *testing.T) string {
	t.Helper()
	css, err := os.ReadFile("../../web/static/app.css")
	require.NoError(t, err)
	return string(css)
}

// assertStyled checks that the stylesheet css has a rule for each class.
func assertStyled(t *testing.T, css string, classes ...string) {
	t.Helper()
	for _, class := range classes {
		assert.Regexp(t, `(?m)^\.`+class+`\b`, css, "no rule for .%s", class)
	}
}
