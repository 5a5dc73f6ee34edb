package ui

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/app/wsclient"
	"github.com/herd-dev/herd/shared"
)

// Element ids of the composer.
const (
	idComposerInput = "composer-input"
	idComposerSend  = "composer-send"
)

// renderComposer draws the prompt box. Sending is disabled only while the
// session cannot take a prompt; while a turn runs the button queues. While
// the agent waits on a question the box answers it, unless the person
// chooses to send a new prompt instead.
func (v *sessionView) renderComposer(open []shared.Message) app.UI {
	st := v.detail.Session().State
	question, answering := v.question(open)
	promptable := state.Promptable(st)
	label := "Send"
	switch {
	case answering:
		label = "Answer"
	case st == shared.SessionRunning:
		label = "Queue"
	}
	send := app.Button().ID(idComposerSend).Class("primary-button").Type("submit").Text(label)
	if !promptable && !answering {
		send = send.Disabled(true)
	}
	form := app.Form().ID("composer").Class("composer").OnSubmit(v.onSend)
	if answering {
		form = form.Class("composer-answering").DataSet("answers", question.PendingID)
	}
	return form.Body(
		// Stable slots: the completion and the attachments come and go.
		app.Div().Class("composer-mentions").Body(v.renderMentions()),
		v.renderAttachments(),
		app.Label().For(idComposerInput).Class("visually-hidden").Text(composerLabel(answering)),
		v.renderCompletion(),
		v.comboboxOf(app.Textarea().
			ID(idComposerInput).
			Class("composer-input").
			Rows(2).
			Placeholder(placeholderFor(st, open, answering, v.tv.Phone)).
			OnInput(v.onInput).
			OnKeyDown(v.onComposerKey)),
		v.renderCommandHint(),
		send,
		app.If(question.ID != "", func() app.UI {
			text := "Send as a new prompt instead"
			if !answering {
				text = "Answer the question instead"
			}
			return app.Button().ID("composer-mode").Class("text-button", "composer-mode").Type("button").
				Aria("pressed", !answering).OnClick(v.onComposerMode).Text(text)
		}),
	)
}

// question returns the open question the composer answers, if any, and
// whether it answers it now: the oldest open request is a question and the
// person has not chosen to send a prompt instead.
func (v *sessionView) question(open []shared.Message) (shared.Message, bool) {
	if len(open) == 0 || open[0].Type != shared.MessageClarificationRequest {
		return shared.Message{}, false
	}
	return open[0], !v.asPrompt
}

func composerLabel(answering bool) string {
	if answering {
		return "Your answer"
	}
	return "Prompt"
}

// placeholderFor tells the person what sending will do, and on a desktop
// how (phone keyboards have no Shift+Enter; the button sends there).
func placeholderFor(st shared.SessionState, open []shared.Message, answering, phone bool) string {
	keys := " (Enter sends, Shift+Enter adds a line)"
	if phone {
		keys = ""
	}
	switch {
	case answering:
		return "Answer the agent's question…" + keys
	case len(open) > 0 && open[0].Type == shared.MessagePermissionRequest:
		return "The agent waits for your permission above; a prompt sent now waits in the queue."
	case len(open) > 0:
		return "The agent waits for your answer; a prompt sent now waits in the queue."
	case st == shared.SessionRunning:
		return "The agent is working; a prompt sent now waits in the queue."
	case state.Promptable(st):
		return "Ask the agent…" + keys
	default:
		return "This session cannot take a prompt now."
	}
}

func (v *sessionView) onInput(ctx app.Context, _ app.Event) {
	v.input = ctx.JSSrc().Get("value").String()
	v.drafts.Set(v.taskID, v.input)
	v.readMention(ctx.JSSrc())
	v.updateCompletion(ctx.JSSrc())
}

// onComposerMode switches between answering the open question and sending
// a new prompt.
func (v *sessionView) onComposerMode(app.Context, app.Event) {
	v.asPrompt = !v.asPrompt
	focus(v.ui(), idComposerInput)
}

// listenForEnter makes Enter in the composer send and Shift+Enter break
// the line, on a desktop. The listener is the browser's own, on the document: a go-app
// event handler runs after the browser has already inserted the line
// break, too late to prevent it; this one runs inside the event.
func (v *sessionView) listenForEnter() {
	v.enter = app.FuncOf(func(_ app.Value, args []app.Value) any {
		if len(args) == 0 {
			return nil
		}
		e := args[0]
		key, composing := e.Get("key").String(), e.Get("isComposing").Bool()
		onBox := e.Get("target").Get("id").String() == idComposerInput
		// keyTaken holds for this key only, and only in the box.
		taken := v.keyTaken
		v.keyTaken = false
		if onBox && !composing && v.completing(key) {
			// An open @ completion takes the keys that move through it;
			// an Enter that ends an input method's composition is the
			// composition's.
			e.Call("preventDefault")
			dispatch(v.ui(), func(app.Context) { v.mentionKey(key) })
			return nil
		}
		if onBox && (taken || v.completion.Open() && completionTakes(key) && !composing) {
			// The open command list took the key (onComposerKey), or
			// takes it once its handler runs: it is not the box's, on a
			// phone either.
			e.Call("preventDefault")
			return nil
		}
		if v.tv.Phone || e.Get("key").String() != "Enter" || e.Get("shiftKey").Bool() || e.Get("isComposing").Bool() ||
			e.Get("target").Get("id").String() != idComposerInput {
			// A phone's keyboard has no Shift+Enter: there Enter breaks
			// the line and the button sends.
			return nil
		}
		e.Call("preventDefault")
		dispatch(v.ui(), v.submit)
		return nil
	})
	app.Window().Get("document").Call("addEventListener", "keydown", v.enter)
}

// stopListeningForEnter removes the listener and frees its function.
func (v *sessionView) stopListeningForEnter() {
	app.Window().Get("document").Call("removeEventListener", "keydown", v.enter)
	v.enter.Release()
}

// onSend is the composer's submit.
func (v *sessionView) onSend(ctx app.Context, e app.Event) {
	e.PreventDefault()
	v.submit(ctx)
}

// submit answers the open question, or sends the typed prompt with a
// fresh client_message_id.
func (v *sessionView) submit(ctx app.Context) {
	text := v.input
	if v.outbox == nil || strings.TrimSpace(text) == "" {
		return
	}
	if q, answering := v.question(v.openRequests()); answering {
		v.answer(ctx, q.PendingID, text)
		return
	}
	if !state.Promptable(v.detail.Session().State) {
		return
	}
	req := shared.MessageAddRequest{SessionID: v.openID, ClientMessageID: "fit", Content: text, Attachments: v.content.attach.List()}
	if err := state.PromptFits(req); err != nil {
		v.content.err = err.Error()
		return
	}
	v.clearComposer()
	v.content.completions.Close()
	v.content.err = ""
	v.send(ctx, v.outbox.Add(text, v.content.attach.Take()...))
}

// sendPrompt sends the stored prompt promptID again as a new prompt (a
// Retry), with its attachments.
func (v *sessionView) sendPrompt(ctx app.Context, promptID string) {
	if v.outbox == nil || v.detail == nil || !state.Promptable(v.detail.Session().State) {
		return
	}
	for _, m := range v.transcript().msgs {
		if m.ID == promptID {
			v.follow.Jump()
			v.send(ctx, v.outbox.Add(m.Content, state.Resendable(metadataOf(m).Attachments)...))
			return
		}
	}
}

// clearComposer empties the box and the task's draft.
func (v *sessionView) clearComposer() {
	v.input = ""
	v.drafts.Set(v.taskID, "")
	if el := app.Window().GetElementByID(idComposerInput); el.Truthy() {
		el.Set("value", "")
	}
}

// answer sends the composer's text as the answer to question pendingID.
// The text stays in the box until the server took the answer, so a failed
// one is not lost.
func (v *sessionView) answer(ctx app.Context, pendingID, text string) {
	ctx = v.ui()
	v.err = ""
	req := shared.ClarificationRespondRequest{SessionID: v.openID, PendingID: pendingID, Answer: text}
	detail := v.detail
	ctx.Async(func() {
		err := v.client().Request(context.Background(), shared.ActionClarificationRespond, req, nil)
		dispatch(ctx, func(app.Context) {
			if v.detail != detail {
				return
			}
			if err != nil {
				v.err = "Could not send the answer: " + describeAction(err)
				return
			}
			if v.input == text {
				v.clearComposer()
			}
		})
	})
}

// send runs message.add for one outbox entry of the open session; after
// a timeout it reconciles at once rather than wait for a reconnect.
func (v *sessionView) send(ctx app.Context, s state.Send) {
	outbox := v.outbox
	sendOutboxed(v.ui(), v.client(), outbox, v.openID, s, func(ctx app.Context, _ shared.MessageAddResponse, err error) {
		if errors.Is(err, wsclient.ErrTimeout) && outbox == v.outbox {
			v.reconcile(ctx)
		}
	})
}

// sendOutboxed runs message.add for one entry of session sessionID's
// outbox and records the outcome there: a server answer confirms it
// (duplicate included), a server error is a definitive refusal, and a
// lost answer leaves it unconfirmed for the reconciliation that follows
// the reconnect. The composer and the review's comments both send this
// way. Then done, if not nil, runs on the UI goroutine with the answer.
func sendOutboxed(ctx app.Context, client *wsclient.Client, outbox *state.Outbox, sessionID string, s state.Send,
	done func(app.Context, shared.MessageAddResponse, error)) {
	req := shared.MessageAddRequest{SessionID: sessionID, ClientMessageID: s.ClientMessageID, Content: s.Content, Attachments: s.Attachments}
	ctx.Async(func() {
		var resp shared.MessageAddResponse
		err := client.Request(context.Background(), shared.ActionMessageAdd, req, &resp)
		dispatch(ctx, func(ctx app.Context) {
			var coded *shared.Error
			switch {
			case err == nil:
				outbox.Confirmed(s.ClientMessageID)
			case errors.As(err, &coded):
				outbox.Refused(s.ClientMessageID, coded.Message)
			default:
				outbox.Uncertain(s.ClientMessageID, !errors.Is(err, wsclient.ErrNotConnected))
			}
			if done != nil {
				done(ctx, resp, err)
			}
		})
	})
}

// maxOutboxes bounds the outboxes a page keeps at once; past it the idle
// ones (nothing unconfirmed, not in use) are let go, to be read again
// from localStorage when next needed.
const maxOutboxes = 32

// outboxes is the page's one outbox per session. The session pane and the
// review send a session's prompts through the same one: two copies of one
// session's outbox would each write their own list to its storage key and
// drop what the other holds.
type outboxes map[string]*state.Outbox

// of returns session sessionID's outbox; inUse are those the page holds
// now, which are never let go.
func (o *outboxes) of(sessionID string, inUse ...*state.Outbox) *state.Outbox {
	if *o == nil {
		*o = outboxes{}
	}
	if b, ok := (*o)[sessionID]; ok {
		return b
	}
	if len(*o) >= maxOutboxes {
		for id, b := range *o {
			if len(b.Sends()) == 0 && !slices.Contains(inUse, b) {
				delete(*o, id)
			}
		}
	}
	b := state.NewOutbox(localStorage, sessionID, newClientMessageID)
	(*o)[sessionID] = b
	return b
}

// reconcile sends the unconfirmed prompts again with their own ids.
func (v *sessionView) reconcile(ctx app.Context) {
	if v.outbox == nil {
		return
	}
	for _, s := range v.outbox.Reconcile() {
		v.send(ctx, s)
	}
}

// onRetry is the person's retry of a refused or unknown prompt.
func (v *sessionView) onRetry(id string) app.EventHandler {
	return func(ctx app.Context, _ app.Event) {
		if v.outbox == nil {
			return
		}
		if s, ok := v.outbox.Retry(id); ok {
			v.send(ctx, s)
		}
	}
}

// onDiscard forgets a prompt the person gave up on.
func (v *sessionView) onDiscard(id string) app.EventHandler {
	return func(app.Context, app.Event) {
		if v.outbox != nil {
			v.outbox.Discard(id)
		}
	}
}

// renderOutgoing draws the prompts the server has not confirmed and the
// transcript does not show yet, with what is known about each.
func (v *sessionView) renderOutgoing(shown map[string]bool) app.UI {
	sends := v.outbox.Sends()
	var visible []state.Send
	for _, s := range sends {
		if !shown[s.ClientMessageID] {
			visible = append(visible, s)
		}
	}
	return app.Range(visible).Slice(func(i int) app.UI {
		s := visible[i]
		return app.Div().
			Class("message", "message-user", "outgoing").
			DataSet("type", string(shared.MessageUser)).
			DataSet("status", string(s.Status)).
			Body(
				app.Div().Class("message-text").Text(s.Content),
				app.Div().Class("outgoing-status").Body(
					app.Span().Text(sendStatusText(s)),
					app.If(s.Status == state.SendFailed || s.Status == state.SendUnknown, func() app.UI {
						return app.Span().Class("outgoing-actions").Body(
							app.Button().Class("text-button", "outgoing-retry").Type("button").OnClick(v.onRetry(s.ClientMessageID), app.EventScope(s.ClientMessageID)).Text("Retry"),
							app.Button().Class("text-button", "outgoing-discard").Type("button").OnClick(v.onDiscard(s.ClientMessageID), app.EventScope(s.ClientMessageID)).Text("Discard"),
						)
					}),
				),
			)
	})
}

// sendStatusText says what is known about an outgoing prompt.
func sendStatusText(s state.Send) string {
	switch s.Status {
	case state.SendUnconfirmed:
		return "Unconfirmed: will check with the server once reconnected."
	case state.SendUnknown:
		return "Unknown outcome: the server never confirmed this prompt. Retrying cannot run it twice."
	case state.SendFailed:
		return "Not sent: " + s.Err
	default:
		return "Sending…"
	}
}
