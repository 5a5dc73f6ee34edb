package ui

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/shared"
)

// reviewInfo is review.get's answer for task a: one repository with two
// uncommitted files and a remote on GitHub.
func reviewInfo() shared.ReviewGetResponse {
	ahead := 1
	return shared.ReviewGetResponse{
		TaskID: "a", SessionID: "s1", DraftMessage: "Add the retry to the uploader", PullRequests: true,
		Repositories: []shared.ReviewRepository{{
			RepositoryID: "r1", Path: "/src/app", Dir: "/data/wt/app", Branch: "herd/a-retry", BaseBranch: "main",
			Remote: "origin", Upstream: "origin/herd/a-retry", UpstreamAhead: &ahead, Uncommitted: 2, Ahead: 3,
			GitHubRepository: "acme/app",
		}},
		Turns: []shared.ReviewTurn{{TurnID: "m2", SessionID: "s1", StartedAt: t0, Prompt: "Add a retry"}},
	}
}

// reviewFiles is the first files page of task a's whole change.
func reviewFiles() shared.ReviewFilesResponse {
	return shared.ReviewFilesResponse{
		TaskID: "a", RepositoryID: "r1", Scope: shared.ReviewScopeTask, From: "T0", To: "T1", Total: 5, Additions: 12, Deletions: 3, More: true,
		Files: []shared.ReviewFile{
			{Path: "src/upload.go", Status: shared.FileModified, Additions: 8, Deletions: 2},
			{Path: "src/retry.go", OldPath: "src/again.go", Status: shared.FileRenamed, Additions: 3, Deletions: 1},
			{Path: "logo.png", Status: shared.FileAdded, Binary: true},
			{Path: "old.txt", Status: shared.FileDeleted, Deletions: 0},
		},
	}
}

// uploadDiff is the first page of src/upload.go's diff.
func uploadDiff(next int) shared.ReviewFileResponse {
	return shared.ReviewFileResponse{Path: "src/upload.go", Status: shared.FileModified, OldSize: 100, NewSize: 120, NextOffset: next,
		Hunks: []shared.ReviewHunk{{Header: "@@ -10,3 +10,4 @@ func upload() {", OldStart: 10, NewStart: 10,
			Lines: []string{" \tctx := context.Background()", "-\trun(ctx)", "+\tif err := run(ctx); err != nil {", "+\t\treturn err", " }"}}},
	}
}

// reviewOf returns task a's review at route r, loaded as far as review.get
// and the first files page, with the comments kept in kv.
func reviewOf(t *testing.T, r state.Route, phone bool, kv state.MapKV) *reviewView {
	t.Helper()
	sum := &shared.TaskStatusSummary{Revision: 1, PrimarySession: &shared.PrimarySession{ID: "s1", State: shared.SessionWaitingForInput}}
	task := newTask("a", "Retry uploads", 1, sum)
	s := booted(task)
	r.TaskID, r.Review = "a", true
	s.route, s.phone = r, phone
	rv := s.reviewViewOf(task)
	rv.taskID, rv.finish = "a", map[string]*finishState{}
	n := 0
	rv.comments = state.NewReviewComments(kv, "a", func() string { n++; return "c" + strconv.Itoa(n) })
	rv.info, rv.infoLoaded = reviewInfo(), true
	rv.sync()
	require.NotNil(t, rv.files, "the listing was asked for")
	_, ticket := rv.files.First(reviewFilesPage)
	require.True(t, rv.files.Apply(ticket, reviewFiles()))
	rv.sync()
	return rv
}

// withDiff gives the review's chosen file its first diff page.
func withDiff(t *testing.T, rv *reviewView, resp shared.ReviewFileResponse) {
	t.Helper()
	require.NotNil(t, rv.diff, "a file is chosen")
	_, ticket := rv.diff.First(reviewLinesPage)
	require.True(t, rv.diff.Apply(ticket, resp))
}

func TestARowsGitTotalsLinkToItsReviewBesideTheRowsLink(t *testing.T) {
	sum := &shared.TaskStatusSummary{Revision: 1, Git: &shared.GitSummary{Additions: 12, Deletions: 3, ChangedFiles: 2}}
	markup := html(booted(newTask("a", "Retry uploads", 1, sum), newTask("b", "No changes", 2, &shared.TaskStatusSummary{Revision: 1})))

	links := startTags(markup, "a", `class="row-review"`)
	require.Len(t, links, 1, "only the task with totals has the link")
	assert.Contains(t, links[0], `href="/tasks/a/review"`)
	assert.Contains(t, links[0], `aria-label="Review the changes: 12 additions, 3 deletions in 2 files"`)
	assert.Regexp(t, `\s*<span aria-hidden>\+12 −3 · 2 files</span>\s*</a>`, markup,
		"the link has the totals' text, so it covers them exactly")

	item := markup[strings.Index(markup, `data-task-id="a"`):]
	rowEnd := strings.Index(item, "</a>")
	assert.NotContains(t, item[:rowEnd], "row-review", "the review link is not inside the row's own link")
	assert.Contains(t, item[:rowEnd], `class="git"`, "the row still shows its totals")
}

func TestTheReviewAddressShowsTheReviewInTheMainPane(t *testing.T) {
	s := booted(newTask("a", "Retry uploads", 1, nil))
	s.route = state.Route{TaskID: "a", Review: true}
	markup := html(s)
	elementWith(t, markup, idReview)
	assert.NotContains(t, markup, `id="task-view"`, "the review takes the task's place")
	assert.Contains(t, markup, "Loading the changes…", "the server's first screen says it loads")
	assert.Contains(t, elementWith(t, markup, "review-exit"), `href="/tasks/a"`)

	s.route = state.Route{TaskID: "a", Review: true, SessionID: "s9"}
	assert.Contains(t, elementWith(t, html(s), "review-exit"), `href="/tasks/a/sessions/s9"`, "back to the session the person came from")
}

func TestTheFileListNamesEachFilesStatusPathAndCounts(t *testing.T) {
	rv := reviewOf(t, state.Route{}, false, state.MapKV{})
	markup := html(rv)

	files := startTags(markup, "a", `class="review-file"`)
	require.Len(t, files, 4)
	assert.Regexp(t, bare("aria-current"), files[0], "on a desktop the first file shows when none is chosen")
	assert.NotContains(t, files[1], "aria-current")
	assert.Contains(t, files[1], `href="/tasks/a/review?file=src%2Fretry.go"`)
	for _, named := range []string{"modified", "renamed", "added", "deleted"} {
		assert.Contains(t, markup, `aria-label="`+named+`"`)
	}
	assert.Regexp(t, `<span[^>]*class="review-status review-status-R"[^>]*>R</span>`, markup)
	assert.Contains(t, markup, `<span class="review-file-old">src/again.go → </span>`)
	assert.Contains(t, markup, `<span class="review-file-binary">binary</span>`)
	assert.Regexp(t, `id="review-totals"[^>]*>\s*<span[^>]*aria-label="12 additions, 3 deletions in 5 files"`, markup,
		"the totals count the whole comparison, not the page")
	assert.Contains(t, markup, `id="review-more-files"`, "more files follow the first page")
	assert.Contains(t, markup, ">4 of 5 files </span>")
}

func TestOnAPhoneTheListShowsUntilAFileIsChosenThenItsDiffWithAWayBack(t *testing.T) {
	rv := reviewOf(t, state.Route{}, true, state.MapKV{})
	markup := html(rv)
	assert.Contains(t, elementWith(t, markup, idReview), `data-showing="list"`)
	assert.Nil(t, rv.diff, "no file is chosen for the person on a phone")
	for _, tag := range startTags(markup, "a", "review-file") {
		assert.NotContains(t, tag, "aria-current")
	}

	rv = reviewOf(t, state.Route{File: "src/upload.go"}, true, state.MapKV{})
	withDiff(t, rv, uploadDiff(0))
	markup = html(rv)
	assert.Contains(t, elementWith(t, markup, idReview), `data-showing="diff"`)
	assert.Contains(t, elementWith(t, markup, "review-back"), `href="/tasks/a/review"`)
	assert.Contains(t, markup, "Tap a line number to comment on it; tap a second one for a range.")
}

func TestADiffShowsNumberedColouredLinesWithShowMore(t *testing.T) {
	rv := reviewOf(t, state.Route{}, false, state.MapKV{})
	withDiff(t, rv, uploadDiff(5))
	markup := html(rv)

	assert.Contains(t, markup, `<span class="review-code">@@ -10,3 +10,4 @@ func upload() {</span>`)
	nums := startTags(markup, "button", `class="review-num"`)
	require.Len(t, nums, 5, "every line has its numbers as a button; the header has none")
	assert.Contains(t, nums[0], `aria-label="Line 10"`)
	assert.Contains(t, nums[1], `aria-label="Removed line 11"`)
	assert.Contains(t, nums[2], `aria-label="Added line 11"`)
	assert.Contains(t, nums[2], `data-row="3"`)
	assert.Regexp(t, `class="review-row review-removed"`, markup)
	assert.Regexp(t, `<span class="review-old">11</span>\s*<span class="review-new"></span>`, markup)
	assert.Contains(t, markup, `<span class="review-code">	if err := run(ctx); err != nil {</span>`, "the line without its mark, tabs kept")
	assert.Contains(t, markup, `id="review-more-lines"`)
	assert.Contains(t, markup, "shift-click another for a range")
}

func TestABinaryOrTooLargeFileIsNamedWithItsSizesNotShown(t *testing.T) {
	rv := reviewOf(t, state.Route{File: "logo.png"}, false, state.MapKV{})
	withDiff(t, rv, shared.ReviewFileResponse{Path: "logo.png", Status: shared.FileAdded, Binary: true, NewSize: 3 << 10})
	assert.Contains(t, html(rv), "Binary file, not shown: 3 KB")

	rv = reviewOf(t, state.Route{File: "src/upload.go"}, false, state.MapKV{})
	withDiff(t, rv, shared.ReviewFileResponse{Path: "src/upload.go", Status: shared.FileModified, TooLarge: true, OldSize: 9 << 20, NewSize: 10 << 20})
	markup := html(rv)
	assert.Contains(t, markup, "Too large to show (over 8.0 MB on a side): 9.0 MB before, 10.0 MB after")
	assert.NotContains(t, markup, "review-num")
}

func TestSelectedLinesGetTheCommentBoxAndPendingCommentsShowInline(t *testing.T) {
	kv := state.MapKV{}
	rv := reviewOf(t, state.Route{}, false, kv)
	withDiff(t, rv, uploadDiff(0))
	c, ok := rv.diff.Comment(2, 3)
	require.True(t, ok)
	c.Body = "Wrap the error: <b>say what failed</b>"
	_, err := rv.comments.Add("r1", c)
	require.NoError(t, err)
	rv.sel = state.LineSelection{Anchor: 4, Head: 5, Set: true}

	markup := html(rv)
	assert.Len(t, startTags(markup, "div", "review-selected"), 2)
	pressed := 0
	for _, tag := range startTags(markup, "button", "review-num") {
		if !strings.Contains(tag, `aria-pressed="false"`) {
			pressed++
		}
	}
	assert.Equal(t, 2, pressed, "the selected lines' numbers are pressed")
	assert.Regexp(t, `<label[^>]*for="review-comment-input"[^>]*>Comment on lines 12–13</label>`, markup)
	compose := strings.Index(markup, `id="review-compose"`)
	lastSelected := strings.Index(markup, `data-row="5"`)
	require.Positive(t, compose)
	assert.Greater(t, compose, lastSelected, "the box is under the range")

	note := strings.Index(markup, "Wrap the error")
	assert.Greater(t, note, strings.Index(markup, `data-row="3"`), "the comment shows after its last line")
	assert.Less(t, note, strings.Index(markup, `data-row="4"`))
	assert.Contains(t, markup, "Wrap the error: &lt;b&gt;say what failed&lt;/b&gt;", "a comment is only ever text")
	assert.Contains(t, markup, ">Line 11</span>", "an inline comment names its lines")
	assert.Len(t, startTags(markup, "div", "review-commented"), 2, "the lines it is on are marked")
	assert.Contains(t, markup, `id="review-send"`)
	assert.Contains(t, markup, ">Send 1 comment</button>")
}

func TestTheSendButtonQueuesBehindARunningTurnAndNeedsASession(t *testing.T) {
	kv := state.MapKV{}
	rv := reviewOf(t, state.Route{}, false, kv)
	_, err := rv.comments.Add("r1", shared.ReviewComment{Path: "src/upload.go", Side: shared.SideNew, StartLine: 1, EndLine: 1, Body: "x"})
	require.NoError(t, err)
	rv.Task.StatusSummary.PrimarySession.State = shared.SessionRunning
	assert.Contains(t, html(rv), ">Queue 1 comment</button>")

	rv.info.SessionID = ""
	send := elementWith(t, html(rv), idReviewSend)
	assert.Regexp(t, regexpDisabled, send, "no session to send to")
	assert.Contains(t, send, "start one first")

	rv.Route.SessionID = "s7"
	assert.NotRegexp(t, regexpDisabled, elementWith(t, html(rv), idReviewSend), "the session the person came from takes them")
	assert.Equal(t, "s7", rv.target())
}

func TestSentCommentsOfferTheSessionThatHasThem(t *testing.T) {
	rv := reviewOf(t, state.Route{}, false, state.MapKV{})
	rv.delivered = delivery{sessionID: "s1", comments: 2, outcome: shared.OutcomeQueued}
	markup := html(rv)
	assert.Contains(t, markup, "2 comments sent, queued behind the agent&#39;s turn")
	assert.Contains(t, elementWith(t, markup, idSeeInSession), `href="/tasks/a/sessions/s1"`)
	assert.NotContains(t, markup, `id="review-send"`, "nothing waits")
}

func TestAPromptTheServerRefusedOffersRetryAndEditingAgain(t *testing.T) {
	kv := state.MapKV{}
	rv := reviewOf(t, state.Route{}, false, kv)
	rv.panel = panelComments
	_, _ = rv.comments.Add("r1", shared.ReviewComment{Path: "src/upload.go", Side: shared.SideNew, StartLine: 1, EndLine: 1, Body: "x"})
	outbox := state.NewOutbox(kv, "s1", func() string { return "cm-1" })
	rv.Shell.outboxes = outboxes{"s1": outbox}
	s := outbox.Add("the prompt")
	rv.comments.Sent(s.ClientMessageID, "s1")
	assert.Contains(t, html(rv), ">1 comment on the way</span>")
	outbox.Refused(s.ClientMessageID, "the session cannot take a prompt")

	markup := html(rv)
	assert.Contains(t, markup, "1 comment: Not sent: the session cannot take a prompt")
	assert.Contains(t, markup, `class="text-button review-prompt-retry"`)
	assert.Contains(t, markup, ">Edit them again</button>")
	assert.Contains(t, markup, ">1 comment not sent: see why</button>", "the head says so, whichever panel shows")
	assert.NotContains(t, markup, "on the way</span>")
}

func TestThePendingCommentsPanelListsThemWithEditAndDelete(t *testing.T) {
	rv := reviewOf(t, state.Route{}, false, state.MapKV{})
	rv.panel = panelComments
	assert.Contains(t, html(rv), "Click a line number to comment on it", "an empty panel says how to comment")
	p, _ := rv.comments.Add("r1", shared.ReviewComment{Path: "src/retry.go", Side: shared.SideOld, StartLine: 4, EndLine: 6, Body: "Keep these."})

	markup := html(rv)
	assert.Contains(t, markup, `>src/retry.go, lines 4–6 (before the change)</a>`)
	assert.Contains(t, startTags(markup, "a", "review-note-lines")[0], `href="/tasks/a/review?file=src%2Fretry.go&repo=r1"`)
	assert.Contains(t, markup, ">Edit</button>")
	assert.Contains(t, markup, ">Delete</button>")
	assert.Regexp(t, `id="review-tab-comments"[^>]*>Comments 1</button>`, markup)

	rv.editing, rv.editWhere, rv.editText = p.ID, editList, "Keep these, please."
	markup = html(rv)
	elementWith(t, markup, idEditInput)
	assert.NotContains(t, markup, ">Edit</button>", "the comment being edited shows its box instead")
}

func TestFinishingSaysWhyAStepCannotBeDone(t *testing.T) {
	rv := reviewOf(t, state.Route{}, false, state.MapKV{})
	rv.panel = panelFinish
	markup := html(rv)
	assert.Contains(t, markup, "2 files not committed on herd/a-retry.")
	assert.Contains(t, elementWith(t, markup, idCommitMessage), `value="Add the retry to the uploader"`, "the agent's last message is the draft")
	assert.NotRegexp(t, regexpDisabled, elementWith(t, markup, idCommit))
	assert.Contains(t, markup, "Pushes herd/a-retry to origin: 1 commit to send.")
	assert.NotRegexp(t, regexpDisabled, elementWith(t, markup, idPush))
	assert.Contains(t, markup, "From herd/a-retry into main on acme/app.")
	assert.Contains(t, elementWith(t, markup, idPRTitle), `value="Retry uploads"`)

	repo := &rv.info.Repositories[0]
	repo.Uncommitted, repo.Remote = 0, ""
	markup = html(rv)
	assert.Contains(t, markup, "Nothing to commit: every change is committed.")
	assert.Regexp(t, regexpDisabled, elementWith(t, markup, idCommit))
	assert.Contains(t, markup, "No remote to push to: this repository has none.")
	assert.Regexp(t, regexpDisabled, elementWith(t, markup, idPush))

	repo.Remote, repo.Upstream, repo.UpstreamAhead = "origin", "", nil
	markup = html(rv)
	assert.Contains(t, markup, "Pushes herd/a-retry to origin, a branch new there (3 commits ahead of main).")
	assert.Contains(t, markup, "Push the branch first")
	assert.Regexp(t, regexpDisabled, elementWith(t, markup, idPRCreate))

	rv.info.PullRequests = false
	assert.NotContains(t, html(rv), `id="review-pr-step"`, "no token, no pull request")
	rv.info.PullRequests, repo.PullRequestURL = true, "https://github.com/acme/app/pull/7"
	assert.Contains(t, elementWith(t, html(rv), "review-pr-link"), `href="https://github.com/acme/app/pull/7"`)
}

func TestAFailedStepShowsGitsOwnWordsAndAStepThatWorkedItsResult(t *testing.T) {
	rv := reviewOf(t, state.Route{}, false, state.MapKV{})
	rv.panel = panelFinish
	f := rv.finishOf("r1")
	f.push.err = finishFailure(shared.Errorf(shared.CodeConflict, " ! [rejected]        herd/a-retry -> herd/a-retry (fetch first)\nerror: failed to push some refs"))
	f.committed = "0123456789abcdef0123456789abcdef01234567"
	markup := html(rv)
	assert.Contains(t, markup, "! [rejected]        herd/a-retry -&gt; herd/a-retry (fetch first)\nerror: failed to push some refs</pre>")
	assert.Contains(t, elementWith(t, markup, "review-push-error"), `role="alert"`)
	assert.Contains(t, markup, `<code title="0123456789abcdef0123456789abcdef01234567">0123456789ab</code>`)
}

func TestTheReviewSaysWhatItCouldNotReadWithARetry(t *testing.T) {
	rv := reviewOf(t, state.Route{}, false, state.MapKV{})
	rv.infoReq.err = "task t9 does not exist"
	markup := html(rv)
	assert.Contains(t, markup, "Could not load the review: task t9 does not exist")
	elementWith(t, markup, "review-retry")

	rv = reviewOf(t, state.Route{}, false, state.MapKV{})
	rv.info.Repositories[0].Error = "fatal: not a git repository"
	rv.sync()
	assert.Nil(t, rv.files, "nothing is listed of a repository that cannot be read")
	assert.Contains(t, html(rv), "Could not read /src/app: fatal: not a git repository")

	rv = reviewOf(t, state.Route{}, false, state.MapKV{})
	_, ticket := rv.files.First(reviewFilesPage)
	empty := reviewFiles()
	empty.Files, empty.Total, empty.More = nil, 0, false
	require.True(t, rv.files.Apply(ticket, empty))
	rv.sync()
	assert.Contains(t, elementWith(t, html(rv), "review-empty"), `role="status"`)
	assert.Contains(t, html(rv), ">No changes.</p>")
}

func TestTheAddressChoosesTheComparisonAndAnUnchangedOneIsNotAskedAgain(t *testing.T) {
	rv := reviewOf(t, state.Route{}, false, state.MapKV{})
	files, diff := rv.files, rv.diff
	rv.sync()
	assert.Same(t, files, rv.files, "a render that changes nothing asks for nothing")
	assert.Same(t, diff, rv.diff)
	assert.Equal(t, "src/upload.go", rv.diff.Key().Path)

	rv.Route.File = "src/retry.go"
	rv.sync()
	assert.Equal(t, state.ReviewDiffKey{TaskID: "a", RepositoryID: "r1", From: "T0", To: "T1", Path: "src/retry.go", OldPath: "src/again.go"}, rv.diff.Key(),
		"the diff asks for the listing's trees, and a rename's old path")

	rv.Route.Scope, rv.Route.TurnID = shared.ReviewScopeTurn, "m2"
	rv.sync()
	assert.Equal(t, state.ReviewKey{TaskID: "a", RepositoryID: "r1", Scope: shared.ReviewScopeTurn, TurnID: "m2"}, rv.files.Key())
	assert.Nil(t, rv.diff, "no diff before the turn's files are listed")
	assert.NotContains(t, elementWith(t, html(rv), "review-scope-turn"), `aria-pressed="false"`, "the turn scope is the one pressed")
	assert.Contains(t, elementWith(t, html(rv), "review-scope-task"), `aria-pressed="false"`)
}

func TestSeveralRepositoriesArePickedAndNamedInThePrompt(t *testing.T) {
	rv := reviewOf(t, state.Route{}, false, state.MapKV{})
	rv.info.Repositories = append(rv.info.Repositories, shared.ReviewRepository{RepositoryID: "r2", Path: "/src/docs", Dir: "/data/wt/docs/", BaseBranch: "main"})
	markup := html(rv)
	picker := regexp.MustCompile(`(?s)<select[^>]*id="review-repo"[^>]*>.*?</select>`).FindString(markup)
	assert.Contains(t, picker, ">/src/app</option>")
	assert.Contains(t, picker, ">/src/docs</option>")

	_, _ = rv.comments.Add("r2", shared.ReviewComment{Path: "README.md", Side: shared.SideNew, StartLine: 2, EndLine: 2, Body: "Say it once."})
	prompt, err := rv.comments.Prompt(rv.pathInPrompt)
	require.NoError(t, err)
	assert.Contains(t, prompt, "1. /data/wt/docs/README.md, line 2")
}

func TestTheSessionBarOpensTheReviewForItsSession(t *testing.T) {
	v := openView(shared.SessionWaitingForInput)
	assert.NotContains(t, paneHTML(v), `id="session-review"`, "a task without a repository has nothing to review")
	v.tv.Task.Repositories = []shared.TaskRepository{{ID: "r1", Path: "/src/app"}}
	assert.Contains(t, elementWith(t, paneHTML(v), "session-review"), `href="/tasks/t1/review?session=s1"`,
		"comments written there go to the session the person came from")
}

func TestALongHunkRendersInBlocksAndARangeMayCrossThem(t *testing.T) {
	rv := reviewOf(t, state.Route{}, false, state.MapKV{})
	lines := make([]string, 2*reviewBlockRows)
	for i := range lines {
		lines[i] = "+line " + strconv.Itoa(i+1)
	}
	withDiff(t, rv, shared.ReviewFileResponse{Path: "src/upload.go", Status: shared.FileModified,
		Hunks: []shared.ReviewHunk{{Header: "@@ -0,0 +1,128 @@", OldStart: 1, NewStart: 1, Lines: lines}}})
	rv.sel = state.LineSelection{Anchor: reviewBlockRows - 2, Head: reviewBlockRows + 1, Set: true}

	blocks := rv.blocks(rv.diff)
	require.Len(t, blocks, 3, "129 rows (the header and 128 lines) in blocks of at most 64")
	first, second := blocks[0].(*reviewBlock), blocks[1].(*reviewBlock)
	assert.Equal(t, reviewBlockRows, second.Start)
	assert.False(t, first.Compose, "the box is not in the block the range starts in")
	assert.True(t, second.Compose, "but under the range's last row")
	assert.Equal(t, [2]int{reviewBlockRows - 2, reviewBlockRows + 1}, [2]int{first.SelFirst, first.SelLast})
	assert.Equal(t, -1, blocks[2].(*reviewBlock).SelFirst, "a block the range does not reach has no selection")
	assert.Len(t, startTags(html(rv), "div", "review-selected"), 4)
}

// The session pane and the review send a session's prompts through one
// outbox: a second copy would write its own list over the first's.
func TestOneOutboxPerSessionIsKeptWhileItHoldsPromptsOrIsInUse(t *testing.T) {
	var o outboxes
	a := o.of("s-a")
	assert.Same(t, a, o.of("s-a"), "the review and the session pane get the same outbox")
	a.Add("unconfirmed")
	open := o.of("s-open")
	for i := len(o); i < maxOutboxes; i++ {
		o.of("idle-" + strconv.Itoa(i))
	}
	require.Len(t, o, maxOutboxes)

	o.of("s-new", open)
	assert.Same(t, a, o.of("s-a"), "an outbox holding a prompt is kept")
	assert.Same(t, open, o.of("s-open"), "the one in use is kept")
	assert.Len(t, o, 3, "the idle ones were let go: s-a, s-open and s-new are left")
}
