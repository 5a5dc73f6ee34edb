package ui

import (
	"sync/atomic"
	"time"

	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// wakeDelayMs is how long after a dispatch the browser calls back into
// Go: past go-app's next frame, so the frame's timer has expired by then.
const wakeDelayMs = 40

// wakeArmed is set while a wake-up timer is pending; wakeAgain is set when
// a dispatch came while one was, so the timer arms itself once more: every
// dispatch is followed by a wake-up that comes after its frame is due.
var wakeArmed, wakeAgain atomic.Bool

// wakeUp is the timer's callback. Being called from the browser is most
// of its purpose; it arms the next timer when a dispatch asked for one.
var wakeUp app.Func

func init() {
	wakeUp = app.FuncOf(func(app.Value, []app.Value) any {
		if wakeAgain.Swap(false) {
			app.Window().Call("setTimeout", wakeUp, wakeDelayMs)
			return nil
		}
		wakeArmed.Store(false)
		return nil
	})
}

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
	if !app.IsClient {
		return
	}
	if wakeArmed.CompareAndSwap(false, true) {
		app.Window().Call("setTimeout", wakeUp, wakeDelayMs)
		return
	}
	wakeAgain.Store(true)
}

// after runs fn through dispatch once d has passed. ctx.After would
// dispatch from a Go timer with no browser wake-up to follow it.
func after(ctx app.Context, d time.Duration, fn func(app.Context)) {
	ctx.Async(func() {
		time.Sleep(d)
		dispatch(ctx, fn)
	})
}
