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
func (tv *taskView) renderErrorBanner(taskID string, e shared.ActiveError) app.UI {
	var r request
	if tv.dismissal.names(taskID, e.Stamp) {
		r = tv.dismissal.request
	}
	return app.Div().ID("error-banner").Class("banner", "banner-error", "error-banner").Role("alert").Body(
		app.Div().Class("error-banner-body").Body(
			app.Strong().Class("error-banner-title").Text(agentErrorWords(e.Preview)),
			app.If(e.Preview != "", func() app.UI {
				return app.Details().Class("plain-error-detail").Body(
					app.Summary().Text("What the agent said"),
					app.P().Class("error-preview").Text(e.Preview),
				)
			}),
			app.If(r.err != "", func() app.UI {
				return app.P().Class("error-banner-failure").Text("Could not dismiss: " + r.err)
			}),
		),
		busyButton(idErrorDismiss, "Dismiss", "Dismissing…", r.busy).OnClick(tv.onDismissError(taskID, e.Stamp), app.EventScope(taskID, e.Stamp)),
	)
}

// onDismissError sends error.dismiss for the error with stamp. Only a
// failure changes what the banner says; success shows once the summary
// without the error arrives.
func (tv *taskView) onDismissError(taskID, stamp string) app.EventHandler {
	return func(app.Context, app.Event) {
		if tv.Shell.link == nil || !tv.mounted {
			return
		}
		if tv.dismissal.busy && tv.dismissal.names(taskID, stamp) {
			return
		}
		tv.dismissal = dismissal{taskID: taskID, stamp: stamp, request: request{busy: true}}
		ctx, client := tv.Shell.link.ui, tv.Shell.link.client
		req := shared.ErrorDismissRequest{TaskID: taskID, Stamp: stamp}
		ctx.Async(func() {
			err := client.Request(context.Background(), shared.ActionErrorDismiss, req, nil)
			dispatch(ctx, func(app.Context) { tv.dismissed(req, err) })
		})
	}
}

// dismissed records the answer to an error.dismiss request, unless a
// newer one was sent since.
func (tv *taskView) dismissed(req shared.ErrorDismissRequest, err error) {
	if !tv.dismissal.names(req.TaskID, req.Stamp) {
		return
	}
	tv.dismissal.answered(err)
}
