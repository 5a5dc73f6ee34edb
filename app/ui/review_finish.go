package ui

import (
	"errors"
	"strconv"
	"strings"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/wsclient"
	"github.com/herd-dev/herd/shared"
)

// Element ids of the finishing panel.
const (
	idCommitMessage = "review-commit-message"
	idCommit        = "review-commit"
	idPush          = "review-push"
	idPRTitle       = "review-pr-title"
	idPRBody        = "review-pr-body"
	idPRDraft       = "review-pr-draft"
	idPRCreate      = "review-pr-create"
)

// finishState is the finishing of the work in one repository: what the
// person typed, each request's state and what the last one that worked
// answered.
type finishState struct {
	// message is the commit message once the person changed the draft;
	// typed says they did.
	message string
	typed   bool
	commit  request
	// committed is the id of the commit made.
	committed string
	push      request
	pushed    string
	// title, body and draft are the pull request's, once typed.
	title, body           string
	titleTyped, bodyTyped bool
	draft                 bool
	pr                    request
	prURL                 string
	prNumber              int
}

// finishOf returns the finishing state of a repository.
func (rv *reviewView) finishOf(repositoryID string) *finishState {
	f, ok := rv.finish[repositoryID]
	if !ok {
		f = &finishState{}
		rv.finish[repositoryID] = f
	}
	return f
}

// commitMessage is what a commit would say: the person's text, else the
// agent's last message as review.get offers it.
func (rv *reviewView) commitMessage(f *finishState) string {
	if f.typed {
		return f.message
	}
	return rv.info.DraftMessage
}

// setRepository takes a repository as a commit or push answered it.
func (rv *reviewView) setRepository(r shared.ReviewRepository) {
	for i := range rv.info.Repositories {
		if rv.info.Repositories[i].RepositoryID == r.RepositoryID {
			rv.info.Repositories[i] = r
		}
	}
}

// renderFinish draws the finishing of the work in the repository shown:
// commit, push and, with a GitHub token and a remote on GitHub, a pull
// request. Each says why it cannot be done when it cannot, shows git's or
// GitHub's own words when it failed, and what it made when it worked.
func (rv *reviewView) renderFinish() app.UI {
	repo, ok := rv.repository()
	if !ok || rv.finish == nil {
		return nil
	}
	if repo.Error != "" {
		return app.P().Class("review-error-text").Text("Could not read the repository: " + repo.Error)
	}
	f := rv.finishOf(repo.RepositoryID)
	return app.Div().Class("review-finish").DataSet("repository-id", repo.RepositoryID).Body(
		rv.renderCommit(repo, f),
		rv.renderPush(repo, f),
		rv.renderPullRequest(repo, f),
	)
}

// renderCommit draws the commit: what it would take, the message (the
// agent's last message as a draft), the button and the outcome.
func (rv *reviewView) renderCommit(repo shared.ReviewRepository, f *finishState) app.UI {
	msg := rv.commitMessage(f)
	what := "Nothing to commit: every change is committed."
	if repo.Uncommitted > 0 {
		what = plural(repo.Uncommitted, "file", "files") + " not committed"
		if repo.Branch != "" {
			what += " on " + repo.Branch
		}
		what += "."
	}
	button := app.Button().ID(idCommit).Class("primary-button").Type("submit").Text("Commit")
	switch {
	case f.commit.busy:
		button = button.Disabled(true).Aria("busy", "true").Text("Committing…")
	case repo.Uncommitted == 0 || strings.TrimSpace(msg) == "":
		button = button.Disabled(true)
	}
	return app.Form().ID("review-commit-form").Class("review-finish-step").OnSubmit(rv.onCommit).Body(
		app.H3().Class("review-finish-title").Text("Commit"),
		app.P().ID("review-uncommitted").Class("review-finish-what").Text(what),
		app.Label().For(idCommitMessage).Class("review-finish-label").Text("Commit message"),
		app.Textarea().ID(idCommitMessage).Class("review-commit-message").Rows(5).
			Attr("value", msg).
			OnInput(rv.onCommitMessage),
		button,
		app.If(f.committed != "", func() app.UI {
			short := f.committed
			if len(short) > 12 {
				short = short[:12]
			}
			return app.P().ID("review-commit-result").Class("review-finish-result").Role("status").Body(
				app.Text("Committed "),
				app.Code().Title(f.committed).Text(short),
			)
		}),
		finishError("review-commit-error", "Could not commit", f.commit.err),
	)
}

// renderPush draws the push: where it goes, the button, or why there is
// nothing to push, and git's output.
func (rv *reviewView) renderPush(repo shared.ReviewRepository, f *finishState) app.UI {
	var why string
	switch {
	case repo.Remote == "":
		why = "No remote to push to: this repository has none."
	case repo.Branch == "":
		why = "No branch to push: the worktree is on a detached HEAD."
	case repo.UpstreamAhead != nil && *repo.UpstreamAhead == 0:
		why = "Nothing to push: " + repo.Upstream + " has every commit."
	}
	where := ""
	if repo.Remote != "" && repo.Branch != "" {
		where = "Pushes " + repo.Branch + " to " + repo.Remote
		if repo.UpstreamAhead != nil && *repo.UpstreamAhead > 0 {
			where += ": " + plural(*repo.UpstreamAhead, "commit", "commits") + " to send"
		} else if repo.Upstream == "" {
			where += ", a branch new there (" + plural(repo.Ahead, "commit", "commits") + " ahead of " + repo.BaseBranch + ")"
		}
		where += "."
	}
	button := app.Button().ID(idPush).Class("primary-button").Type("button").OnClick(rv.onPush).Text("Push")
	switch {
	case f.push.busy:
		button = button.Disabled(true).Aria("busy", "true").Text("Pushing…")
	case why != "":
		button = button.Disabled(true).Title(why)
	}
	return app.Section().ID("review-push-step").Class("review-finish-step").Body(
		app.H3().Class("review-finish-title").Text("Push"),
		app.If(where != "", func() app.UI { return app.P().ID("review-push-where").Class("review-finish-what").Text(where) }),
		app.If(why != "", func() app.UI { return app.P().ID("review-push-why").Class("review-finish-what", "muted").Text(why) }),
		button,
		app.If(f.pushed != "", func() app.UI {
			return app.Pre().ID("review-push-output").Class("review-finish-output").Text(f.pushed)
		}),
		finishError("review-push-error", "Could not push", f.push.err),
	)
}

// renderPullRequest draws the pull request: its link once there is one,
// else the form that opens it. It shows only where one can be opened: the
// server holds a GitHub token and the push remote is on GitHub.
func (rv *reviewView) renderPullRequest(repo shared.ReviewRepository, f *finishState) app.UI {
	if !rv.info.PullRequests || repo.GitHubRepository == "" {
		return nil
	}
	url := repo.PullRequestURL
	if f.prURL != "" {
		url = f.prURL
	}
	step := app.Section().ID("review-pr-step").Class("review-finish-step")
	if url != "" {
		text := url
		if f.prNumber > 0 {
			text = "#" + strconv.Itoa(f.prNumber) + " on " + repo.GitHubRepository
		}
		return step.Body(
			app.H3().Class("review-finish-title").Text("Pull request"),
			app.P().ID("review-pr-result").Class("review-finish-result").Body(
				app.A().ID("review-pr-link").Href(url).Target("_blank").Rel("noopener noreferrer").Text(text),
			),
		)
	}
	title, body := rv.Task.Title, rv.info.DraftMessage
	if f.titleTyped {
		title = f.title
	}
	if f.bodyTyped {
		body = f.body
	}
	button := app.Button().ID(idPRCreate).Class("primary-button").Type("submit").Text("Open pull request")
	pushFirst := repo.Upstream == ""
	switch {
	case f.pr.busy:
		button = button.Disabled(true).Aria("busy", "true").Text("Opening…")
	case pushFirst || strings.TrimSpace(title) == "":
		button = button.Disabled(true)
	}
	draft := app.Input().ID(idPRDraft).Type("checkbox").OnChange(rv.onPRDraft)
	if f.draft {
		// Only ever set to true, like disabled.
		draft = draft.Checked(true)
	}
	return step.Body(
		app.Form().ID("review-pr-form").OnSubmit(rv.onPullRequest).Body(
			app.H3().Class("review-finish-title").Text("Pull request"),
			app.P().Class("review-finish-what").Text("From "+repo.Branch+" into "+repo.BaseBranch+" on "+repo.GitHubRepository+"."),
			app.If(pushFirst, func() app.UI {
				return app.P().ID("review-pr-why").Class("review-finish-what", "muted").Text("Push the branch first: GitHub opens a pull request from a pushed branch.")
			}),
			app.Label().For(idPRTitle).Class("review-finish-label").Text("Title"),
			app.Input().ID(idPRTitle).Class("review-pr-title").Type("text").MaxLength(shared.MaxPullRequestTitleBytes).
				Attr("value", title).OnInput(rv.onPRTitle),
			app.Label().For(idPRBody).Class("review-finish-label").Text("Description"),
			app.Textarea().ID(idPRBody).Class("review-pr-body").Rows(5).Attr("value", body).OnInput(rv.onPRBody),
			app.Label().Class("review-pr-draft").For(idPRDraft).Body(draft, app.Span().Text("Open as a draft")),
			button,
		),
		finishError("review-pr-error", "Could not open the pull request", f.pr.err),
	)
}

// finishError shows why a step failed: git's or GitHub's words as the
// server passed them, lines kept.
func finishError(id, what, err string) app.UI {
	if err == "" {
		return nil
	}
	return app.Div().ID(id).Class("review-finish-error").Role("alert").Body(
		app.P().Text(what+":"),
		app.Pre().Class("review-finish-output").Text(err),
	)
}

// finishFailure says why a step's request failed: the server's message
// (git's or GitHub's own words), or, for an answer that never came, that
// the step may have happened anyway.
func finishFailure(err error) string {
	if errors.Is(err, wsclient.ErrTimeout) || lostConnection(err) {
		return "the server did not answer in time; the step may still have happened. Refresh to see the repository as it is."
	}
	return requestFailure(err)
}

// chosenFinish returns the repository shown and its finishing state.
func (rv *reviewView) chosenFinish() (shared.ReviewRepository, *finishState, bool) {
	repo, ok := rv.repository()
	if !ok || repo.Error != "" {
		return repo, nil, false
	}
	return repo, rv.finishOf(repo.RepositoryID), true
}

func (rv *reviewView) onCommitMessage(ctx app.Context, _ app.Event) {
	if _, f, ok := rv.chosenFinish(); ok {
		f.message, f.typed = ctx.JSSrc().Get("value").String(), true
	}
}

// onCommit commits everything in the repository's worktree with the
// message.
func (rv *reviewView) onCommit(_ app.Context, e app.Event) {
	e.PreventDefault()
	repo, f, ok := rv.chosenFinish()
	if !ok || f.commit.busy {
		return
	}
	msg := rv.commitMessage(f)
	switch {
	case strings.TrimSpace(msg) == "":
		f.commit.err = "a commit needs a message."
		return
	case len(msg) > shared.MaxCommitMessageBytes:
		f.commit.err = "the message is " + byteWords(len(msg)) + "; a commit message takes at most " + byteWords(shared.MaxCommitMessageBytes) + "."
		return
	}
	f.commit, f.committed = request{busy: true}, ""
	var resp shared.ReviewCommitResponse
	req := shared.ReviewCommitRequest{TaskID: rv.taskID, RepositoryID: repo.RepositoryID, Message: msg}
	rv.ask(shared.ActionReviewCommit, req, &resp, func(err error) {
		f.commit.busy = false
		if err != nil {
			f.commit.err = finishFailure(err)
			return
		}
		f.committed = resp.Commit
		rv.setRepository(resp.Repository)
	})
}

// onPush pushes the repository's branch to its remote.
func (rv *reviewView) onPush(app.Context, app.Event) {
	repo, f, ok := rv.chosenFinish()
	if !ok || f.push.busy {
		return
	}
	f.push, f.pushed = request{busy: true}, ""
	var resp shared.ReviewPushResponse
	rv.ask(shared.ActionReviewPush, shared.ReviewPushRequest{TaskID: rv.taskID, RepositoryID: repo.RepositoryID}, &resp, func(err error) {
		f.push.busy = false
		if err != nil {
			f.push.err = finishFailure(err)
			return
		}
		f.pushed = resp.Output
		if f.pushed == "" {
			f.pushed = "Pushed."
		}
		rv.setRepository(resp.Repository)
	})
}

func (rv *reviewView) onPRTitle(ctx app.Context, _ app.Event) {
	if _, f, ok := rv.chosenFinish(); ok {
		f.title, f.titleTyped = ctx.JSSrc().Get("value").String(), true
	}
}

func (rv *reviewView) onPRBody(ctx app.Context, _ app.Event) {
	if _, f, ok := rv.chosenFinish(); ok {
		f.body, f.bodyTyped = ctx.JSSrc().Get("value").String(), true
	}
}

func (rv *reviewView) onPRDraft(ctx app.Context, _ app.Event) {
	if _, f, ok := rv.chosenFinish(); ok {
		f.draft = ctx.JSSrc().Get("checked").Bool()
	}
}

// onPullRequest opens the pull request on GitHub; the server links it to
// the task, whose row then shows it.
func (rv *reviewView) onPullRequest(_ app.Context, e app.Event) {
	e.PreventDefault()
	repo, f, ok := rv.chosenFinish()
	if !ok || f.pr.busy {
		return
	}
	title, body := rv.Task.Title, rv.info.DraftMessage
	if f.titleTyped {
		title = f.title
	}
	if f.bodyTyped {
		body = f.body
	}
	switch {
	case strings.TrimSpace(title) == "":
		f.pr.err = "a pull request needs a title."
		return
	case len(title) > shared.MaxPullRequestTitleBytes:
		f.pr.err = "the title is " + byteWords(len(title)) + "; GitHub takes at most " + byteWords(shared.MaxPullRequestTitleBytes) + "."
		return
	case len(body) > shared.MaxPullRequestBodyBytes:
		f.pr.err = "the description is " + byteWords(len(body)) + "; it may be at most " + byteWords(shared.MaxPullRequestBodyBytes) + "."
		return
	}
	f.pr = request{busy: true}
	var resp shared.ReviewPullRequestCreateResponse
	req := shared.ReviewPullRequestCreateRequest{TaskID: rv.taskID, RepositoryID: repo.RepositoryID, Title: title, Body: body, Draft: f.draft}
	rv.ask(shared.ActionReviewPullRequestCreate, req, &resp, func(err error) {
		f.pr.busy = false
		if err != nil {
			f.pr.err = finishFailure(err)
			return
		}
		f.prURL, f.prNumber = resp.URL, resp.Number
		for i := range rv.info.Repositories {
			if rv.info.Repositories[i].RepositoryID == repo.RepositoryID {
				rv.info.Repositories[i].PullRequestURL = resp.URL
			}
		}
	})
}
