package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/gitcli/gittest"
)

// The git browser tests follow a task's worktree from the agent's edit to
// the task's row and the open task's git panel: the page focuses the
// session it shows, so the server observes that task's repositories on
// the fast cadence and once more when the turn ends, and the Refresh
// button asks for an observation at once.

// gitSettles bounds the wait for an observation to reach the page: the
// focused cadence is 2 s and the end of a turn, or a refresh, observes at
// once, so a few seconds is generous while a stalled watcher still fails.
const gitSettles = 5 * time.Second

// isolateGit makes every git this test and its server start ignore the
// machine's configuration and commit under a fixed identity, as
// gittest.Isolate does from the TestMain of the git packages. This
// package's TestMain does not call it, and HOME must stay: the wasm build
// and Chromium use it. t.Setenv keeps the test from running in parallel.
func isolateGit(t *testing.T) {
	t.Helper()
	for k, v := range map[string]string{
		"GIT_CONFIG_NOSYSTEM": "1",
		"GIT_CONFIG_GLOBAL":   filepath.Join(t.TempDir(), "gitconfig"),
		"GIT_AUTHOR_NAME":     "herd test",
		"GIT_AUTHOR_EMAIL":    "test@herd.invalid",
		"GIT_COMMITTER_NAME":  "herd test",
		"GIT_COMMITTER_EMAIL": "test@herd.invalid",
	} {
		t.Setenv(k, v)
	}
}

// waitJSWithin polls a JavaScript condition until it is true, for at most d.
func waitJSWithin(cond string, d time.Duration) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(d))(ctx, t)
		if err != nil {
			err = fmt.Errorf("not true within %v: %s: %w", d, cond, err)
		}
		return chromedp.Void{}, err
	}
}

// repoTask creates a task on repository repo and returns its id and its
// one repository: id and worktree_path.
func (c *testClient) repoTask(workspaceID, title, repo string) (taskID string, repository map[string]any) {
	c.tb.Helper()
	task := c.call("task.create", map[string]any{
		"workspace_id": workspaceID, "title": title,
		"repositories": []any{map[string]any{"path": repo}},
	})
	repos, _ := task["repositories"].([]any)
	require.Len(c.tb, repos, 1, "the task has its repository: %v", task)
	return task["id"].(string), repos[0].(map[string]any)
}

// textOf is a JavaScript expression for the text of the element selector
// names, or "" while it is missing or not visible.
func textOf(selector string) string {
	return fmt.Sprintf(`(() => { const e = document.querySelector(%s); return e && e.offsetParent !== null ? e.textContent : ''; })()`, jsString(selector))
}

// gitShows is true once the element selector names is visible with text.
func gitShows(selector, text string) string {
	return textOf(selector) + ` === ` + jsString(text)
}

// panelTotals is the selector of a repository's totals in the git panel.
func panelTotals(repositoryID string) string {
	return `section#git-panel .git-repo[data-repository-id="` + repositoryID + `"] .git-totals`
}

// expectGitTotals waits until the open task's git panel and then its row
// show text, and saves a screenshot named what with the row in view: on a
// phone it shows the task's Details tab, where the panel is, then opens
// the sheet to look at the row and closes it again.
func (p *statusPage) expectGitTotals(taskID, repositoryID, text, what string) {
	p.t.Helper()
	p.showTab("details")
	p.do(waitJSWithin(gitShows(panelTotals(repositoryID), text), gitSettles))
	p.showRows()
	p.do(waitJSWithin(gitShows(p.row(taskID)+" .git", text), gitSettles))
	p.screenshot(what)
	p.hideRows()
}

func TestBrowserAgentWriteUpdatesRowGitTotalsWhileFocused(t *testing.T) {
	atEveryViewport(t, func(t *testing.T, v viewport) {
		isolateGit(t)
		repo := gittest.Init(t)
		srv := startStatusServer(t, "127.0.0.1:0", t.TempDir())
		c := MustDialTest(t, srv)
		ws := c.workspace("Git")
		c.task(ws, "Without a repository")
		taskID, r := c.repoTask(ws, "Write today's notes", repo)
		repositoryID := r["id"].(string)
		worktree := r["worktree_path"].(string)
		require.DirExists(t, worktree)
		sessionID := c.mockSession(taskID)

		p := openStatusPage(t, v, "http://"+srv.Addr()+"/", "git-write")
		p.openTask(taskID)
		p.do(
			waitJS(`(document.querySelector('#session-view') || {dataset: {}}).dataset.sessionId === `+jsString(sessionID)),
			waitJS(sessionInState("WAITING_FOR_INPUT")),
			waitJS(`window.__herdFrames.sent.some(f => f.action === 'session.focus' && f.session_id === `+jsString(sessionID)+`)`),
		)
		// On a phone the git panel is on the task's Details tab.
		p.showTab("details")
		p.do(chromedp.WaitVisible(chromedp.CSS(`section#git-panel .git-repo[data-repository-id="` + repositoryID + `"]`)))
		p.showTab("chat")

		p.do(
			sendPrompt("/scenario write notes/today.md hello"),
			waitJS(agentSaid("wrote 5 bytes to notes/today.md")),
			waitJS(sessionInState("WAITING_FOR_INPUT")),
		)
		turnEnded := time.Now()
		require.FileExists(t, filepath.Join(worktree, "notes", "today.md"), "the agent wrote in the task's worktree")
		require.NoFileExists(t, filepath.Join(repo, "notes", "today.md"), "the repository itself is untouched")
		p.expectGitTotals(taskID, repositoryID, "+1 −0 · 1 file", "agent-wrote")
		t.Logf("%s: the panel and row showed the agent's write %v after the turn ended (a screenshot included)", v.name, time.Since(turnEnded).Round(time.Millisecond))

		// A change the agent did not make shows once the person asks.
		require.NoError(t, os.WriteFile(filepath.Join(worktree, "notes", "tomorrow.md"), []byte("plan\nreview\n"), 0o644))
		refreshed := time.Now()
		p.do(
			waitJS(`document.querySelector('button#git-refresh').getAttribute('aria-label') === 'Refresh git status'`),
			chromedp.Click(chromedp.CSS("button#git-refresh")),
		)
		p.expectGitTotals(taskID, repositoryID, "+3 −0 · 2 files", "refreshed")
		t.Logf("%s: the panel and row showed the refresh %v after the click (a screenshot included)", v.name, time.Since(refreshed).Round(time.Millisecond))
		p.do(waitJS(`window.__herdFrames.received.some(f => f.type === 'response' && f.action === 'session.git.refresh' && f.req_session_id === ` + jsString(sessionID) + `)`))

		f := p.frames()
		t.Logf("%s: sent%s\nreceived%s", v.name, countByAction(f.Sent), countByAction(f.Received))
		require.True(t, slices.ContainsFunc(f.Sent, func(s wsFrame) bool {
			return s.Action == "session.focus" && s.SessionID == sessionID
		}), "the page focused the session it shows")
		require.True(t, slices.ContainsFunc(f.Sent, func(s wsFrame) bool {
			return s.Action == "session.git.refresh" && s.SessionID == sessionID
		}), "the Refresh button sent session.git.refresh for the open session")
		require.False(t, slices.ContainsFunc(f.Received, func(r wsFrame) bool {
			return r.Type == "error" && (r.Action == "session.git.refresh" || r.Action == "session.focus")
		}), "neither the focus nor the refresh was refused")
		require.True(t, slices.ContainsFunc(f.Received, func(r wsFrame) bool {
			return r.Type == "notification" && r.Action == "session.git.updated" && r.SessionID == sessionID
		}), "the panel's totals came as session.git.updated of the open session")
		require.True(t, slices.ContainsFunc(f.Received, func(r wsFrame) bool {
			return r.Action == "task.status_summary.updated" && r.TaskID == taskID
		}), "the row's totals came from the task's summary")
		require.Zero(t, evalOn[int](p, `document.querySelectorAll('.git-refresh-error').length`), "the panel shows no refresh error")
	})
}
