package ui

import (
	"time"

	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// The chime: two short sine tones, falling, generated with WebAudio (no
// audio file to fetch or cache).
const (
	chimeHighHz  = 880
	chimeLowHz   = 660
	chimeStep    = 0.12 // seconds until the lower tone
	chimeLength  = 0.32 // seconds
	chimeLoudest = 0.2  // gain
)

// attender is the browser's side of in-tab attention (state.Attention
// decides): it follows the tab's visibility, writes the page's title and
// the app icon's badge, runs the flash's timer and plays the chime. It
// exists only while the shell is mounted in the browser, and is touched
// only on the UI goroutine.
type attender struct {
	ctx app.Context
	// visibility is the document's visibilitychange listener; tick the
	// flash timer's callback; ignore a promise's catch, since a refused
	// badge or audio is no error to report.
	visibility, tick, ignore app.Func
	// timer is the pending flash timer's id; zero when none is armed.
	timer int
	// title and badge are what was last written; badge is -1 before the
	// first write.
	title string
	badge int
	// audio is the AudioContext, created by the first chime.
	audio app.Value
}

// listenForAttention starts following the tab's visibility for s; release
// stops.
func listenForAttention(ctx app.Context, s *shell) *attender {
	a := &attender{ctx: ctx, badge: -1}
	a.visibility = app.FuncOf(func(app.Value, []app.Value) any {
		hidden := documentHidden()
		dispatch(ctx, func(app.Context) {
			s.attention.SetHidden(hidden)
			s.syncAttention()
		})
		return nil
	})
	a.tick = app.FuncOf(func(app.Value, []app.Value) any {
		dispatch(ctx, func(app.Context) {
			a.timer = 0
			s.syncAttention()
		})
		return nil
	})
	a.ignore = app.FuncOf(func(app.Value, []app.Value) any { return nil })
	s.attention.SetHidden(documentHidden())
	app.Window().Get("document").Call("addEventListener", "visibilitychange", a.visibility)
	return a
}

// release stops the listener and the timer, closes the audio and frees
// the functions.
func (a *attender) release() {
	app.Window().Get("document").Call("removeEventListener", "visibilitychange", a.visibility)
	if a.timer != 0 {
		app.Window().Call("clearTimeout", a.timer)
	}
	if a.audio != nil && a.audio.Truthy() {
		quietly(func() { a.audio.Call("close").Call("catch", a.ignore) })
	}
	a.visibility.Release()
	a.tick.Release()
	a.ignore.Release()
}

// syncAttention brings the title, the badge and the flash timer up to
// date with the inbox. Every change of the inbox or of the attention
// state calls it; on the server and in render tests (no attender) it only
// updates the count.
func (s *shell) syncAttention() {
	s.attention.SetPending(s.inbox.Len())
	if s.attend != nil {
		s.attend.show(s)
	}
}

// show writes the title and the badge, and arms the timer of the flash's
// next change (or clears it once the flash has ended).
func (a *attender) show(s *shell) {
	now := time.Now()
	s.attention.SetReducedMotion(reducedMotion())
	if t := s.attention.Title(now); t != a.title {
		a.title = t
		app.Window().Get("document").Set("title", t)
	}
	if n := s.attention.Pending(); n != a.badge {
		a.badge = n
		setBadge(n, a.ignore)
	}
	next, ok := s.attention.NextFlip(now)
	switch {
	case ok && a.timer == 0:
		// A millisecond past the flip, so the tick lands in the new phase.
		a.timer = app.Window().Call("setTimeout", a.tick, next.Milliseconds()+1).Int()
	case !ok && a.timer != 0:
		app.Window().Call("clearTimeout", a.timer)
		a.timer = 0
	}
}

// chime plays the short sound. A browser without WebAudio, or one that
// blocks audio before the person has used the page, stays silent: nothing
// is reported.
func (a *attender) chime() {
	quietly(func() {
		if a.audio == nil || !a.audio.Truthy() {
			ctor := app.Window().Get("AudioContext")
			if !ctor.Truthy() {
				ctor = app.Window().Get("webkitAudioContext")
			}
			if !ctor.Truthy() {
				return
			}
			a.audio = ctor.New()
		}
		ac := a.audio
		if ac.Get("state").String() == "suspended" {
			ac.Call("resume").Call("catch", a.ignore)
		}
		t := ac.Get("currentTime").Float()
		osc, gain := ac.Call("createOscillator"), ac.Call("createGain")
		osc.Set("type", "sine")
		osc.Get("frequency").Call("setValueAtTime", chimeHighHz, t)
		osc.Get("frequency").Call("setValueAtTime", chimeLowHz, t+chimeStep)
		g := gain.Get("gain")
		g.Call("setValueAtTime", 0.0001, t)
		g.Call("exponentialRampToValueAtTime", chimeLoudest, t+0.02)
		g.Call("exponentialRampToValueAtTime", 0.0001, t+chimeLength)
		osc.Call("connect", gain)
		gain.Call("connect", ac.Get("destination"))
		osc.Call("start", t)
		osc.Call("stop", t+chimeLength)
	})
}

// setBadge shows n on the app icon, or clears it for zero, where the
// browser has the Badging API (an installed app, mostly).
func setBadge(n int, ignore app.Func) {
	nav := app.Window().Get("navigator")
	quietly(func() {
		switch {
		case n > 0 && nav.Get("setAppBadge").Truthy():
			nav.Call("setAppBadge", n).Call("catch", ignore)
		case n == 0 && nav.Get("clearAppBadge").Truthy():
			nav.Call("clearAppBadge").Call("catch", ignore)
		}
	})
}

// documentHidden reports whether the tab is hidden.
func documentHidden() bool {
	return app.Window().Get("document").Get("hidden").Bool()
}

// reducedMotion reports whether the person asked for reduced motion.
func reducedMotion() bool {
	mq := app.Window().Get("matchMedia")
	if !mq.Truthy() {
		return false
	}
	return app.Window().Call("matchMedia", "(prefers-reduced-motion: reduce)").Get("matches").Bool()
}

// quietly runs fn, absorbing a JavaScript exception: in Go's js/wasm port
// a throwing call panics, and attention must never break the page.
func quietly(fn func()) {
	defer func() { _ = recover() }()
	fn()
}
