// Package clock is the time source of the parts whose waits tests step
// instead of sleeping through: the stream coalescer and the push sender.
package clock

import "time"

// Clock is a time source; tests inject a fake one (package clocktest).
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f once, on a goroutine of the clock's choosing, after
	// d has elapsed, unless the returned Timer is stopped first.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc call.
type Timer interface {
	// Stop prevents the call if it has not started, reporting whether it
	// did so.
	Stop() bool
}

// System is the Clock of the time package.
type System struct{}

// Now implements Clock.
func (System) Now() time.Time { return time.Now() }

// AfterFunc implements Clock.
func (System) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
