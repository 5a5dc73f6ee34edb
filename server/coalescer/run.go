package coalescer

import (
	"context"
	"strings"
	"time"
)

// message is a current message: one per kind between two barriers. It
// belongs to the goroutine running Run.
type message struct {
	key    string
	kind   Kind
	opened bool            // its OpOpen has been handed to the Sink
	buf    strings.Builder // bytes not yet published
	chunks int             // chunks in buf
	last   time.Time       // when its latest publication was handed to the Sink
}

// reason says what triggered a publication; it is the metrics label.
type reason uint8

const (
	reasonOpen     reason = iota // a message's first bytes
	reasonWindow                 // the message's window ended
	reasonBarrier                // a barrier follows
	reasonShutdown               // the Coalescer is closing
	numReasons
)

// smallSpare is the queue capacity, in items, that Run always keeps for
// reuse. A larger array is kept only while it is at least a quarter full,
// so a burst does not regrow the queue every pass, and an idle session
// returns the memory of its last burst to the garbage collector.
const smallSpare = 1024

// Run is the Coalescer's owner: it takes the queued input in one pass per
// wake, publishes through the Sink, and keeps the window timer. It returns
// nil once ctx ends or Close is called, after publishing every accepted
// chunk and barrier; the end of ctx is the shutdown barrier. It returns
// ErrRunning at once if Run was already called.
func (c *Coalescer) Run(ctx context.Context) error {
	c.mu.Lock()
	if c.started {
		c.mu.Unlock()
		return ErrRunning
	}
	c.started = true
	c.mu.Unlock()
	defer close(c.stopped)

	for {
		select {
		case <-ctx.Done():
			c.mu.Lock()
			c.closeLocked()
			c.mu.Unlock()
		case <-c.wake:
		}
		if !c.pass() {
			return nil
		}
	}
}

// pass takes the queue and publishes what is due. It reports false once the
// Coalescer has closed and everything is published.
func (c *Coalescer) pass() bool {
	c.mu.Lock()
	items := c.queue
	c.queue = c.spare
	c.woken = false
	closed := c.closed
	c.releaseLocked(len(items) * itemCost)
	c.mu.Unlock()

	c.take(items)
	clear(items)
	c.spare = nil
	if cap(items) <= smallSpare || len(items) >= cap(items)/4 {
		c.spare = items[:0]
	}

	if closed {
		c.endMessages(reasonShutdown)
		if c.timer != nil {
			c.timer.Stop()
			c.timer = nil
		}
		return false
	}
	c.publishDue()
	return true
}

// take applies items in order: chunks join their kind's current message,
// and a barrier publishes and ends the current messages before passing
// through.
func (c *Coalescer) take(items []item) {
	chunks := 0
	for i := range items {
		it := &items[i]
		if it.barrier {
			c.endMessages(reasonBarrier)
			c.metrics.barrier()
			c.sink(Output{Op: OpBarrier, Event: it.event})
			continue
		}
		chunks++
		m := c.current[it.slot]
		if m == nil {
			m = &message{key: c.newKey(), kind: kinds[it.slot]}
			c.current[it.slot] = m
			c.live = append(c.live, m)
		}
		m.buf.WriteString(it.text)
		m.chunks++
	}
	c.metrics.received(chunks)
}

// endMessages publishes every current message's pending bytes, in the
// order the messages were opened, and ends them.
func (c *Coalescer) endMessages(r reason) {
	for i, m := range c.live {
		c.publish(m, r)
		c.live[i] = nil
	}
	c.live = c.live[:0]
	c.current = [len(kinds)]*message{}
}

// publishDue opens the messages that are not yet open, publishes those
// whose window has ended, and sets the timer for the earliest window still
// running.
func (c *Coalescer) publishDue() {
	var next time.Time
	for _, m := range c.live {
		if m.buf.Len() == 0 {
			continue
		}
		if !m.opened {
			c.publish(m, reasonOpen)
			continue
		}
		due := m.last.Add(c.window)
		if !c.clock.Now().Before(due) {
			c.publish(m, reasonWindow)
			continue
		}
		if next.IsZero() || due.Before(next) {
			next = due
		}
	}
	c.setTimer(next)
}

// publish hands m's pending bytes to the Sink, as its OpOpen if it has not
// been opened, and then releases them from the pending count.
func (c *Coalescer) publish(m *message, r reason) {
	n := m.buf.Len()
	if n == 0 {
		return
	}
	out := Output{Op: OpAppend, Key: m.key, Kind: m.kind, Text: m.buf.String()}
	if !m.opened {
		out.Op, r = OpOpen, reasonOpen
		m.opened = true
	}
	c.metrics.published(r, m.chunks, n)
	m.buf = strings.Builder{}
	m.chunks = 0
	m.last = c.clock.Now()
	c.sink(out)
	c.release(n)
}

// setTimer makes the timer fire at next, or stops it if next is zero.
func (c *Coalescer) setTimer(next time.Time) {
	if c.timer != nil {
		if next.Equal(c.timerAt) {
			return
		}
		c.timer.Stop()
		c.timer = nil
	}
	if next.IsZero() {
		return
	}
	c.timer = c.clock.AfterFunc(next.Sub(c.clock.Now()), c.signal)
	c.timerAt = next
}
