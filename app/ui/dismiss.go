package ui

import (
	"context"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/shared"
)

// idErrorDismiss is the active error banner's dismiss button.
const idErrorDismiss = "error-dismiss"

// dismissal is one error.dismiss request: the error it names (task and
// stamp) and its state. A banner shows it only while it names the
// banner's error, so a newer error starts with a fresh button.
type dismissal struct {
	taskID string
	stamp  string
	request
}

// names reports whether d was sent for task taskID's error with stamp.
func (d dismissal) names(taskID, stamp string) bool {
	return d.taskID == taskID && d.stamp == stamp
}

// renderErrorBanner draws a task's active error with its dismiss button.
// The banner stays until a newer summary without the error arrives: the
// server's answer alone does not remove it. The preview is agent text and
// is only ever rendered as text.
func (s *shell) renderErrorBanner(taskID string, e shared.ActiveError) app.UI {
	var r request
	if s.dismissal.names(taskID, e.Stamp) {
		r = s.dismissal.request
	}
	return app.Div().ID("error-banner").Class("banner", "banner-error", "error-banner").Role("alert").Body(
		app.Div().Class("error-banner-body").Body(
			app.Strong().Class("error-banner-title").Text("Agent error"),
			app.If(e.Preview != "", func() app.UI {
				return app.P().Class("error-preview").Text(e.Preview)
			}),
			app.If(r.err != "", func() app.UI {
				return app.P().Class("error-banner-failure").Text("Could not dismiss: " + r.err)
			}),
		),
		busyButton(idErrorDismiss, "Dismiss", "Dismissing…", r.busy).OnClick(s.onDismissError(taskID, e.Stamp)),
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
		if s.dismissal.busy && s.dismissal.names(taskID, stamp) {
			return
		}
		s.dismissal = dismissal{taskID: taskID, stamp: stamp, request: request{busy: true}}
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
	if !s.dismissal.names(req.TaskID, req.Stamp) {
		return
	}
	s.dismissal.answered(err)
}
