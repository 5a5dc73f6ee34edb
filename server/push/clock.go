package push

import "time"

// Clock is the time source of a Sender; tests inject a fake one.
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

// systemClock is the Clock of the time package.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
