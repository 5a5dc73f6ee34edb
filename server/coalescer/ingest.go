package coalescer

import (
	"context"
	"fmt"
)

// item is one input waiting for Run: a chunk or a barrier.
type item struct {
	text    string // the chunk's bytes; empty for a barrier
	event   any    // the barrier's event
	slot    uint8  // the chunk's kind, as an index into kinds
	barrier bool
}

// itemCost is what a queued item adds to the pending count besides its text:
// the size of an item, rounded up to cover the queue's spare capacity. It
// keeps a flood of tiny chunks or of barriers bounded by MaxPendingBytes too.
const itemCost = 64

// Chunk feeds the next text chunk of kind, in order after every earlier
// Chunk and Barrier call. The chunk goes to the kind's current message, or
// opens a new one if the kind has none since the last barrier. Empty chunks
// are ignored and never open a message. text is treated as opaque bytes:
// a UTF-8 sequence split across chunks is reassembled by concatenation.
//
// Chunk returns at once unless the pending input exceeds MaxPendingBytes;
// then it waits for the Sink to catch up, and returns ctx's error if ctx
// ends first, or ErrClosed if the Coalescer closes first. A chunk that
// returns an error was not accepted; every accepted chunk is published.
func (c *Coalescer) Chunk(ctx context.Context, kind Kind, text string) error {
	slot, ok := kind.slot()
	if !ok {
		return fmt.Errorf("coalescer: chunk of unknown kind %q", kind)
	}
	if text == "" {
		return nil
	}
	return c.enqueue(ctx, item{text: text, slot: uint8(slot)}, len(text)+itemCost)
}

// Barrier feeds an event that must not be reordered with the text around it
// (a tool call or its result, a permission or clarification request, a plan,
// a turn's end, an error, a disconnect, an execution's replacement). Run
// publishes every chunk fed before it, ends the current messages, so that
// the next chunk of either kind opens a new message, and then hands the
// Sink an OpBarrier carrying event.
//
// Barrier waits for room like Chunk and returns the same errors; it returns
// once the barrier is queued, not once the Sink has seen it.
func (c *Coalescer) Barrier(ctx context.Context, event any) error {
	return c.enqueue(ctx, item{event: event, barrier: true}, itemCost)
}

// Close stops accepting input, lets Run publish everything accepted so far,
// and returns once Run has returned. If Run has not been called, Close
// returns at once and a later Run publishes the accepted input and returns.
// Producers waiting for room are released with ErrClosed. Close is
// idempotent; it must not be called from the Sink.
func (c *Coalescer) Close() {
	c.mu.Lock()
	c.closeLocked()
	started := c.started
	c.mu.Unlock()
	c.signal()
	if started {
		<-c.stopped
	}
}

// enqueue appends it to the queue once there is room, and wakes Run.
func (c *Coalescer) enqueue(ctx context.Context, it item, cost int) error {
	c.mu.Lock()
	if c.pending > c.max && !c.closed {
		if err := c.waitLocked(ctx); err != nil {
			c.mu.Unlock()
			return err
		}
	}
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	c.queue = append(c.queue, it)
	c.pending += cost
	wake := !c.woken
	c.woken = true
	c.mu.Unlock()
	if wake {
		c.signal()
	}
	return nil
}

// waitLocked waits until the pending count is back within max or the
// Coalescer closes. It unlocks mu while waiting and holds it on return.
func (c *Coalescer) waitLocked(ctx context.Context) error {
	c.metrics.waited()
	for c.pending > c.max && !c.closed {
		if c.room == nil {
			c.room = make(chan struct{})
		}
		room := c.room
		c.mu.Unlock()
		select {
		case <-room:
		case <-c.done:
		case <-ctx.Done():
			c.mu.Lock()
			return fmt.Errorf("coalescer: wait for the sink: %w", context.Cause(ctx))
		}
		c.mu.Lock()
	}
	return nil
}

// releaseLocked subtracts n from the pending count and lets waiting
// producers retry once it is back within max.
func (c *Coalescer) releaseLocked(n int) {
	c.pending -= n
	if c.room != nil && c.pending <= c.max {
		close(c.room)
		c.room = nil
	}
}

// release is releaseLocked for callers that do not hold mu.
func (c *Coalescer) release(n int) {
	c.mu.Lock()
	c.releaseLocked(n)
	c.mu.Unlock()
}

// closeLocked marks the Coalescer closed; the first call releases waiting
// producers.
func (c *Coalescer) closeLocked() {
	if !c.closed {
		c.closed = true
		close(c.done)
	}
}

// signal wakes Run without blocking; a wake already pending covers this one.
func (c *Coalescer) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}
