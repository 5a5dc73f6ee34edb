package ui

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/shared"
)

// Element ids of the inbox.
const (
	idInbox       = "inbox"
	idInboxToggle = "inbox-toggle"
	idInboxTitle  = "inbox-title"
	idInboxCount  = "inbox-count"
	idInboxEmpty  = "inbox-empty"
	idAttention   = "attention-switch"
)

// renderInboxToggle draws the top bar's way to the inbox, a link with the
// count of waiting requests ("Needs you 3"); the count is left out until
// the first listing arrived, rather than claim none.
func (s *shell) renderInboxToggle() app.UI {
	n := s.inbox.Len()
	a := app.A().ID(idInboxToggle).Class("inbox-toggle").Href(state.InboxPath).
		Title("What needs you (Alt+Shift+I)").
		Aria("keyshortcuts", "Alt+Shift+I")
	if n > 0 {
		a = a.Class("inbox-toggle-waiting")
	}
	if s.route.Inbox {
		a = a.Aria("current", "page")
	}
	count := app.Span().ID(idInboxCount).Class("inbox-count")
	if s.inbox.Loaded() || n > 0 {
		count = count.Text(strconv.Itoa(n))
	}
	return a.Body(app.Span().Class("inbox-toggle-label").Text("Needs you"), count)
}

// openInbox shows the inbox and moves focus to its heading, from where
// Tab reaches the first decision.
func (s *shell) openInbox(ctx app.Context) {
	s.navigate(ctx, state.Route{Inbox: true})
	s.sheetOpen = false
	focus(ctx, idInboxTitle)
}

// renderInbox draws every pending request of the workspace, newest first,
// each with its decision inline. It reads only the inbox and the task
// rows: no session is subscribed to show it.
func (s *shell) renderInbox(now time.Time) app.UI {
	reqs := s.inbox.Requests()
	return app.Section().ID(idInbox).Class("inbox").Aria("labelledby", idInboxTitle).Body(
		app.Div().Class("inbox-head").Body(
			app.H1().ID(idInboxTitle).Class("inbox-title").TabIndex(-1).Text("Needs you"),
			s.renderAttentionSwitch(),
		),
		app.If(s.inbox.LoadError() != "", func() app.UI {
			return app.P().ID("inbox-load-error").Class("banner", "banner-error").Role("alert").Body(
				app.Span().Text("Could not load what needs you: "+s.inbox.LoadError()+" "),
				app.Button().ID("inbox-reload").Class("text-button").Type("button").OnClick(s.onInboxReload).Text("Retry"),
			)
		}),
		app.If(len(reqs) > 0, func() app.UI {
			return app.Ul().Class("inbox-list").Body(
				app.Range(reqs).Slice(func(i int) app.UI { return s.renderInboxItem(reqs[i], now) }),
			)
		}).ElseIf(s.inbox.Loaded(), func() app.UI {
			return app.P().ID(idInboxEmpty).Class("inbox-empty").Role("status").
				Text("Nothing needs you. When an agent asks for permission or asks a question, it shows here.")
		}).ElseIf(s.inbox.LoadError() == "", func() app.UI {
			return app.P().Class("inbox-empty").Text("Loading what needs you…")
		}),
		app.If(s.inbox.Truncated(), func() app.UI {
			return app.P().Class("inbox-more").Text("Only the newest " + strconv.Itoa(shared.MaxInboxRequests) + " requests are shown.")
		}),
	)
}

// renderInboxItem draws one request: its task, how long it has waited,
// what it asks, the decision and a link to its session. Every handler is
// scoped to the request: go-app reuses the elements of a list by
// position, so a handler must change with the request it answers.
func (s *shell) renderInboxItem(r shared.InboxRequest, now time.Time) app.UI {
	title := "A task not in the list"
	if t, ok := s.store.Task(r.TaskID); ok {
		title = titleOrPlaceholder(t.Title)
	}
	session := state.Route{TaskID: r.TaskID, SessionID: r.SessionID}.Path()
	answer := s.inbox.Answer(r.PendingID)
	sending := answer.State == state.AnswerSending
	others := len(s.inbox.ForTask(r.TaskID)) - 1
	item := app.Li().Class("inbox-item", "inbox-"+string(r.Kind)).
		DataSet("pending-id", r.PendingID).
		DataSet("task-id", r.TaskID)
	if sending {
		item = item.Aria("busy", "true")
	}
	return item.Body(
		app.Div().Class("inbox-item-head").Body(
			// Task titles are user text: only ever text nodes.
			app.A().Class("inbox-task").Href(session).Text(title),
			app.Time().Class("inbox-ago").DateTime(r.CreatedAt.UTC().Format(time.RFC3339)).Text(state.Ago(now, r.CreatedAt)),
			app.If(others > 0, func() app.UI {
				return app.Span().Class("inbox-others").Text(strconv.Itoa(others) + " more from this task")
			}),
		),
		s.renderInboxAsk(r),
		app.If(r.Kind == shared.InboxClarification, func() app.UI {
			return s.renderInboxAnswerBox(r, sending)
		}).Else(func() app.UI {
			return renderInboxOptions(s, r, sending)
		}),
		app.If(answer.State == state.AnswerFailed, func() app.UI {
			return app.P().Class("inbox-error").Role("alert").Body(
				app.Span().Text("Could not answer: "+answer.Err+" "),
				app.Button().Class("text-button", "inbox-retry").Type("button").
					OnClick(s.onInboxRetry(r.PendingID), app.EventScope(r.PendingID)).
					Text("Retry"),
			)
		}),
		app.A().Class("inbox-open").Href(session).Text("Open the session"),
	)
}

// renderInboxAsk says what the request asks: a permission's tool kind and
// title, or the question.
func (s *shell) renderInboxAsk(r shared.InboxRequest) app.UI {
	if r.Kind == shared.InboxClarification {
		return app.P().Class("inbox-ask").Body(
			app.Span().Class("inbox-kind").Text("Question"),
			app.Span().Class("inbox-ask-text").Text(r.Title),
		)
	}
	kind := "Permission"
	if r.ToolKind != "" {
		kind = r.ToolKind
	}
	return app.P().Class("inbox-ask").Body(
		app.Span().Class("inbox-kind").Text(kind),
		app.Span().Class("inbox-ask-text").Text(r.Title),
	)
}

// renderInboxOptions draws a permission's choices as the session's
// request card does: the agent's options in its order, coloured by kind,
// disabled while an answer is in flight.
func renderInboxOptions(s *shell, r shared.InboxRequest, sending bool) app.UI {
	if len(r.Options) == 0 {
		return app.P().Class("inbox-hint").Text("The agent gave no choices here; open the session to answer.")
	}
	return app.Div().Class("permission-options", "inbox-options").Role("group").Aria("label", "Choices").Body(
		app.Range(r.Options).Slice(func(i int) app.UI {
			o := r.Options[i]
			b := permissionOption(o, r.PendingID, s.onInboxOption(r.PendingID, o.OptionID))
			if sending {
				// Only ever set to true; see renderNewTask.
				b = b.Disabled(true)
			}
			return b
		}),
	)
}

// renderInboxAnswerBox draws a clarification's answer box. Its text is
// the request's draft in the inbox, set as the box's value on every
// render, so a box reused for another request by position shows that
// request's text.
func (s *shell) renderInboxAnswerBox(r shared.InboxRequest, sending bool) app.UI {
	id := "inbox-answer-" + r.PendingID
	draft := s.inbox.Draft(r.PendingID)
	send := app.Button().Class("primary-button", "inbox-send").Type("submit").Text("Answer")
	if sending || strings.TrimSpace(draft) == "" {
		send = send.Disabled(true)
	}
	return app.Form().Class("inbox-answer").
		OnSubmit(s.onInboxAnswer(r.PendingID), app.EventScope(r.PendingID)).
		Body(
			app.Label().For(id).Class("visually-hidden").Text("Your answer"),
			app.Textarea().ID(id).Class("inbox-answer-input").Rows(2).
				Placeholder("Your answer").
				Attr("value", draft).
				OnInput(s.onInboxDraft(r.PendingID), app.EventScope(r.PendingID)),
			send,
		)
}

func (s *shell) onInboxOption(pendingID, optionID string) app.EventHandler {
	return func(app.Context, app.Event) { s.answerInbox(pendingID, state.Answer{OptionID: optionID}) }
}

func (s *shell) onInboxDraft(pendingID string) app.EventHandler {
	return func(ctx app.Context, _ app.Event) {
		s.inbox.SetDraft(pendingID, ctx.JSSrc().Get("value").String())
	}
}

func (s *shell) onInboxAnswer(pendingID string) app.EventHandler {
	return func(_ app.Context, e app.Event) {
		e.PreventDefault()
		text := s.inbox.Draft(pendingID)
		if strings.TrimSpace(text) == "" {
			return
		}
		s.answerInbox(pendingID, state.Answer{Text: text})
	}
}

// onInboxRetry sends the failed answer again.
func (s *shell) onInboxRetry(pendingID string) app.EventHandler {
	return func(app.Context, app.Event) { s.answerInbox(pendingID, s.inbox.Answer(pendingID)) }
}

func (s *shell) onInboxReload(app.Context, app.Event) {
	if s.link == nil {
		return
	}
	l, workspaceID := s.link, s.store.WorkspaceID()
	l.ui.Async(func() { l.loadInbox(context.Background(), workspaceID) })
}

// answerInbox sends a as the answer to request pendingID, as the session
// view would (permission.respond, clarification.respond), one at a time
// per request. The request stays, its choices disabled, until the server
// took the answer; a refusal is shown with a Retry.
func (s *shell) answerInbox(pendingID string, a state.Answer) {
	r, ok := s.inbox.Request(pendingID)
	if !ok || s.link == nil || !s.inbox.BeginAnswer(pendingID, a) {
		return
	}
	action, req := shared.ActionPermissionRespond, any(shared.PermissionRespondRequest{
		SessionID: r.SessionID, PendingID: pendingID, OptionID: a.OptionID,
	})
	if r.Kind == shared.InboxClarification {
		action, req = shared.ActionClarificationRespond, shared.ClarificationRespondRequest{
			SessionID: r.SessionID, PendingID: pendingID, Answer: a.Text,
		}
	}
	l := s.link
	l.ui.Async(func() {
		err := l.client.Request(context.Background(), action, req, nil)
		dispatch(l.ui, func(app.Context) {
			if err != nil {
				s.inbox.AnswerFailed(pendingID, describeAnswer(err))
				return
			}
			s.inbox.Answered(pendingID)
			s.syncAttention()
		})
	})
}

// describeAnswer explains why an answer from the inbox was not taken.
func describeAnswer(err error) string {
	if lostConnection(err) {
		return "the connection dropped before the server confirmed it."
	}
	if shared.ErrorCode(err) == shared.CodeNotFound {
		return "the agent is no longer waiting on it (answered elsewhere, or withdrawn)."
	}
	return describe(err)
}

// renderAttentionSwitch draws the off switch of the sound and the title
// flash.
func (s *shell) renderAttentionSwitch() app.UI {
	box := app.Input().ID(idAttention).Type("checkbox").OnChange(s.onAttentionSwitch)
	if s.attention.Enabled() {
		// Only ever set to true, like disabled.
		box = box.Checked(true)
	}
	return app.Label().Class("attention-switch").For(idAttention).Body(
		box,
		app.Span().Text("Sound and title flash when this tab is hidden"),
	)
}

func (s *shell) onAttentionSwitch(ctx app.Context, _ app.Event) {
	s.attention.SetEnabled(ctx.JSSrc().Get("checked").Bool())
	s.syncAttention()
}

// loadInbox asks for the workspace's pending requests and applies the
// answer with the inbox's mark taken just before the request is sent, so
// an event the feed delivered meanwhile is not undone (state.Inbox.Load).
// A lost connection is not shown: the next connection loads it again.
func (l *link) loadInbox(ctx context.Context, workspaceID string) {
	var mark state.InboxMark
	dispatch(l.ui, func(app.Context) { mark = l.shell.inbox.Mark() })
	var resp shared.InboxListResponse
	err := l.client.Request(ctx, shared.ActionInboxList, shared.InboxListRequest{WorkspaceID: workspaceID}, &resp)
	dispatch(l.ui, func(app.Context) {
		s := l.shell
		switch {
		case err == nil:
			s.inbox.Load(resp, mark)
		case !lostConnection(err):
			s.inbox.LoadFailed(describe(err))
		}
		s.syncAttention()
	})
}

// inboxOpened applies inbox.request.opened: a request new to the inbox
// may call for attention (state.Attention).
func (s *shell) inboxOpened(r shared.InboxRequest) {
	isNew := s.inbox.Open(r)
	s.attention.SetPending(s.inbox.Len())
	if isNew && s.attention.Opened(time.Now()) && s.attend != nil {
		s.attend.chime()
	}
	s.syncAttention()
}

// inboxClosed applies inbox.request.closed.
func (s *shell) inboxClosed(ev shared.InboxRequestClosed) {
	s.inbox.Close(ev)
	s.syncAttention()
}
