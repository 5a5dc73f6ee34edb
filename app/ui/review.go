package ui

import (
	"context"
	"crypto/rand"
	"time"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/shared"
)

// Page sizes of review's requests: a files page and a diff page each
// render in one go, so they stay well below the protocol's largest.
const (
	reviewFilesPage = 100
	reviewLinesPage = 500
)

// Element ids of the review.
const (
	idReview        = "review"
	idReviewTitle   = "review-title"
	idReviewRefresh = "review-refresh"
	idReviewRepo    = "review-repo"
	idReviewTurn    = "review-turn"
	idReviewTotals  = "review-totals"
	idReviewFiles   = "review-files"
	idReviewDiff    = "review-diff"
	idReviewMain    = "review-main"
	idCommentInput  = "review-comment-input"
)

// Panels of the review's side column.
const (
	panelFiles    = "files"
	panelComments = "comments"
	panelFinish   = "finish"
)

// reviewView is a task's review (/tasks/{id}/review): what the task, or
// one of its turns, changed in one of its repositories, file by file, the
// comments the person writes on lines, and the finishing of the work. It
// reads everything on request (review.get, review.files, review.file) and
// subscribes to nothing: a refresh reads the working tree again. Its
// exported fields are its whole input from the shell.
type reviewView struct {
	app.Compo

	// Shell is the page; it never changes.
	Shell *shell
	Task  shared.Task
	// Route is the review's address: the repository, scope, turn and file
	// chosen, and the session comments go to.
	Route state.Route
	Phone bool
	// Rev is the shell's render count (see taskView.Rev).
	Rev uint64

	// taskID is the task whose review is held; another task starts over.
	taskID string
	info   shared.ReviewGetResponse
	// infoReq is review.get; infoTicket its newest request, infoLoaded
	// set once one was answered.
	infoReq    request
	infoTicket uint64
	infoLoaded bool
	files      *state.ReviewFiles
	diff       *state.ReviewDiff
	sel        state.LineSelection
	// draft is the comment being written under the selection, draftErr
	// why it was refused.
	draft    string
	draftErr string
	// editing is the pending comment whose text is being changed, to
	// editText.
	// editWhere (editInline, editList) says which of its two places
	// holds the edit box.
	editing   string
	editWhere string
	editText  string
	editErr   string
	comments  *state.ReviewComments
	// sendErr is why the pending comments could not become a prompt;
	// delivered the last prompt the server confirmed.
	sendErr   string
	delivered delivery
	panel     string
	finish    map[string]*finishState
}

// delivery is a prompt of comments the server took.
type delivery struct {
	sessionID string
	comments  int
	outcome   shared.MessageOutcome
}

// reviewViewOf returns the review of t, the selected task, with its input
// from the shell.
func (s *shell) reviewViewOf(t shared.Task) *reviewView {
	return &reviewView{Shell: s, Task: t, Route: s.route, Phone: s.phone, Rev: s.renders}
}

// outboxOf returns session sessionID's outbox, the one the session pane
// and the review share.
func (s *shell) outboxOf(sessionID string) *state.Outbox {
	var inUse []*state.Outbox
	if s.sessions != nil && s.sessions.outbox != nil {
		inUse = append(inUse, s.sessions.outbox)
	}
	return s.outboxes.of(sessionID, inUse...)
}

// OnMount starts the review: its comments from localStorage, the
// prompts of comments still on their way, and review.get.
func (rv *reviewView) OnMount(ctx app.Context) {
	rv.Shell.review = rv
	rv.start()
}

// OnUpdate follows the shell: another task starts over, another choice
// in the address lists or shows what it chose.
func (rv *reviewView) OnUpdate(ctx app.Context) {
	if rv.Task.ID != rv.taskID {
		rv.start()
		return
	}
	rv.sync()
}

// OnDismount lets the shell forget the review; answers still on their
// way find another task, or none, and change nothing.
func (rv *reviewView) OnDismount() {
	if rv.Shell.review == rv {
		rv.Shell.review = nil
	}
	rv.taskID, rv.comments = "", nil
}

// start holds the review of the task shown, from nothing.
func (rv *reviewView) start() {
	rv.taskID, rv.info, rv.infoReq, rv.infoLoaded = rv.Task.ID, shared.ReviewGetResponse{}, request{}, false
	rv.files, rv.diff, rv.sel = nil, nil, state.LineSelection{}
	rv.draft, rv.draftErr, rv.editing, rv.editText, rv.editErr = "", "", "", "", ""
	rv.sendErr, rv.delivered, rv.panel, rv.finish = "", delivery{}, "", map[string]*finishState{}
	rv.comments = rv.Shell.reviewComments.of(rv.taskID)
	rv.resend()
	rv.load(false)
}

// reconnected runs after every (re)connect: what a lost connection left
// unread is asked again, and prompts of comments left unconfirmed are
// sent again with their ids.
func (rv *reviewView) reconnected(app.Context) {
	switch {
	case rv.taskID == "":
		return
	case !rv.infoLoaded:
		rv.load(false)
	case rv.files != nil && !rv.files.Loaded():
		rv.loadFiles()
	case rv.diff != nil && !rv.diff.Loaded():
		rv.loadDiff(false)
	}
	rv.resend()
}

// maxReviewComments bounds the comment stores a page keeps at once; past
// it those with no prompt on its way are let go, to be read again from
// localStorage when next needed.
const maxReviewComments = 32

// reviewCommentStores is the page's one comment store per task. A review
// mounted again and the answers its earlier mount still waits for work on
// the same one: two copies would each write their own list to the task's
// storage key and drop what the other holds.
type reviewCommentStores map[string]*state.ReviewComments

// of returns task taskID's comment store.
func (o *reviewCommentStores) of(taskID string) *state.ReviewComments {
	if *o == nil {
		*o = reviewCommentStores{}
	}
	if c, ok := (*o)[taskID]; ok {
		return c
	}
	for id, c := range *o {
		if len(*o) < maxReviewComments {
			break
		}
		if len(c.Prompts()) == 0 {
			delete(*o, id)
		}
	}
	c := state.NewReviewComments(localStorage, taskID, newCommentID)
	(*o)[taskID] = c
	return c
}

// newCommentID names a comment in this browser.
func newCommentID() string { return "rc-" + rand.Text() }

// ui returns the shell's context, through which requests run and report
// back (see sessionView.ui).
func (rv *reviewView) ui() app.Context { return rv.Shell.link.ui }

// reviewWait is how long the review waits for the answers of the actions
// the server may take longer with than an ordinary request: their bound,
// and a little more for the answer to come back.
var reviewWait = map[string]time.Duration{
	// Reads the server bounds by its request timeout (30 s by default).
	shared.ActionReviewGet:               35 * time.Second,
	shared.ActionReviewFile:              35 * time.Second,
	shared.ActionReviewFiles:             shared.ReviewFilesTimeout + 5*time.Second,
	shared.ActionReviewCommit:            shared.ReviewCommitTimeout + 5*time.Second,
	shared.ActionReviewPush:              shared.ReviewPushTimeout + 5*time.Second,
	shared.ActionReviewPullRequestCreate: shared.ReviewPullRequestTimeout + 5*time.Second,
}

// ask sends one review request in ctx.Async and runs done with its
// outcome on the UI goroutine, unless the review has moved to another
// task meanwhile.
func (rv *reviewView) ask(action string, req, out any, done func(err error)) {
	if rv.Shell.link == nil {
		return
	}
	ctx, client, taskID := rv.ui(), rv.Shell.link.client, rv.taskID
	ctx.Async(func() {
		err := client.RequestWithin(context.Background(), reviewWait[action], action, req, out)
		dispatch(ctx, func(app.Context) {
			if rv.taskID == taskID {
				done(err)
			}
		})
	})
}

// load asks for the task's review state; its answer lists the chosen
// repository's files, and with again lists them anew even when the
// comparison chosen is the one listed.
func (rv *reviewView) load(again bool) {
	rv.infoTicket++
	rv.infoReq = request{busy: true}
	ticket := rv.infoTicket
	var resp shared.ReviewGetResponse
	rv.ask(shared.ActionReviewGet, shared.ReviewGetRequest{TaskID: rv.taskID}, &resp, func(err error) {
		if ticket != rv.infoTicket {
			return
		}
		rv.infoReq.answered(err)
		if err != nil {
			return
		}
		rv.info, rv.infoLoaded = resp, true
		if key, ok := rv.key(); again && ok && rv.files != nil && rv.files.Key() == key {
			rv.loadFiles()
		}
		rv.sync()
	})
}

// refresh reads everything again against the working tree as it is now:
// the review state, the files, and the file shown once the new listing
// names other trees. What is shown stays until the answers replace it.
func (rv *reviewView) refresh() { rv.load(true) }

// repository returns the repository the review shows: the one the
// address names, else the first.
func (rv *reviewView) repository() (shared.ReviewRepository, bool) {
	repos := rv.info.Repositories
	for _, r := range repos {
		if r.RepositoryID == rv.Route.RepositoryID {
			return r, true
		}
	}
	if len(repos) == 0 {
		return shared.ReviewRepository{}, false
	}
	return repos[0], true
}

// key returns the comparison the address chooses.
func (rv *reviewView) key() (state.ReviewKey, bool) {
	repo, ok := rv.repository()
	if !ok || repo.Error != "" {
		return state.ReviewKey{}, false
	}
	k := state.ReviewKey{TaskID: rv.taskID, RepositoryID: repo.RepositoryID, Scope: shared.ReviewScopeTask}
	if rv.Route.Scope == shared.ReviewScopeTurn {
		k.Scope, k.TurnID = shared.ReviewScopeTurn, rv.Route.TurnID
	}
	return k, true
}

// sync makes what is held follow the address: the files of the chosen
// comparison, and the diff of the chosen file (on a desktop, of the
// first file when none is chosen). It asks only for what is missing, so
// a render that changes nothing asks for nothing.
func (rv *reviewView) sync() {
	if !rv.infoLoaded {
		return
	}
	key, ok := rv.key()
	if !ok {
		rv.files, rv.diff = nil, nil
		return
	}
	if rv.files == nil || rv.files.Key() != key {
		rv.files, rv.diff = state.NewReviewFiles(key), nil
		rv.loadFiles()
		return
	}
	f, ok := rv.chosenFile()
	if !ok {
		rv.diff = nil
		return
	}
	l := rv.files.Listing()
	dk := state.ReviewDiffKey{TaskID: rv.taskID, RepositoryID: key.RepositoryID, From: l.From, To: l.To, Path: f.Path, OldPath: f.OldPath}
	if rv.diff == nil || rv.diff.Key() != dk {
		another := rv.diff == nil || rv.diff.Key().Path != dk.Path
		rv.diff, rv.sel, rv.draft, rv.draftErr = state.NewReviewDiff(dk), state.LineSelection{}, "", ""
		rv.loadDiff(false)
		if another && rv.Shell.link != nil {
			// Another file starts at its top, not where the last one was
			// scrolled to.
			rv.ui().Defer(func(app.Context) {
				if el := app.Window().GetElementByID(idReviewMain); el.Truthy() {
					el.Set("scrollTop", 0)
				}
			})
		}
	}
}

// chosenFile returns the file whose diff shows: the one the address
// names, listed or not (a link to a file past the first page); on a
// desktop the first listed one when none is named.
func (rv *reviewView) chosenFile() (shared.ReviewFile, bool) {
	if rv.files == nil || !rv.files.Loaded() {
		return shared.ReviewFile{}, false
	}
	if p := rv.Route.File; p != "" {
		if f, ok := rv.files.Find(p); ok {
			return f, true
		}
		return shared.ReviewFile{Path: p}, true
	}
	if files := rv.files.Listing().Files; !rv.Phone && len(files) > 0 {
		return files[0], true
	}
	return shared.ReviewFile{}, false
}

// loadFiles asks for the first page of the comparison's files.
func (rv *reviewView) loadFiles() {
	f := rv.files
	req, ticket := f.First(reviewFilesPage)
	rv.askFiles(f, req, ticket)
}

// onMoreFiles asks for the next page of files.
func (rv *reviewView) onMoreFiles(app.Context, app.Event) {
	f := rv.files
	if f == nil {
		return
	}
	if req, ticket, ok := f.Next(reviewFilesPage); ok {
		rv.askFiles(f, req, ticket)
	}
}

func (rv *reviewView) askFiles(f *state.ReviewFiles, req shared.ReviewFilesRequest, ticket state.Ticket) {
	var resp shared.ReviewFilesResponse
	rv.ask(shared.ActionReviewFiles, req, &resp, func(err error) {
		if err != nil {
			f.Fail(ticket, requestFailure(err))
			return
		}
		if f.Apply(ticket, resp) && f == rv.files {
			rv.sync()
		}
	})
}

// loadDiff asks for the first page of the chosen file's diff, or with
// more the page after the rows shown.
func (rv *reviewView) loadDiff(more bool) {
	d := rv.diff
	if d == nil {
		return
	}
	var (
		req    shared.ReviewFileRequest
		ticket state.Ticket
		ok     = true
	)
	if more {
		req, ticket, ok = d.Next(reviewLinesPage)
	} else {
		req, ticket = d.First(reviewLinesPage)
	}
	if !ok {
		return
	}
	var resp shared.ReviewFileResponse
	rv.ask(shared.ActionReviewFile, req, &resp, func(err error) {
		if err != nil {
			d.Fail(ticket, requestFailure(err))
			return
		}
		d.Apply(ticket, resp)
	})
}

// choose navigates to the review with r's choices.
func (rv *reviewView) choose(r state.Route) {
	r.TaskID, r.Review = rv.taskID, true
	rv.Shell.navigate(rv.ui(), r)
}

// Render draws the review: its head, then the files, the comments and the
// finishing of the work beside the diff of the chosen file; on a phone
// either the list or, once a file is chosen, its diff.
func (rv *reviewView) Render() app.UI {
	_, fileShown := rv.chosenFile()
	layout := "review-desktop"
	if rv.Phone {
		layout = "review-phone"
	}
	el := app.Section().ID(idReview).Class("review", layout).DataSet("task-id", rv.Task.ID).Aria("labelledby", idReviewTitle)
	if rv.Phone && fileShown {
		el = el.DataSet("showing", "diff")
	} else {
		el = el.DataSet("showing", "list")
	}
	return el.Body(
		rv.renderHead(),
		app.Div().Class("review-banners").Body(rv.renderBanners()),
		app.Div().Class("review-body").Body(
			app.Div().Class("review-side").Body(rv.renderSide()),
			app.Div().ID(idReviewMain).Class("review-main").Body(
				app.If(fileShown, rv.renderDiff).ElseIf(rv.files != nil && rv.files.Loaded() && len(rv.files.Listing().Files) > 0, func() app.UI {
					return app.P().Class("review-pick", "muted").Text("Choose a file to see what changed.")
				}),
			),
		),
	)
}
