package state

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// hiddenWith returns an Attention in a hidden tab with n requests waiting.
func hiddenWith(kv KV, n int) *Attention {
	a := NewAttention(kv)
	a.SetHidden(true)
	a.SetPending(n)
	return a
}

// flashing reports whether a's title changes by itself.
func flashing(a *Attention) bool {
	_, ok := a.NextFlip(inboxT0)
	return ok
}

func TestTitleCountsWhatWaits(t *testing.T) {
	a := NewAttention(MapKV{})
	assert.Equal(t, "herd", a.Title(inboxT0))
	a.SetPending(3)
	assert.Equal(t, "(3) herd", a.Title(inboxT0))
	assert.Equal(t, 3, a.Pending())
}

func TestARequestInAVisibleTabNeitherSoundsNorFlashes(t *testing.T) {
	a := NewAttention(MapKV{})
	a.SetPending(1)
	assert.False(t, a.Opened(inboxT0))
	assert.False(t, flashing(a))
	_, ticking := a.NextFlip(inboxT0)
	assert.False(t, ticking)
}

func TestARequestInAHiddenTabSoundsAndFlashesTheTitleUntilTheTabIsVisible(t *testing.T) {
	a := hiddenWith(MapKV{}, 2)
	assert.True(t, a.Opened(inboxT0), "one sound")

	for _, tt := range []struct {
		at   time.Duration
		want string
	}{
		{0, FlashTitle},
		{999 * time.Millisecond, FlashTitle},
		{time.Second, "(2) herd"},
		{2 * time.Second, FlashTitle},
		{3*time.Second + 500*time.Millisecond, "(2) herd"},
	} {
		assert.Equal(t, tt.want, a.Title(inboxT0.Add(tt.at)), "at %v", tt.at)
	}
	next, ticking := a.NextFlip(inboxT0.Add(2300 * time.Millisecond))
	assert.True(t, ticking)
	assert.Equal(t, 700*time.Millisecond, next, "the next flip is at the next whole period")

	a.SetHidden(false)
	assert.False(t, flashing(a))
	assert.Equal(t, "(2) herd", a.Title(inboxT0.Add(2*time.Second)), "the visible tab shows the count")
}

func TestABurstOfRequestsSoundsOnceAndKeepsTheFlashPhase(t *testing.T) {
	a := hiddenWith(MapKV{}, 1)
	assert.True(t, a.Opened(inboxT0))
	a.SetPending(2)
	assert.False(t, a.Opened(inboxT0.Add(1500*time.Millisecond)), "within ChimeGap of the last sound")
	assert.Equal(t, "(2) herd", a.Title(inboxT0.Add(1500*time.Millisecond)), "the second open does not restart the flash")
	assert.True(t, a.Opened(inboxT0.Add(ChimeGap)), "past the gap it sounds again")
}

func TestAFlashEndsWhenNothingWaitsAnyMore(t *testing.T) {
	a := hiddenWith(MapKV{}, 1)
	a.Opened(inboxT0)
	a.SetPending(0)
	assert.False(t, flashing(a), "answered on another device")
	assert.Equal(t, "herd", a.Title(inboxT0))
	a.SetPending(1)
	assert.False(t, flashing(a), "a listing that brings requests back is no new open")
}

func TestReducedMotionShowsTheCountSteadily(t *testing.T) {
	a := hiddenWith(MapKV{}, 4)
	a.SetReducedMotion(true)
	assert.True(t, a.Opened(inboxT0), "the sound is not motion")
	for _, at := range []time.Duration{0, time.Second, 2 * time.Second} {
		assert.Equal(t, "(4) herd", a.Title(inboxT0.Add(at)))
	}
	_, ticking := a.NextFlip(inboxT0)
	assert.False(t, ticking, "no timer for a title that does not change")
}

func TestTheOffSwitchSilencesAndIsKept(t *testing.T) {
	kv := MapKV{}
	a := hiddenWith(kv, 1)
	assert.True(t, a.Enabled(), "on by default")
	a.Opened(inboxT0)
	a.SetEnabled(false)
	assert.False(t, flashing(a), "off ends a flash at once")
	assert.False(t, a.Opened(inboxT0.Add(time.Minute)))
	assert.Equal(t, "(1) herd", a.Title(inboxT0.Add(time.Minute)), "the count stays")

	again := hiddenWith(kv, 1)
	assert.False(t, again.Enabled(), "the choice survives a reload")
	assert.False(t, again.Opened(inboxT0))
	again.SetEnabled(true)
	assert.True(t, NewAttention(kv).Enabled())
	assert.True(t, again.Opened(inboxT0))
}
