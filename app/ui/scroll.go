package ui

import (
	"strconv"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/state"
)

// Element ids of the transcript's scrolling.
const (
	idTranscript = "transcript"
	idJumpLatest = "jump-latest"
)

// scrollKey is where the browser's sessionStorage keeps a transcript's
// scroll position while the person is scrolled up, so a reload puts them
// back where they were reading. At the bottom nothing is kept: the reload
// opens at the newest output, following it.
func scrollKey(sessionID string) string { return "herd.scroll." + sessionID }

// listenForScroll follows the transcript's scroll events. Scroll events do
// not bubble, so one listener on the document catches them in the capture
// phase, whichever element go-app rendered the transcript into. It only
// re-renders when following starts or stops.
func (v *sessionView) listenForScroll() {
	v.scroll = app.FuncOf(func(_ app.Value, args []app.Value) any {
		if len(args) == 0 {
			return nil
		}
		el := args[0].Get("target")
		if !el.Truthy() || el.Get("id").String() != idTranscript || v.detail == nil || !v.detail.Loaded() {
			// A transcript emptied for a reload scrolls to its top by
			// itself: that is not the person leaving where they read.
			return nil
		}
		top := el.Get("scrollTop").Float()
		bottom := state.AtBottom(top, el.Get("scrollHeight").Float(), el.Get("clientHeight").Float())
		v.keepScroll(bottom, top)
		if v.follow.Following() != bottom || (bottom && v.follow.Unseen()) {
			dispatch(v.ui(), func(app.Context) { v.follow.Scrolled(bottom) })
		}
		return nil
	})
	app.Window().Get("document").Call("addEventListener", "scroll", v.scroll, map[string]any{"capture": true, "passive": true})
}

// stopListeningForScroll removes the listener and frees its function.
func (v *sessionView) stopListeningForScroll() {
	app.Window().Get("document").Call("removeEventListener", "scroll", v.scroll, map[string]any{"capture": true})
	v.scroll.Release()
}

// keepScroll remembers the open session's scroll position for a reload.
func (v *sessionView) keepScroll(bottom bool, top float64) {
	if v.openID == "" {
		return
	}
	if bottom {
		sessionStorage.Delete(scrollKey(v.openID))
		return
	}
	sessionStorage.Set(scrollKey(v.openID), strconv.FormatFloat(top, 'f', 0, 64))
}

// output is called whenever the transcript changed: while following, the
// newest output scrolls into view once rendered; otherwise the "new
// output" button shows.
func (v *sessionView) output() {
	if v.follow.Output() {
		v.ui().Defer(func(app.Context) { v.scrollToEndIfFollowing() })
	}
}

// scrollToEndIfFollowing scrolls to the newest output unless the person
// scrolled up since the output that asked for it.
func (v *sessionView) scrollToEndIfFollowing() {
	if v.follow.Following() {
		scrollToEnd()
	}
}

// restoreScroll puts a freshly loaded transcript where the person left it
// (a reload while scrolled up), or at its newest output.
func (v *sessionView) restoreScroll() {
	pos := -1.0
	if saved, ok := sessionStorage.Get(scrollKey(v.openID)); ok {
		if p, err := strconv.ParseFloat(saved, 64); err == nil {
			pos = p
		}
	}
	if pos < 0 {
		v.follow.Jump()
		v.ui().Defer(func(app.Context) { v.scrollToEndIfFollowing() })
		return
	}
	v.follow.Scrolled(false)
	v.ui().Defer(func(app.Context) {
		if el := app.Window().GetElementByID(idTranscript); el.Truthy() {
			el.Set("scrollTop", pos)
		}
	})
}

// onJumpLatest is the "new output" button: back to the newest output,
// following it again. Deferred work goes through the view's context: the
// button is gone once rendered.
func (v *sessionView) onJumpLatest(app.Context, app.Event) {
	v.follow.Jump()
	v.ui().Defer(func(app.Context) { scrollToEnd() })
	focus(v.ui(), idComposerInput)
}

// scrollToEnd scrolls the transcript to its newest output.
func scrollToEnd() {
	if el := app.Window().GetElementByID(idTranscript); el.Truthy() {
		el.Set("scrollTop", el.Get("scrollHeight"))
	}
}

// keepDistanceFromEnd keeps what the person is reading in place across
// the next render, which adds content above it (earlier messages).
func keepDistanceFromEnd(ctx app.Context) {
	el := app.Window().GetElementByID(idTranscript)
	if !el.Truthy() {
		return
	}
	fromEnd := el.Get("scrollHeight").Float() - el.Get("scrollTop").Float()
	ctx.Defer(func(app.Context) {
		if el := app.Window().GetElementByID(idTranscript); el.Truthy() {
			el.Set("scrollTop", el.Get("scrollHeight").Float()-fromEnd)
		}
	})
}

// restoreDraft puts the task's kept draft into the composer once it is
// rendered (go-app does not write a textarea's value).
func (v *sessionView) restoreDraft() {
	text := v.input
	v.ui().Defer(func(app.Context) {
		if el := app.Window().GetElementByID(idComposerInput); el.Truthy() && el.Get("value").String() != text {
			el.Set("value", text)
		}
	})
}
