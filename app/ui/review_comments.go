package ui

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/app/wsclient"
	"github.com/herd-dev/herd/shared"
)

// Where a comment is being edited: the same comment shows in its diff and
// in the comments panel, and only one of them holds the edit box.
const (
	editInline = "inline"
	editList   = "list"
)

// Element ids of the comments.
const (
	idReviewSend   = "review-send"
	idSeeInSession = "review-see-session"
	idEditInput    = "review-edit-input"
)

// target returns the session comments go to: the one the address names
// (the person came from it), else the task's newest.
func (rv *reviewView) target() string {
	if rv.Route.SessionID != "" {
		return rv.Route.SessionID
	}
	return rv.info.SessionID
}

// targetRunning reports whether the session comments go to is running a
// turn, so that sending queues them behind it.
func (rv *reviewView) targetRunning() bool {
	sum := rv.Task.StatusSummary
	return sum != nil && sum.PrimarySession != nil && sum.PrimarySession.ID == rv.target() &&
		sum.PrimarySession.State == shared.SessionRunning
}

// renderSendButton draws, in the review's head, what became of the
// comments: "Send N comments" while some wait, the prompts on their way,
// and the last one the server took, with the way to the session that has
// it.
func (rv *reviewView) renderSendButton() app.UI {
	if rv.comments == nil {
		return app.Span().Class("review-send-slot")
	}
	pending := len(rv.comments.Pending())
	var onTheWay, stuck int
	for _, p := range rv.comments.Prompts() {
		n := len(rv.comments.Sending(p.ClientMessageID))
		if st, _ := rv.promptStatus(p); st == state.SendFailed || st == state.SendUnknown {
			stuck += n
		} else {
			onTheWay += n
		}
	}
	return app.Span().Class("review-send-slot").Body(
		app.If(pending > 0, func() app.UI {
			verb := "Send "
			if rv.targetRunning() {
				verb = "Queue "
			}
			b := app.Button().ID(idReviewSend).Class("primary-button", "review-send").Type("button").OnClick(rv.onSend).
				Text(verb + plural(pending, "comment", "comments"))
			switch {
			case !rv.infoLoaded:
				// The prompt names each comment's repository from
				// review.get's answer.
				b = b.Disabled(true).Title("Reading the task's repositories…")
			case rv.target() == "":
				b = b.Disabled(true).Title("This task has no session to send comments to: start one first.")
			}
			return b
		}),
		app.If(onTheWay > 0, func() app.UI {
			return app.Span().ID("review-sending").Class("review-sending").Role("status").
				Text(plural(onTheWay, "comment", "comments") + " on the way")
		}),
		app.If(stuck > 0, func() app.UI {
			// What became of them, and what to do, is in the comments
			// panel.
			return app.Button().ID("review-not-sent").Class("text-button", "review-not-sent").Type("button").
				OnClick(rv.onShowComments).Text(plural(stuck, "comment", "comments") + " not sent: see why")
		}),
		app.If(rv.delivered.comments > 0, func() app.UI {
			text := plural(rv.delivered.comments, "comment", "comments") + " sent"
			if rv.delivered.outcome == shared.OutcomeQueued {
				text += ", queued behind the agent's turn"
			}
			return app.Span().ID("review-delivered").Class("review-delivered").Role("status").Body(
				app.Span().Text(text+" "),
				app.A().ID(idSeeInSession).Class("review-see-session").
					Href(state.Route{TaskID: rv.taskID, SessionID: rv.delivered.sessionID}.Path()).
					Text("See in the session"),
			)
		}),
		app.If(rv.sendErr != "", func() app.UI {
			return app.Span().ID("review-send-error").Class("review-error-text").Role("alert").Text("Not sent: " + rv.sendErr)
		}),
	)
}

// onSend writes the pending comments as one prompt and sends it to the
// target session through that session's outbox, as the composer sends a
// prompt: with its own client_message_id, kept until the server confirms
// it, queued by the server while a turn runs. The comments wait, marked
// as sent, until then.
func (rv *reviewView) onSend(app.Context, app.Event) {
	sessionID := rv.target()
	if sessionID == "" || rv.comments == nil || len(rv.comments.Pending()) == 0 {
		return
	}
	prompt, err := rv.comments.Prompt(rv.pathInPrompt)
	if err != nil {
		rv.sendErr = describe(err)
		return
	}
	outbox := rv.Shell.outboxOf(sessionID)
	s := outbox.Add(prompt)
	rv.comments.Sent(s.ClientMessageID, sessionID)
	rv.sendErr, rv.delivered = "", delivery{}
	rv.sendPrompt(outbox, sessionID, s)
}

// pathInPrompt names a comment's file for the agent: its path in its
// repository, or with several repositories its path in the repository's
// directory, so the agent knows which one.
func (rv *reviewView) pathInPrompt(p state.PendingComment) string {
	if len(rv.info.Repositories) < 2 {
		return p.Path
	}
	for _, r := range rv.info.Repositories {
		if r.RepositoryID == p.RepositoryID && r.Dir != "" {
			return strings.TrimSuffix(r.Dir, "/") + "/" + p.Path
		}
	}
	return p.Path
}

// sendPrompt sends one prompt of session sessionID's outbox. Once the
// server confirms it the comments it carries are forgotten, whatever the
// page shows by then; after a timeout the session's unconfirmed prompts
// are sent again at once.
func (rv *reviewView) sendPrompt(outbox *state.Outbox, sessionID string, s state.Send) {
	if rv.Shell.link == nil {
		return
	}
	comments := rv.comments
	sendOutboxed(rv.ui(), rv.Shell.link.client, outbox, sessionID, s, func(ctx app.Context, resp shared.MessageAddResponse, err error) {
		switch {
		case err == nil:
			if n := comments.Delivered(s.ClientMessageID); n > 0 && comments == rv.comments {
				rv.delivered = delivery{sessionID: sessionID, comments: n, outcome: resp.Outcome}
			}
		case errors.Is(err, wsclient.ErrTimeout) && comments == rv.comments:
			rv.resendTo(sessionID)
		}
	})
}

// resend forgets the comments whose prompt was confirmed while the review
// was away, and sends the others' prompts again with their own ids: after
// a reload, a reconnect or a timeout.
func (rv *reviewView) resend() {
	if rv.comments == nil {
		return
	}
	var sessions []string
	for _, p := range rv.comments.Prompts() {
		if !slices.Contains(sessions, p.SessionID) {
			sessions = append(sessions, p.SessionID)
		}
	}
	for _, id := range sessions {
		rv.resendTo(id)
	}
}

// resendTo reconciles session sessionID's outbox: the comments of
// prompts it no longer holds were delivered, and its unconfirmed prompts
// go again.
func (rv *reviewView) resendTo(sessionID string) {
	outbox := rv.Shell.outboxOf(sessionID)
	rv.comments.Reconcile(sessionID, outbox)
	// Sent while offline, a prompt stays unconfirmed, without counting as
	// an attempt, and the reconnect sends it (reconnected).
	for _, s := range outbox.Reconcile() {
		rv.sendPrompt(outbox, sessionID, s)
	}
}

// renderComments draws the comments panel: the prompts on their way with
// what is known of each, then the pending comments with their edit and
// delete.
func (rv *reviewView) renderComments() app.UI {
	if rv.comments == nil {
		return nil
	}
	pending := rv.comments.Pending()
	prompts := rv.comments.Prompts()
	return app.Div().Class("review-comments").Body(
		app.Range(prompts).Slice(func(i int) app.UI { return rv.renderPrompt(prompts[i]) }),
		app.If(len(pending) == 0 && len(prompts) == 0, func() app.UI {
			return app.P().ID("review-no-comments").Class("muted").Text(rv.selectHint())
		}),
		app.Ul().ID("review-pending").Class("review-pending").Body(
			app.Range(pending).Slice(func(i int) app.UI {
				p := pending[i]
				return app.Li().Body(rv.renderNote(p, rv.editing == p.ID && rv.editWhere == editList, editList))
			}),
		),
	)
}

// renderPrompt says where a prompt of comments is: on its way, sent
// without an answer yet, or refused (with the server's reason), with a
// retry and the way back to editing its comments.
func (rv *reviewView) renderPrompt(p state.SentPrompt) app.UI {
	status, reason := rv.promptStatus(p)
	n := len(rv.comments.Sending(p.ClientMessageID))
	text := plural(n, "comment", "comments") + ": " + sendStatusText(state.Send{Status: status, Err: reason})
	stuck := status == state.SendFailed || status == state.SendUnknown
	return app.Div().Class("review-prompt").DataSet("status", string(status)).Body(
		app.P().Class("review-prompt-status").Text(text),
		app.If(stuck, func() app.UI {
			return app.Div().Class("review-prompt-actions").Body(
				app.Button().Class("text-button", "review-prompt-retry").Type("button").
					OnClick(rv.onPromptRetry(p), app.EventScope(p.ClientMessageID)).Text("Retry"),
				// A prompt whose outcome stayed unknown may have reached
				// the agent: sent again after editing, it would run twice.
				app.If(status == state.SendFailed, func() app.UI {
					return app.Button().Class("text-button", "review-prompt-edit").Type("button").
						OnClick(rv.onPromptBack(p), app.EventScope(p.ClientMessageID)).Text("Edit them again")
				}),
			)
		}),
	)
}

// promptStatus returns where a prompt of comments is, as its session's
// outbox knows it, with the server's reason for a refusal. A prompt the
// outbox does not hold (yet) is unconfirmed.
func (rv *reviewView) promptStatus(p state.SentPrompt) (state.SendStatus, string) {
	for _, s := range rv.Shell.outboxOf(p.SessionID).Sends() {
		if s.ClientMessageID == p.ClientMessageID {
			return s.Status, s.Err
		}
	}
	return state.SendUnconfirmed, ""
}

// onShowComments shows the comments panel; on a phone, the list it is in.
func (rv *reviewView) onShowComments(app.Context, app.Event) {
	rv.panel = panelComments
	if rv.Phone && rv.Route.File != "" {
		r := rv.Route
		r.File = ""
		rv.choose(r)
	}
}

func (rv *reviewView) onPromptRetry(p state.SentPrompt) app.EventHandler {
	return func(app.Context, app.Event) {
		outbox := rv.Shell.outboxOf(p.SessionID)
		if s, ok := outbox.Retry(p.ClientMessageID); ok {
			rv.sendPrompt(outbox, p.SessionID, s)
		}
	}
}

// onPromptBack gives up on a prompt the server refused: the prompt leaves
// the outbox and its comments wait again, to be edited and sent once
// more.
func (rv *reviewView) onPromptBack(p state.SentPrompt) app.EventHandler {
	return func(app.Context, app.Event) {
		rv.Shell.outboxOf(p.SessionID).Discard(p.ClientMessageID)
		rv.comments.Unsent(p.ClientMessageID)
	}
}

// renderNote draws one comment: its lines (and file, in the panel), its
// text or the box that edits it, and, while it is pending, its edit and
// delete buttons. Every handler is scoped to the comment: go-app reuses a
// list's elements by position.
func (rv *reviewView) renderNote(p state.PendingComment, editing bool, where string) app.UI {
	el := app.Div().Class("review-note").DataSet("comment-id", p.ID)
	if where == editInline {
		el = el.Class("review-extra")
	}
	if p.SentAs != "" {
		el = el.Class("review-note-sending")
	}
	var head app.UI = app.Span().Class("review-note-lines").Text(capitalised(rangeWords(p.ReviewComment)))
	if where == editList {
		r := rv.Route
		r.RepositoryID, r.File = p.RepositoryID, p.Path
		head = app.A().Class("review-note-lines").Href(r.Path()).Text(p.Path + ", " + rangeWords(p.ReviewComment))
	}
	scope := app.EventScope(p.ID, where)
	return el.Body(
		app.Div().Class("review-note-head").Body(
			head,
			app.If(p.SentAs != "", func() app.UI { return app.Span().Class("badge").Text("on the way") }),
		),
		app.If(editing, func() app.UI {
			return app.Form().Class("review-edit").OnSubmit(rv.onEditSave, scope).Body(
				app.Label().For(idEditInput).Class("visually-hidden").Text("Comment"),
				app.Textarea().ID(idEditInput).Class("review-comment-input").Rows(3).
					Attr("value", rv.editText).
					OnInput(rv.onEditInput),
				app.If(rv.editErr != "", func() app.UI {
					return app.P().Class("review-error-text").Role("alert").Text(rv.editErr)
				}),
				app.Div().Class("review-compose-actions").Body(
					app.Button().Class("primary-button", "review-edit-save").Type("submit").Text("Save"),
					app.Button().Class("text-button").Type("button").OnClick(rv.onEditCancel, scope).Text("Cancel"),
				),
			)
		}).Else(func() app.UI {
			return app.P().Class("review-note-body").Text(p.Body)
		}),
		app.If(p.SentAs == "" && !editing, func() app.UI {
			return app.Div().Class("review-note-actions").Body(
				app.Button().Class("text-button", "review-note-edit").Type("button").
					OnClick(rv.onEdit(p.ID, where), scope).Text("Edit"),
				app.Button().Class("text-button", "review-note-delete").Type("button").
					OnClick(rv.onDelete(p.ID), scope).Text("Delete"),
			)
		}),
	)
}

// capitalised starts s with a capital (words of ASCII only).
func capitalised(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// The handlers of a comment run through inReview: a comment shows in a
// block of the diff, whose own render would leave the rest of the review
// as it was.

func (rv *reviewView) onEdit(id, where string) app.EventHandler {
	return func(app.Context, app.Event) {
		rv.inReview(func() {
			for _, p := range rv.comments.Pending() {
				if p.ID == id {
					rv.editing, rv.editWhere, rv.editText, rv.editErr = id, where, p.Body, ""
					focus(rv.ui(), idEditInput)
				}
			}
		})
	}
}

func (rv *reviewView) onEditInput(ctx app.Context, _ app.Event) {
	rv.editText = ctx.JSSrc().Get("value").String()
}

func (rv *reviewView) onEditSave(_ app.Context, e app.Event) {
	e.PreventDefault()
	rv.inReview(func() {
		if err := rv.comments.Edit(rv.editing, rv.editText); err != nil {
			rv.editErr = describe(err)
			return
		}
		rv.editing, rv.editText, rv.editErr = "", "", ""
	})
}

func (rv *reviewView) onEditCancel(app.Context, app.Event) {
	rv.inReview(func() { rv.editing, rv.editText, rv.editErr = "", "", "" })
}

func (rv *reviewView) onDelete(id string) app.EventHandler {
	return func(app.Context, app.Event) {
		rv.inReview(func() {
			rv.comments.Delete(id)
			if rv.editing == id {
				rv.editing = ""
			}
		})
	}
}

// commentCount says how many comments wait, for the comments tab.
func commentCount(c *state.ReviewComments) string {
	if c == nil {
		return ""
	}
	if n := len(c.Pending()); n > 0 {
		return " " + strconv.Itoa(n)
	}
	return ""
}
