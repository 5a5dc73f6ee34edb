package coalescer

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fakeClock is a Clock that moves only when Advance is called; due timer
// callbacks run on the goroutine calling Advance.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer // guarded by mu: not yet fired or stopped
}

type fakeTimer struct {
	clock *fakeClock
	at    time.Time
	f     func()
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 8, 2, 9, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{clock: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeTimer) Stop() bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.timers)
	c.timers = slices.DeleteFunc(c.timers, func(o *fakeTimer) bool { return o == t })
	return len(c.timers) < n
}

// Advance moves the clock by d and runs the callbacks of the timers that
// became due, earliest first.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*fakeTimer
	c.timers = slices.DeleteFunc(c.timers, func(t *fakeTimer) bool {
		if t.at.After(c.now) {
			return false
		}
		due = append(due, t)
		return true
	})
	c.mu.Unlock()
	slices.SortStableFunc(due, func(a, b *fakeTimer) int { return a.at.Compare(b.at) })
	for _, t := range due {
		t.f()
	}
}

// record is an Output with the fake time the Sink received it.
type record struct {
	Output
	at time.Time
}

// harness runs one Coalescer with a fake clock and a recording Sink inside
// a synctest bubble.
type harness struct {
	t      *testing.T
	clock  *fakeClock
	c      *Coalescer
	cancel context.CancelFunc
	ran    chan struct{} // closed when Run has returned
	runErr error         // Run's result, once ran is closed

	mu   sync.Mutex
	outs []record // guarded by mu
	seen int      // outputs already returned by settle
}

// startHarness starts a Coalescer configured by cfg (Sink and Clock are
// filled in) and stops it when the test ends. It must run in a bubble.
func startHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	h := &harness{t: t, clock: newFakeClock(), ran: make(chan struct{})}
	cfg.Clock = h.clock
	if cfg.Sink == nil {
		cfg.Sink = h.record
	}
	c, err := New(cfg)
	require.NoError(t, err)
	h.c = c
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() {
		h.runErr = c.Run(ctx)
		close(h.ran)
	}()
	t.Cleanup(h.stop)
	return h
}

func (h *harness) record(o Output) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.outs = append(h.outs, record{Output: o, at: h.clock.Now()})
}

// stop closes the Coalescer and waits for Run, which must succeed; it is
// idempotent.
func (h *harness) stop() {
	h.c.Close()
	h.cancel()
	require.NoError(h.t, h.wait())
}

// wait waits for Run to return and returns its result.
func (h *harness) wait() error {
	<-h.ran
	return h.runErr
}

// advance moves the clock by d once Run is idle, and waits for Run to
// handle the timers that fired.
func (h *harness) advance(d time.Duration) {
	synctest.Wait()
	h.clock.Advance(d)
	synctest.Wait()
}

// settle waits until Run is idle and returns the outputs since the last
// settle.
func (h *harness) settle() []Output {
	synctest.Wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	var outs []Output
	for _, r := range h.outs[h.seen:] {
		outs = append(outs, r.Output)
	}
	h.seen = len(h.outs)
	return outs
}

// records returns every output so far with its time.
func (h *harness) records() []record {
	synctest.Wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.outs)
}

func (h *harness) chunk(kind Kind, text string) {
	h.t.Helper()
	require.NoError(h.t, h.c.Chunk(context.Background(), kind, text))
}

func (h *harness) barrier(event any) {
	h.t.Helper()
	require.NoError(h.t, h.c.Barrier(context.Background(), event))
}

// reassemble joins each message's texts, by key.
func reassemble(outs []Output) map[string]string {
	b := map[string]*strings.Builder{}
	for _, o := range outs {
		if o.Op == OpBarrier {
			continue
		}
		if b[o.Key] == nil {
			b[o.Key] = &strings.Builder{}
		}
		b[o.Key].WriteString(o.Text)
	}
	texts := make(map[string]string, len(b))
	for k, v := range b {
		texts[k] = v.String()
	}
	return texts
}

func open(key string, kind Kind, text string) Output {
	return Output{Op: OpOpen, Key: key, Kind: kind, Text: text}
}

func appendTo(key string, kind Kind, text string) Output {
	return Output{Op: OpAppend, Key: key, Kind: kind, Text: text}
}

func barrierOf(event any) Output {
	return Output{Op: OpBarrier, Event: event}
}
