package ui

import (
	"sync/atomic"

	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// wakeDelayMs is how long after a dispatch the browser calls back into
// Go: past go-app's next frame, so the frame's timer has expired by then.
const wakeDelayMs = 40

// wakeArmed is set while a wake-up timer is pending; one at a time
// suffices, however many dispatches it follows.
var wakeArmed atomic.Bool

// wakeUp is the timer's callback. Being called from the browser is its
// whole purpose; it only lets the next timer be armed.
var wakeUp = app.FuncOf(func(app.Value, []app.Value) any {
	wakeArmed.Store(false)
	return nil
})

// dispatch is ctx.Dispatch, followed by a browser timer that calls into
// Go shortly after. go-app renders a dispatch's changes on its next frame,
// which a Go timer starts; in the browser, a Go timer armed by a goroutine
// that a browser callback woke (a request's answer, a notification) was
// seen not to fire until the next browser event, so the change it carried
// stayed unrendered (a session opened from its tab kept saying "Loading
// the transcript…" until the mouse moved). A call from a browser timer
// lets Go run its expired timers, so the frame comes. Every dispatch of
// this package goes through here.
func dispatch(ctx app.Context, fn func(app.Context)) {
	ctx.Dispatch(fn)
	if app.IsClient && wakeArmed.CompareAndSwap(false, true) {
		app.Window().Call("setTimeout", wakeUp, wakeDelayMs)
	}
}
