// Package clocktest provides a clock.Clock that moves only when a test
// says so.
package clocktest

import (
	"slices"
	"sync"
	"time"

	"github.com/herd-dev/herd/server/clock"
)

// Fake is a clock.Clock that moves only when Advance is called; due timer
// callbacks run on the goroutine calling Advance.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	timers []*timer // guarded by mu: neither fired nor stopped
	// scheduled, when set, is told every AfterFunc's delay.
	scheduled chan<- time.Duration
}

type timer struct {
	clock *Fake
	at    time.Time
	f     func()
}

// New returns a Fake at a fixed instant.
func New() *Fake {
	return &Fake{now: time.Date(2026, 8, 2, 9, 0, 0, 0, time.UTC)}
}

// Announce makes every later AfterFunc send its delay on ch (which must
// have room: AfterFunc waits for it).
func (c *Fake) Announce(ch chan<- time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.scheduled = ch
}

// Now implements clock.Clock.
func (c *Fake) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc implements clock.Clock.
func (c *Fake) AfterFunc(d time.Duration, f func()) clock.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &timer{clock: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	if c.scheduled != nil {
		c.scheduled <- d
	}
	return t
}

// Stop implements clock.Timer.
func (t *timer) Stop() bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.timers)
	c.timers = slices.DeleteFunc(c.timers, func(o *timer) bool { return o == t })
	return len(c.timers) < n
}

// Advance moves the clock by d and runs the callbacks of the timers that
// became due, earliest first.
func (c *Fake) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*timer
	c.timers = slices.DeleteFunc(c.timers, func(t *timer) bool {
		if t.at.After(c.now) {
			return false
		}
		due = append(due, t)
		return true
	})
	c.mu.Unlock()
	slices.SortStableFunc(due, func(a, b *timer) int { return a.at.Compare(b.at) })
	for _, t := range due {
		t.f()
	}
}

// Pending counts the timers neither fired nor stopped.
func (c *Fake) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}
