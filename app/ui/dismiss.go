package ui

import (
	"context"
	"errors"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/wsclient"
	"github.com/herd-dev/herd/shared"
)

// idErrorDismiss is the active error banner's dismiss button.
const idErrorDismiss = "error-dismiss"

// dismissal is one error.dismiss request: the error it names (task and
// stamp), whether it is in flight and, once answered, why it failed. A
// banner shows it only while it names the banner's error, so a newer error
// starts with a fresh button.
type dismissal struct {
	taskID string
	stamp  string
	busy   bool
	err    string
}

// renderErrorBanner draws a task's active error with its dismiss button.
// The banner stays until a newer summary without the error arrives: the
// server's answer alone does not remove it. The preview is agent text and
// is only ever rendered as text.
func (s *shell) renderErrorBanner(taskID string, e shared.ActiveError) app.UI {
	d := s.dismissal
	mine := d.taskID == taskID && d.stamp == e.Stamp
	text := "Dismiss"
	if mine && d.busy {
		text = "Dismissing…"
	}
	dismiss := app.Button().
		ID(idErrorDismiss).
		Class("text-button").
		Type("button").
		OnClick(s.onDismissError(taskID, e.Stamp)).
		Text(text)
	if mine && d.busy {
		dismiss = dismiss.Disabled(true)
	}
	return app.Div().ID("error-banner").Class("banner", "banner-error", "error-banner").Role("alert").Body(
		app.Div().Class("error-banner-body").Body(
			app.Strong().Class("error-banner-title").Text("Agent error"),
			app.If(e.Preview != "", func() app.UI {
				return app.P().Class("error-preview").Text(e.Preview)
			}),
			app.If(mine && d.err != "", func() app.UI {
				return app.P().Class("error-banner-failure").Text("Could not dismiss: " + d.err)
			}),
		),
		dismiss,
	)
}

// onDismissError sends error.dismiss for the error with stamp. Only a
// failure changes what the banner says; success shows once the summary
// without the error arrives.
func (s *shell) onDismissError(taskID, stamp string) app.EventHandler {
	return func(app.Context, app.Event) {
		if s.link == nil {
			return
		}
		if d := s.dismissal; d.busy && d.taskID == taskID && d.stamp == stamp {
			return
		}
		s.dismissal = dismissal{taskID: taskID, stamp: stamp, busy: true}
		ctx, client := s.link.ui, s.link.client
		req := shared.ErrorDismissRequest{TaskID: taskID, Stamp: stamp}
		ctx.Async(func() {
			err := client.Request(context.Background(), shared.ActionErrorDismiss, req, nil)
			ctx.Dispatch(func(app.Context) { s.dismissed(req, err) })
		})
	}
}

// dismissed records the answer to an error.dismiss request, unless a
// newer one was sent since.
func (s *shell) dismissed(req shared.ErrorDismissRequest, err error) {
	if s.dismissal.taskID != req.TaskID || s.dismissal.stamp != req.Stamp {
		return
	}
	s.dismissal.busy = false
	s.dismissal.err = ""
	if err != nil {
		s.dismissal.err = requestFailure(err)
	}
}

// requestFailure explains why a request failed, in words that follow
// "Could not …: ". A dismissal, a git refresh and a pull request link share
// it: whatever the server did is shown by what the feed sends next.
func requestFailure(err error) string {
	var coded *shared.Error
	switch {
	case errors.As(err, &coded):
		return coded.Message
	case errors.Is(err, wsclient.ErrNotConnected):
		return "not connected to the server. Try again once the status shows online."
	case errors.Is(err, wsclient.ErrTimeout), lostConnection(err):
		return "the server did not answer. Try again once the status shows online."
	default:
		return err.Error()
	}
}
