package ui

import (
	"context"
	"net/url"
	"strings"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/shared"
)

// Element ids of the task detail's pull request link control.
const (
	idTaskPRURL    = "task-pr-url"
	idTaskPRLink   = "task-pr-link"
	idTaskPRUnlink = "task-pr-unlink"
	idTaskPRError  = "task-pr-error"
)

// prLink is the pull request link control of one task: the URL being typed
// and the last task.update it sent, with its state. Another task's control
// starts empty, so a request in flight for one task never disables
// another's.
type prLink struct {
	taskID string
	input  string
	// seq numbers the requests sent, across tasks, so that only the answer
	// to the latest one changes the control.
	seq uint64
	// unlink says whether the request removes the link, for the words of
	// its failure.
	unlink bool
	request
}

// failure says why the last request failed, as a sentence.
func (p prLink) failure() string {
	verb := "link"
	if p.unlink {
		verb = "unlink"
	}
	return "Could not " + verb + ": " + p.err
}

// prLinkOf returns the control state of task taskID.
func (tv *taskView) prLinkOf(taskID string) prLink {
	if tv.prLink.taskID != taskID {
		return prLink{taskID: taskID, seq: tv.prLink.seq}
	}
	return tv.prLink
}

// renderPRLink draws the control that links a pull request to the task by
// hand: a URL field with a Link button while the task has no link, else the
// link with an Unlink button. The linked pull request's state follows later
// in the summary (renderPullRequest), once herd has stored it.
func (tv *taskView) renderPRLink(t shared.Task) app.UI {
	p := tv.prLinkOf(t.ID)
	failure := app.If(p.err != "", func() app.UI {
		return app.P().ID(idTaskPRError).Class("task-pr-error").Role("alert").Text(p.failure())
	})
	if t.PullRequestURL != "" {
		return app.Div().Class("task-pr", "task-pr-linked").Body(
			app.Span().Class("task-pr-label").Text("Linked pull request"),
			app.Div().Class("task-pr-row").Body(
				prAnchor(t.PullRequestURL),
				busyButton(idTaskPRUnlink, "Unlink", "Unlinking…", p.busy).Class("task-pr-button").
					Aria("label", "Remove the pull request link").
					OnClick(tv.onUnlinkPR(t.ID), app.EventScope(t.ID)),
			),
			failure,
		)
	}
	input := app.Input().
		ID(idTaskPRURL).
		Type("url").
		Name("pull_request_url").
		Placeholder("https://github.com/OWNER/REPO/pull/17").
		AutoComplete(false).
		Spellcheck(false).
		Attr("autocapitalize", "off").
		Value(p.input).
		OnInput(tv.onPRInput(t.ID), app.EventScope(t.ID))
	if p.err != "" {
		input = input.Aria("describedby", idTaskPRError).Aria("invalid", "true")
	}
	// noValidate: the server's message says what a pull request link is;
	// the browser's own bubble for type=url would not.
	return app.Form().Class("task-pr", "task-pr-form").NoValidate(true).OnSubmit(tv.onLinkPR(t.ID), app.EventScope(t.ID)).Body(
		app.Label().Class("task-pr-label").For(idTaskPRURL).Text("Pull request URL"),
		app.Div().Class("task-pr-row").Body(
			input,
			busyButton(idTaskPRLink, "Link", "Linking…", p.busy).Class("task-pr-button").Type("submit"),
		),
		failure,
	)
}

// prAnchor shows the linked URL as text, opening in a new tab. The server
// only stores https links to /OWNER/REPO/pull/NUMBER, but go-app writes
// attribute values with Go quoting on the server, so the href is the
// link's escaped form, and a link that still has a character that could
// end the attribute is shown without one.
func prAnchor(link string) app.UI {
	u, err := url.Parse(link)
	if err != nil || u.Scheme != "https" || strings.ContainsAny(u.String(), "\"'<>\\` ") {
		return app.Span().Class("task-pr-url").Text(link)
	}
	return app.A().Class("task-pr-url").Href(u.String()).Target("_blank").Rel("noopener noreferrer").Text(link)
}

// onPRInput keeps task taskID's typed URL in step with its field.
func (tv *taskView) onPRInput(taskID string) app.EventHandler {
	return func(ctx app.Context, _ app.Event) {
		p := tv.prLinkOf(taskID)
		p.input = ctx.JSSrc().Get("value").String()
		tv.prLink = p
	}
}

// onLinkPR links the typed URL, trimmed; an empty field sends nothing.
func (tv *taskView) onLinkPR(taskID string) app.EventHandler {
	return func(_ app.Context, e app.Event) {
		e.PreventDefault()
		if link := strings.TrimSpace(tv.prLinkOf(taskID).input); link != "" {
			tv.sendPRLink(taskID, link)
		}
	}
}

// onUnlinkPR removes the task's pull request link.
func (tv *taskView) onUnlinkPR(taskID string) app.EventHandler {
	return func(app.Context, app.Event) { tv.sendPRLink(taskID, "") }
}

// sendPRLink sends task.update with link as task taskID's pull request
// link; an empty link removes it. The request runs and reports back through
// the shell's context: the button that sent it leaves the page on success.
func (tv *taskView) sendPRLink(taskID, link string) {
	if tv.Shell.link == nil || !tv.mounted {
		return
	}
	p := tv.prLinkOf(taskID)
	if p.busy {
		return
	}
	p.seq++
	p.unlink, p.request = link == "", request{busy: true}
	tv.prLink = p
	ctx, client := tv.Shell.link.ui, tv.Shell.link.client
	req := shared.TaskUpdateRequest{TaskID: taskID, PullRequestURL: &link}
	seq, sent := p.seq, tv.Shell.store.Mark()
	ctx.Async(func() {
		var t shared.Task
		err := client.Request(context.Background(), shared.ActionTaskUpdate, req, &t)
		dispatch(ctx, func(ctx app.Context) {
			current := tv.prLink.taskID == taskID && tv.prLink.seq == seq
			if tv.prLinked(req, seq, t, sent, err) {
				// go-app clears a value by removing the attribute, which
				// leaves what was typed in the field.
				ctx.Defer(func(app.Context) { setProperty(idTaskPRURL, "value", "") })
			}
			if current {
				keepPRFocus(ctx)
			}
		})
	})
}

// prLinked applies the answer to the task.update numbered seq, sent when
// the store was at sent, and reports whether it succeeded. The updated
// task is stored the way every answer holding a task is (a task.updated
// that overtook it stays); the control changes only if no newer request
// was sent since.
func (tv *taskView) prLinked(req shared.TaskUpdateRequest, seq uint64, t shared.Task, sent state.Mark, err error) bool {
	if err == nil {
		tv.Shell.store.Apply(state.ResponseWrite(t, sent))
	}
	p := &tv.prLink
	if p.taskID != req.TaskID || p.seq != seq {
		return false
	}
	p.answered(err)
	if err != nil {
		return false
	}
	p.input = ""
	return true
}

// keepPRFocus puts keyboard focus back into the control once the answer
// has been rendered, when it was lost with the disabled or replaced button
// or is still inside the control; focus the person moved elsewhere stays.
func keepPRFocus(ctx app.Context) {
	ctx.Defer(func(app.Context) {
		doc := app.Window().Get("document")
		active := doc.Get("activeElement")
		lost := !active.Truthy() || active.Equal(doc.Get("body")) || !active.Get("isConnected").Bool() ||
			active.Call("closest", ".task-pr").Truthy()
		if !lost {
			return
		}
		for _, id := range []string{idTaskPRURL, idTaskPRUnlink} {
			if el := app.Window().GetElementByID(id); el.Truthy() {
				el.Call("focus")
				return
			}
		}
	})
}
