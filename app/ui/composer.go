package ui

import (
	"context"
	"errors"
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
// session cannot take a prompt; while a turn runs the button queues.
func (v *sessionView) renderComposer() app.UI {
	st := v.detail.Session().State
	promptable := state.Promptable(st)
	label := "Send"
	if st == shared.SessionRunning {
		label = "Queue"
	}
	send := app.Button().ID(idComposerSend).Class("primary-button").Type("submit").Text(label)
	if !promptable {
		send = send.Disabled(true)
	}
	return app.Form().ID("composer").Class("composer").OnSubmit(v.onSend).Body(
		app.Label().For(idComposerInput).Class("visually-hidden").Text("Prompt"),
		app.Textarea().
			ID(idComposerInput).
			Class("composer-input").
			Rows(2).
			Placeholder(placeholderFor(st)).
			OnInput(v.onInput).
			OnKeyDown(v.onComposerKey),
		send,
	)
}

// placeholderFor tells the person what sending will do.
func placeholderFor(st shared.SessionState) string {
	switch {
	case st == shared.SessionRunning:
		return "The agent is working; a prompt sent now waits in the queue."
	case state.Promptable(st):
		return "Ask the agent…"
	default:
		return "This session cannot take a prompt now."
	}
}

func (v *sessionView) onInput(ctx app.Context, _ app.Event) {
	v.input = ctx.JSSrc().Get("value").String()
}

// onComposerKey sends on Enter; Shift+Enter makes a new line.
func (v *sessionView) onComposerKey(ctx app.Context, e app.Event) {
	if e.Get("key").String() == "Enter" && !e.Get("shiftKey").Bool() && !e.Get("isComposing").Bool() {
		e.PreventDefault()
		v.onSend(ctx, e)
	}
}

// onSend sends the typed prompt with a fresh client_message_id.
func (v *sessionView) onSend(ctx app.Context, e app.Event) {
	e.PreventDefault()
	text := v.input
	if v.outbox == nil || strings.TrimSpace(text) == "" || !state.Promptable(v.detail.Session().State) {
		return
	}
	v.input = ""
	if el := app.Window().GetElementByID(idComposerInput); el.Truthy() {
		el.Set("value", "")
	}
	v.send(ctx, v.outbox.Add(text))
}

// send runs message.add for one outbox entry and records the outcome: a
// server answer confirms it (duplicate included), a server error is a
// definitive refusal, and a lost answer leaves it unconfirmed for the
// reconciliation that follows the reconnect (or, after a timeout, at once).
func (v *sessionView) send(ctx app.Context, s state.Send) {
	ctx = v.ui()
	outbox, sessionID := v.outbox, v.openID
	req := shared.MessageAddRequest{SessionID: sessionID, ClientMessageID: s.ClientMessageID, Content: s.Content}
	ctx.Async(func() {
		var resp shared.MessageAddResponse
		err := v.client().Request(context.Background(), shared.ActionMessageAdd, req, &resp)
		ctx.Dispatch(func(ctx app.Context) {
			var coded *shared.Error
			switch {
			case err == nil:
				outbox.Confirmed(s.ClientMessageID)
			case errors.As(err, &coded):
				outbox.Refused(s.ClientMessageID, coded.Message)
			default:
				outbox.Uncertain(s.ClientMessageID, !errors.Is(err, wsclient.ErrNotConnected))
				if errors.Is(err, wsclient.ErrTimeout) && outbox == v.outbox {
					v.reconcile(ctx)
				}
			}
		})
	})
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
							app.Button().Class("text-button", "outgoing-retry").Type("button").OnClick(v.onRetry(s.ClientMessageID)).Text("Retry"),
							app.Button().Class("text-button", "outgoing-discard").Type("button").OnClick(v.onDiscard(s.ClientMessageID)).Text("Discard"),
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
