package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/gitcli/gittest"
	"github.com/herd-dev/herd/shared"
)

// The review browser tests open a task's review from its row, read a
// file's diff, comment on two of its lines, send the comments and find
// them as one prompt in the session's transcript; at the desktop and the
// phone viewport. The task's worktree holds what its mock agent wrote in
// a turn and an edit made on disk, so the review reads a real repository
// through the server's git.

// uploadBefore and uploadAfter are src/upload.go as the base branch has
// it and as the task's worktree has it: line 3 changes, lines 5–6 are
// added, and line 7 is longer than a phone is wide.
const (
	uploadBefore = "package upload\n\nfunc Upload() error {\n\treturn send()\n}\n"
	uploadAfter  = "package upload\n\nfunc Upload(ctx context.Context) error {\n\treturn send()\n}\n\n" +
		"// retry sends again after a failure, at most three times, waiting a little longer each time, so that a flaky network does not fail an upload.\n"
)

// shiftClick clicks the first visible element selector names with the
// shift key held.
func shiftClick(selector string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		nodes, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS(selector), chromedp.NodeVisible))
		if err != nil {
			return err
		}
		_, err = chromedp.MouseClickNode(nodes[0], chromedp.ButtonModifiers(chromedp.ModifierShift))(ctx, t)
		return err
	})
}

// lineNumber is the selector of a diff line's number button by its line
// in the changed file.
func lineNumber(newLine int) string {
	return fmt.Sprintf(`#review-diff .review-num[aria-label$=" %d"]:not([aria-label^="Removed"])`, newLine)
}

// reviewTask makes a repository whose base has src/upload.go, a task on
// it with a mock session whose agent wrote notes/today.md in one turn,
// and the edit of src/upload.go made in the worktree since. It returns the
// task's and the session's ids.
func reviewTask(t *testing.T, c *testClient) (taskID, sessionID string) {
	t.Helper()
	repo := gittest.Init(t)
	gittest.Write(t, repo, "src/upload.go", uploadBefore)
	gittest.Commit(t, repo, "upload")
	ws := c.workspace("Review")
	c.task(ws, "Without a repository")
	taskID, r := c.repoTask(ws, "Retry uploads", repo)
	worktree := r["worktree_path"].(string)
	sessionID = c.mockSession(taskID)
	c.prompt(sessionID, "/scenario write notes/today.md hello")
	eventually(t, "the agent wrote its notes", func() bool {
		_, ok := c.message(sessionID, "agent", "wrote 5 bytes to notes/today.md")
		return ok
	})
	gittest.Write(t, worktree, "src/upload.go", uploadAfter)
	require.FileExists(t, filepath.Join(worktree, "notes", "today.md"))
	return taskID, sessionID
}

func TestBrowserReviewCommentsOnTwoLinesReachTheSessionAsOnePrompt(t *testing.T) {
	atEveryViewport(t, func(t *testing.T, v viewport) {
		isolateGit(t)
		srv := startStatusServer(t, "127.0.0.1:0", t.TempDir())
		c := MustDialTest(t, srv)
		taskID, sessionID := reviewTask(t, c)

		p := openStatusPage(t, v, "http://"+srv.Addr()+"/", "review")
		p.showRows()
		// The row's totals come from the summary once the turn's
		// observation is in; they are the way to the review.
		link := p.scope() + ` a.row-review[data-task-id="` + taskID + `"]`
		p.do(chromedp.WaitVisible(chromedp.CSS(link)), chromedp.Click(chromedp.CSS(link)))
		if p.phone {
			p.do(chromedp.WaitNotVisible(chromedp.CSS("#switcher-sheet")))
		}
		file := `#review-files a.review-file[data-path="src/upload.go"]`
		p.do(
			waitJS(`location.pathname === `+jsString("/tasks/"+taskID+"/review")),
			chromedp.WaitVisible(chromedp.CSS(file)),
			chromedp.WaitVisible(chromedp.CSS(`#review-files a.review-file[data-path="notes/today.md"][data-status="added"]`)),
			waitJS(textOf("#review-totals")+` === "+4 −1 · 2 files"`),
		)
		p.screenshot("files")

		// Read the file's diff: on a desktop beside the list, on a phone
		// full screen with a way back.
		if p.phone {
			p.do(chromedp.Tap(chromedp.CSS(file)))
		} else {
			p.do(chromedp.Click(chromedp.CSS(file)))
		}
		p.do(
			waitJS(`(document.querySelector('#review-diff') || {dataset: {}}).dataset.path === "src/upload.go"`),
			chromedp.WaitVisible(chromedp.CSS(lineNumber(3))),
			waitJS(`[...document.querySelectorAll('#review-diff .review-removed .review-code')].map(e => e.textContent).join('\n') === "func Upload() error {"`),
			waitJS(`[...document.querySelectorAll('#review-diff .review-added .review-code')].map(e => e.textContent).join('\n') === `+
				jsString("func Upload(ctx context.Context) error {\n\n// retry sends again after a failure, at most three times, waiting a little longer each time, so that a flaky network does not fail an upload.")),
		)
		if p.phone {
			require.Equal(t, "diff", evalOn[string](p, `document.querySelector('#review').dataset.showing`), "the diff shows full screen")
			require.True(t, evalOn[bool](p, `document.scrollingElement.scrollWidth <= innerWidth`), "no horizontal page scroll")
			require.True(t, evalOn[bool](p, `(() => { const b = document.querySelector('#review-diff .review-lines'); return b.scrollWidth > b.clientWidth; })()`),
				"the long line scrolls inside its box")
			require.True(t, evalOn[bool](p, `document.querySelector('#review-back').offsetParent !== null`), "a way back to the list")
		}
		p.screenshot("diff")

		// Comment on two lines, 3 and 4 of the changed file, as one range
		// from the line 3 replaced: its number, then a shift-click (a
		// second tap on a phone) on line 4.
		removed := `#review-diff .review-num[aria-label="Removed line 3"]`
		// The comment box opens under the first line, moving the lines
		// after it: the second click aims once it has.
		one := waitJS(`document.querySelectorAll('#review-diff .review-row.review-selected').length === 1 && document.querySelector('#review-compose') !== null`)
		if p.phone {
			p.do(chromedp.Tap(chromedp.CSS(removed)), one, chromedp.Tap(chromedp.CSS(lineNumber(4))))
		} else {
			p.do(chromedp.Click(chromedp.CSS(removed)), one, shiftClick(lineNumber(4)))
		}
		p.do(
			waitJS(`document.querySelectorAll('#review-diff .review-row.review-selected').length === 3`),
			waitJS(textOf("#review-compose .review-compose-label")+` === "Comment on lines 3–4"`),
			typeInto("#review-comment-input", "Take the context from the caller."),
			chromedp.Click(chromedp.CSS("#review-comment-add")),
			waitJS(`document.querySelector('#review-compose') === null`),
			waitJS(`[...document.querySelectorAll('#review-diff .review-note .review-note-body')].some(e => e.textContent === "Take the context from the caller.")`),
			waitJS(textOf("#review-send")+` === "Send 1 comment"`),
		)
		p.screenshot("commented")

		// A pending comment survives a reload.
		p.do(chromedp.Reload(), waitReady(), waitJS(textOf("#review-send")+` === "Send 1 comment"`),
			// Clicks aim at where things are: once review.get has answered
			// (Send is enabled then) and the files are listed, nothing
			// moves the tabs any more.
			waitJS(`!document.querySelector('#review-send').disabled`))
		if !p.phone {
			p.do(
				waitJS(`document.querySelectorAll('#review-files a.review-file').length === 2`),
				chromedp.Click(chromedp.CSS("#review-tab-comments")),
				waitJS(textOf("#review-pending .review-note-lines")+` === "src/upload.go, lines 3–4"`),
			)
		}

		p.do(
			// Enabled once review.get has named the session they go to.
			waitJS(`!document.querySelector('#review-send').disabled`),
			chromedp.Click(chromedp.CSS("#review-send")),
			chromedp.WaitVisible(chromedp.CSS("#review-see-session")),
			waitJS(textOf("#review-delivered")+`.startsWith("1 comment sent")`),
			waitJS(`document.querySelector('#review-send') === null`),
		)
		p.screenshot("sent")

		want, err := shared.ReviewPrompt([]shared.ReviewComment{{
			Path: "src/upload.go", Side: shared.SideNew, StartLine: 3, EndLine: 4,
			Code: "-func Upload() error {\n+func Upload(ctx context.Context) error {\n \treturn send()",
			Body: "Take the context from the caller.",
		}})
		require.NoError(t, err)
		p.do(
			chromedp.Click(chromedp.CSS("#review-see-session")),
			waitJS(`(document.querySelector('#session-view') || {dataset: {}}).dataset.sessionId === `+jsString(sessionID)),
			waitJS(userMessages(want)+` === 1`),
		)
		p.screenshot("session")

		m, ok := c.message(sessionID, "user", want)
		require.True(t, ok, "the session holds the comments as one prompt, as shared.ReviewPrompt writes it")
		require.NotEmpty(t, m["client_message_id"], "sent with a client_message_id, as the composer sends")
		f := p.frames()
		t.Logf("%s: sent%s", v.name, countByAction(f.Sent))
		adds := slices.DeleteFunc(slices.Clone(f.Sent), func(s wsFrame) bool { return s.Action != shared.ActionMessageAdd })
		require.Len(t, adds, 1, "one message.add carried the comments")
		require.Equal(t, sessionID, adds[0].SessionID)
		require.False(t, slices.ContainsFunc(f.Received, func(r wsFrame) bool { return r.Type == "notification" && strings.HasPrefix(r.Action, "review.") }),
			"nothing of a diff is pushed")
	})
}

func TestBrowserReviewCommitsThenPushesShowingGitsOwnWords(t *testing.T) {
	isolateGit(t)
	srv := startStatusServer(t, "127.0.0.1:0", t.TempDir())
	c := MustDialTest(t, srv)
	taskID, _ := reviewTask(t, c)
	repo := c.call("task.get", map[string]any{"task_id": taskID})["repositories"].([]any)[0].(map[string]any)
	worktree := repo["worktree_path"].(string)
	// The remote is missing at first: the push fails with git's reason.
	bare := filepath.Join(t.TempDir(), "remote.git")
	gittest.Git(t, worktree, "remote", "add", "origin", bare)

	p := openStatusPage(t, viewport{"desktop", false}, "http://"+srv.Addr()+"/tasks/"+taskID+"/review", "review-finish")
	p.do(
		chromedp.WaitVisible(chromedp.CSS("#review-files")),
		chromedp.Click(chromedp.CSS("#review-tab-finish")),
		waitJS(textOf("#review-uncommitted")+`.startsWith("2 files not committed")`),
		waitJS(`document.querySelector('#review-commit-message').value === "wrote 5 bytes to notes/today.md"`),
	)
	p.do(
		runJS(`const el = document.querySelector('#review-commit-message'); el.value = "Retry uploads"; el.dispatchEvent(new Event('input', {bubbles: true}))`),
		chromedp.Click(chromedp.CSS("#review-commit")),
		chromedp.WaitVisible(chromedp.CSS("#review-commit-result")),
		waitJS(textOf("#review-uncommitted")+` === "Nothing to commit: every change is committed."`),
		waitJS(`document.querySelector('#review-commit').disabled`),
	)
	head := gittest.Git(t, worktree, "rev-parse", "HEAD")
	require.Equal(t, "Retry uploads", gittest.Git(t, worktree, "log", "-1", "--format=%s"))
	shown := evalOn[string](p, `document.querySelector('#review-commit-result code').textContent`)
	require.True(t, strings.HasPrefix(head, shown), "the result names the commit made: %s of %s", shown, head)
	require.Empty(t, gittest.Git(t, worktree, "status", "--porcelain"), "everything was committed")

	p.do(
		chromedp.Click(chromedp.CSS("#review-push")),
		chromedp.WaitVisible(chromedp.CSS("#review-push-error")),
		waitJS(textOf("#review-push-error pre")+`.includes("does not appear to be a git repository")`),
	)
	p.screenshot("push-failed")

	gittest.Git(t, filepath.Dir(bare), "init", "--quiet", "--bare", bare)
	p.do(
		chromedp.Click(chromedp.CSS("#review-push")),
		chromedp.WaitVisible(chromedp.CSS("#review-push-output")),
		waitJS(`document.querySelector('#review-push-error') === null`),
		waitJS(`document.querySelector('#review-push').disabled`),
	)
	branch := gittest.Git(t, worktree, "rev-parse", "--abbrev-ref", "HEAD")
	require.Equal(t, head, gittest.Git(t, bare, "rev-parse", branch), "the remote has the branch at the commit")
	t.Logf("push output: %q", evalOn[string](p, `document.querySelector('#review-push-output').textContent`))
	p.screenshot("pushed")
}

func TestBrowserReviewPagesALongListAndALongDiff(t *testing.T) {
	isolateGit(t)
	srv := startStatusServer(t, "127.0.0.1:0", t.TempDir())
	c := MustDialTest(t, srv)
	repo := gittest.Init(t)
	ws := c.workspace("Review")
	taskID, r := c.repoTask(ws, "Many files", repo)
	worktree := r["worktree_path"].(string)
	var big strings.Builder
	for i := range 1200 {
		fmt.Fprintf(&big, "line %d\n", i+1)
	}
	gittest.Write(t, worktree, "a-big.txt", big.String())
	for i := range 150 {
		gittest.Write(t, worktree, fmt.Sprintf("many/f%03d.txt", i), "one\n")
	}

	p := openStatusPage(t, viewport{"desktop", false}, "http://"+srv.Addr()+"/tasks/"+taskID+"/review", "review-paging")
	// The web app asks for 100 files a page.
	files := `document.querySelectorAll('#review-files a.review-file')`
	p.do(
		waitJS(files+`.length === 100`),
		waitJS(textOf("#review-totals")+` === "+1350 −0 · 151 files"`),
		chromedp.Click(chromedp.CSS("#review-more-files")),
		waitJS(files+`.length === 151`),
		waitJS(`document.querySelector('#review-more-files') === null`),
		waitJS(`[...`+files+`].map(a => a.dataset.path).join() === `+jsString(pagedPaths())),
	)
	// On a desktop the first file shows: the long one, a page at a time.
	nums := `document.querySelectorAll('#review-diff .review-num').length`
	p.do(
		waitJS(`(document.querySelector('#review-diff') || {dataset: {}}).dataset.path === "a-big.txt"`),
		waitJS(nums+` > 0`),
		chromedp.WaitVisible(chromedp.CSS("#review-more-lines")),
	)
	first := evalOn[int](p, nums)
	require.Less(t, first, 1200, "the first page holds part of the diff")
	for evalOn[int](p, nums) < 1200 {
		before := evalOn[int](p, nums)
		p.do(chromedp.Click(chromedp.CSS("#review-more-lines")), waitJS(nums+` > `+fmt.Sprint(before)))
	}
	p.do(
		waitJS(`document.querySelector('#review-more-lines') === null`),
		waitJS(`[...document.querySelectorAll('#review-diff .review-block')].pop().lastElementChild.querySelector('.review-code').textContent === "line 1200"`),
		waitJS(`[...document.querySelectorAll('#review-diff .review-num')].pop().getAttribute('aria-label') === "Added line 1200"`),
		waitJS(`document.querySelectorAll('#review-diff .review-hunk-head').length === 1`),
	)
	t.Logf("the diff's first page held %d of its 1200 lines", first)
	p.screenshot("paged")
}

// pagedPaths is the paths TestBrowserReviewPagesALongListAndALongDiff
// lists, in path order.
func pagedPaths() string {
	paths := []string{"a-big.txt"}
	for i := range 150 {
		paths = append(paths, fmt.Sprintf("many/f%03d.txt", i))
	}
	return strings.Join(paths, ",")
}

func TestBrowserReviewShowsWhatOneTurnChanged(t *testing.T) {
	isolateGit(t)
	srv := startStatusServer(t, "127.0.0.1:0", t.TempDir())
	c := MustDialTest(t, srv)
	repo := gittest.Init(t)
	taskID, _ := c.repoTask(c.workspace("Review"), "Two turns", repo)
	sessionID := c.mockSession(taskID)
	for _, f := range []string{"first.txt", "second.txt"} {
		c.prompt(sessionID, "/scenario write "+f+" written")
		eventually(t, "the agent wrote "+f, func() bool {
			_, ok := c.message(sessionID, "agent", "wrote 7 bytes to "+f)
			return ok
		})
	}
	eventually(t, "the second turn settled", func() bool {
		for _, s := range c.call("session.list", map[string]any{"task_id": taskID})["sessions"].([]any) {
			if s := s.(map[string]any); s["id"] == sessionID {
				return s["state"] == "WAITING_FOR_INPUT"
			}
		}
		return false
	})

	p := openStatusPage(t, viewport{"desktop", false}, "http://"+srv.Addr()+"/tasks/"+taskID+"/review", "review-turns")
	listed := `[...document.querySelectorAll('#review-files a.review-file')].map(a => a.dataset.path).join()`
	p.do(
		waitJS(listed+` === "first.txt,second.txt"`),
		chromedp.Click(chromedp.CSS("#review-scope-turn")),
		waitJS(`location.search === "?scope=turn"`),
		waitJS(listed+` === "second.txt"`),
		waitJS(textOf("#review-totals")+` === "+1 −0 · 1 file"`),
	)
	p.screenshot("last-turn")
	turns := evalOn[[]string](p, `[...document.querySelectorAll('#review-turn option')].map(o => o.textContent)`)
	require.Len(t, turns, 2, "both turns can be picked: %q", turns)
	require.True(t, strings.HasPrefix(turns[0], "Last turn, "), "newest first: %q", turns)
	require.True(t, strings.HasSuffix(turns[1], ": /scenario write first.txt written"), "each named by its prompt: %q", turns)
	p.do(
		runJS(`const s = document.querySelector('#review-turn'); s.selectedIndex = 1; s.dispatchEvent(new Event('change', {bubbles: true}))`),
		waitJS(listed+` === "first.txt"`),
		waitJS(`new URLSearchParams(location.search).get('turn') !== null`),
		chromedp.Click(chromedp.CSS("#review-scope-task")),
		waitJS(listed+` === "first.txt,second.txt"`),
		waitJS(`location.search === ""`),
	)
}

func TestBrowserReviewCommentsQueueBehindARunningTurn(t *testing.T) {
	isolateGit(t)
	srv := startStatusServer(t, "127.0.0.1:0", t.TempDir())
	c := MustDialTest(t, srv)
	taskID, sessionID := reviewTask(t, c)
	c.prompt(sessionID, "/scenario sleep 60000")

	p := openStatusPage(t, viewport{"desktop", false}, "http://"+srv.Addr()+"/tasks/"+taskID+"/review?file=src%2Fupload.go", "review-queued")
	p.do(
		chromedp.WaitVisible(chromedp.CSS(lineNumber(6))),
		chromedp.Click(chromedp.CSS(lineNumber(6))),
		typeInto("#review-comment-input", "Drop this blank line."),
		chromedp.Click(chromedp.CSS("#review-comment-add")),
		waitJS(textOf("#review-send")+` === "Queue 1 comment"`),
		waitJS(`!document.querySelector('#review-send').disabled`),
		chromedp.Click(chromedp.CSS("#review-send")),
		waitJS(textOf("#review-delivered")+`.startsWith("1 comment sent, queued behind the agent's turn")`),
	)
	p.screenshot("queued")
	want, err := shared.ReviewPrompt([]shared.ReviewComment{{Path: "src/upload.go", Side: shared.SideNew, StartLine: 6, EndLine: 6, Code: "+", Body: "Drop this blank line."}})
	require.NoError(t, err)
	_, ran := c.message(sessionID, "user", want)
	require.False(t, ran, "the comments wait in the queue while the turn runs")

	c.call("session.cancel", map[string]any{"session_id": sessionID})
	eventually(t, "the queued comments ran as the next turn", func() bool {
		_, ok := c.message(sessionID, "user", want)
		return ok
	})
}
