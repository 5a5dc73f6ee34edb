package ui

import (
	"errors"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/wsclient"
	"github.com/herd-dev/herd/shared"
)

// request is what a control shows of the last request it sent: whether it
// is in flight and, once answered, why it failed (empty when it did not).
// The error dismissal, the git refresh and the pull request link each keep
// one beside what it was sent for, and show it only for that.
type request struct {
	busy bool
	err  string
}

// answered records the answer to the request: not busy, and a failure in
// requestFailure's words.
func (r *request) answered(err error) {
	r.busy, r.err = false, ""
	if err != nil {
		r.err = requestFailure(err)
	}
}

// busyButton is a control's text button: text, or busyText while its
// request is in flight, when it is also disabled and marked busy.
func busyButton(id, text, busyText string, busy bool) app.HTMLButton {
	b := app.Button().ID(id).Class("text-button").Type("button")
	if !busy {
		return b.Text(text)
	}
	// Disabled only ever set to true; see renderNewTask.
	return b.Text(busyText).Disabled(true).Aria("busy", "true")
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
