package state

import (
	"strconv"
	"time"
)

// The timing of in-tab attention.
const (
	// FlashPeriod is how long each of the flashing titles shows.
	FlashPeriod = time.Second
	// ChimeGap is the least time between two sounds: a burst of requests
	// (an agent asking several times in a row, many agents at once) sounds
	// once.
	ChimeGap = 5 * time.Second
)

// AppTitle is the page's title with nothing pending.
const AppTitle = "herd"

// FlashTitle is the title that alternates with the count while a request
// waits in a hidden tab.
const FlashTitle = "● Needs you — " + AppTitle

// attentionKey is the KV key of the off switch.
const attentionKey = "herd.attention"

// Attention decides the page's title and when to sound: the count of
// waiting requests in the title ("(3) herd"), and, when a request opens
// while the tab is hidden, one short sound and a title that flashes
// between FlashTitle and the count until the tab is visible again. With
// reduced motion the title does not flash; it shows the count steadily.
// The person can switch the sound and the flash off (kept in a KV).
//
// It keeps no clock: every method that depends on time takes now, so the
// UI supplies the browser's time and tests a fixed one. Like the Store it
// is used only on the UI goroutine.
type Attention struct {
	kv      KV
	off     bool
	hidden  bool
	reduced bool
	pending int
	// flashing is set from the open of a request in a hidden tab until
	// the tab is visible, nothing is pending any more, or the switch is
	// turned off; flashSince is when it began, the phase's origin.
	flashing   bool
	flashSince time.Time
	// lastChime is when the last sound played; zero for never.
	lastChime time.Time
}

// NewAttention reads the off switch from kv.
func NewAttention(kv KV) *Attention {
	v, _ := kv.Get(attentionKey)
	return &Attention{kv: kv, off: v == "off"}
}

// Enabled reports whether the sound and the flash are on.
func (a *Attention) Enabled() bool { return !a.off }

// SetEnabled turns the sound and the flash on or off, and keeps the
// choice; off ends a flash at once.
func (a *Attention) SetEnabled(on bool) {
	a.off = !on
	if on {
		a.kv.Delete(attentionKey)
		return
	}
	a.kv.Set(attentionKey, "off")
	a.flashing = false
}

// SetHidden tells whether the tab is hidden; a visible tab ends a flash,
// since the person now sees the page.
func (a *Attention) SetHidden(hidden bool) {
	a.hidden = hidden
	if !hidden {
		a.flashing = false
	}
}

// SetReducedMotion tells whether the person asked for reduced motion.
func (a *Attention) SetReducedMotion(reduced bool) { a.reduced = reduced }

// SetPending tells how many requests wait; none left ends a flash (they
// were answered elsewhere, or withdrawn).
func (a *Attention) SetPending(n int) {
	a.pending = n
	if n == 0 {
		a.flashing = false
	}
}

// Pending is the count of waiting requests, for the app icon's badge.
func (a *Attention) Pending() int { return a.pending }

// Opened tells that a request opened at now, and reports whether to play
// the sound: only in a hidden tab, with the switch on, and not within
// ChimeGap of the last sound. It starts the flash, which a request that
// opens during one does not restart.
func (a *Attention) Opened(now time.Time) (chime bool) {
	if a.off || !a.hidden {
		return false
	}
	if !a.flashing {
		a.flashing, a.flashSince = true, now
	}
	if !a.lastChime.IsZero() && now.Sub(a.lastChime) < ChimeGap {
		return false
	}
	a.lastChime = now
	return true
}

// Title is the page's title at now: FlashTitle in the flash's even
// periods, else the count ("(3) herd"), or AppTitle with nothing pending.
func (a *Attention) Title(now time.Time) string {
	if a.flashes() && int64(now.Sub(a.flashSince)/FlashPeriod)%2 == 0 {
		return FlashTitle
	}
	if a.pending == 0 {
		return AppTitle
	}
	return "(" + strconv.Itoa(a.pending) + ") " + AppTitle
}

// NextFlip is how long after now the title changes by itself; false when
// it does not (no flash, or reduced motion), so no timer is needed.
func (a *Attention) NextFlip(now time.Time) (time.Duration, bool) {
	if !a.flashes() {
		return 0, false
	}
	elapsed := max(now.Sub(a.flashSince), 0)
	return FlashPeriod - elapsed%FlashPeriod, true
}

// flashes reports whether the title alternates now.
func (a *Attention) flashes() bool { return a.flashing && !a.reduced && a.pending > 0 }
