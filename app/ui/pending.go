package ui

import (
	"context"
	"strconv"
	"strings"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/shared"
)

// idPendingCard is the docked card of the request the agent waits on.
const idPendingCard = "pending-card"

// openRequests returns the open session's requests that wait for the
// person, oldest first.
func (v *sessionView) openRequests() []shared.Message {
	if v.detail == nil {
		return nil
	}
	return v.transcript().open
}

// renderOpenRequests docks the request the agent waits on above the
// composer, where it cannot scroll out of sight: a permission with the
// agent's own choices, a question with a pointer to the composer, which
// answers it. Further open requests are counted below it.
func (v *sessionView) renderOpenRequests(open []shared.Message) app.UI {
	if len(open) == 0 {
		return nil
	}
	m := open[0]
	card := app.Section().ID(idPendingCard).Class("pending-card", "pending-"+string(m.Type)).
		DataSet("pending-id", m.PendingID).
		DataSet("message-id", m.ID).
		Aria("labelledby", "pending-title")
	more := app.If(len(open) > 1, func() app.UI {
		return app.P().Class("pending-more").Text(plural(len(open)-1, "more request waits", "more requests wait") + " after this one.")
	})
	if m.Type == shared.MessageClarificationRequest {
		return card.Body(
			app.H3().ID("pending-title").Class("pending-title").Text("The agent asks"),
			app.P().Class("pending-text").Text(m.Content),
			app.P().Class("pending-hint").Text("Your reply in the box below answers this question."),
			more,
		)
	}
	opts := metadataOf(m).Options
	return card.Body(
		app.H3().ID("pending-title").Class("pending-title").Text("The agent asks for permission"),
		app.P().Class("pending-text").Text(m.Content),
		app.Div().Class("permission-options").Role("group").Aria("label", "Choices").Body(
			app.Range(opts).Slice(func(i int) app.UI {
				o := opts[i]
				return permissionOption(o, m.PendingID, v.onPermission(m.PendingID, o.OptionID)).
					ID("pending-option-" + strconv.Itoa(i))
			}),
		),
		more,
	)
}

// permissionOption is one of a permission request's choices as a button,
// coloured by its kind, with the agent's label. Its handler carries the
// request and option as its scope: go-app keeps a reused button's first
// handler otherwise.
func permissionOption(o shared.PermissionOption, pendingID string, onClick app.EventHandler) app.HTMLButton {
	return app.Button().
		Class("permission-option", "option-"+state.OptionTone(o.Kind)).
		DataSet("kind", o.Kind).
		Type("button").
		DataSet("option-id", o.OptionID).
		OnClick(onClick, app.EventScope(pendingID, o.OptionID)).
		Text(state.OptionLabel(o))
}

// focusRequest moves focus to the request the agent waits on: a
// permission's first choice, or the composer that answers a question.
func (v *sessionView) focusRequest() {
	open := v.openRequests()
	if len(open) == 0 {
		return
	}
	if open[0].Type == shared.MessageClarificationRequest {
		v.asPrompt = false
		focus(v.ui(), idComposerInput)
		return
	}
	focus(v.ui(), "pending-option-0")
}

func (v *sessionView) onPermission(pendingID, optionID string) app.EventHandler {
	return func(ctx app.Context, _ app.Event) {
		req := shared.PermissionRespondRequest{SessionID: v.openID, PendingID: pendingID, OptionID: optionID}
		v.act(ctx, shared.ActionPermissionRespond, req, "Could not answer the permission request")
	}
}

func (v *sessionView) onQueueRemove(queueID string) app.EventHandler {
	return func(ctx app.Context, _ app.Event) {
		req := shared.QueueRemoveRequest{SessionID: v.openID, QueueID: queueID}
		v.act(ctx, shared.ActionMessageQueueRemove, req, "Could not remove the queued prompt")
	}
}

func (v *sessionView) onCancel(ctx app.Context, _ app.Event) {
	v.act(ctx, shared.ActionSessionCancel, shared.SessionRef{SessionID: v.openID}, "Could not cancel")
}

// act sends a request whose effect arrives through the session stream;
// only a failure is shown.
func (v *sessionView) act(ctx app.Context, action string, req any, failure string) {
	ctx = v.ui()
	v.err = ""
	detail := v.detail
	ctx.Async(func() {
		err := v.client().Request(context.Background(), action, req, nil)
		if err == nil {
			return
		}
		dispatch(ctx, func(app.Context) {
			if v.detail == detail {
				v.err = failure + ": " + describeAction(err)
			}
		})
	})
}

// describeAction explains a failed session action.
func describeAction(err error) string {
	if lostConnection(err) {
		return "the connection dropped; check the transcript once it is back."
	}
	return describe(err)
}

// authHint lists an agent's auth methods and the variables that would
// satisfy them.
func authHint(methods []shared.AuthMethod) string {
	parts := make([]string, len(methods))
	for i, m := range methods {
		parts[i] = m.Name
		if len(m.Vars) > 0 {
			parts[i] += ": set " + strings.Join(m.Vars, " or ")
		}
	}
	return "Sign in: " + strings.Join(parts, "; ")
}
