package agent

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// The wire-order window. The reader puts a mark after every markEvery
// notifications and lets at most maxMarksAhead marks be outstanding, so at
// most (maxMarksAhead+1)*markEvery notifications are read from the agent
// but not yet delivered to the Handler. That stays well below queueLimit
// and below the 1024 notifications the SDK queues before it closes the
// connection.
const (
	markEvery     = 64
	maxMarksAhead = 4
	queueLimit    = 512
)

// item is one entry of the delivery queue: an event, or a mark when mark
// is not zero.
type item struct {
	ev   Event
	mark uint64
	// reached, when set, is closed once every item before it was
	// delivered; the item carries no event.
	reached chan struct{}
}

// sequencer is the delivery queue between the SDK's notification goroutine
// and the dispatcher goroutine that calls Handler.OnEvent, plus the marks
// that let the wire reader wait for delivery to reach a point in the
// stream. Producers append under mu and signal; the dispatcher takes
// everything queued in one swap and delivers it outside the lock.
type sequencer struct {
	mu sync.Mutex
	// items is the queue, in wire order. Guarded by mu.
	items []item
	// issued is the last mark the reader issued, passed the last mark the
	// dispatcher delivered up to, final the reader's closing mark (zero
	// until the agent's output ends). Guarded by mu.
	issued, passed, final uint64
	// stopped is set when the dispatcher has returned or was aborted;
	// later items are dropped. Guarded by mu.
	stopped bool
	// ready wakes the dispatcher; advanced wakes the reader.
	ready, advanced sync.Cond

	// done is closed when the dispatcher returns.
	done chan struct{}

	// delivered counts events handed to OnEvent; stalls counts the times
	// the reader waited because the Handler was behind; dropped counts
	// events that arrived after delivery stopped.
	delivered, stalls, dropped atomic.Uint64
}

func newSequencer() *sequencer {
	s := &sequencer{done: make(chan struct{})}
	s.ready.L = &s.mu
	s.advanced.L = &s.mu
	return s
}

// push queues an event. It never blocks; it reports false only if the
// queue is over queueLimit, which the window makes impossible unless the
// invariant is broken.
func (s *sequencer) push(ev Event) bool {
	return s.add(item{ev: ev})
}

// pushBarrier queues events followed by a barrier and returns the channel
// closed once they were delivered; it is never closed if delivery stops
// first (sequencer.done is closed then).
func (s *sequencer) pushBarrier(evs []Event) (<-chan struct{}, bool) {
	for _, ev := range evs {
		if !s.push(ev) {
			return nil, false
		}
	}
	reached := make(chan struct{})
	return reached, s.add(item{reached: reached})
}

// deliver queues evs and waits until the Handler has seen them and
// everything queued before them, or delivery stops, or ctx ends.
func (e *Execution) deliver(ctx context.Context, evs ...Event) {
	reached, ok := e.seq.pushBarrier(evs)
	if !ok {
		e.fail(errors.New("agent event queue overflow"))
		return
	}
	select {
	case <-reached:
	case <-e.seq.done:
	case <-ctx.Done():
	}
}

// pushMark queues the mark the reader issued as number k.
func (s *sequencer) pushMark(k uint64) bool {
	return s.add(item{mark: k})
}

func (s *sequencer) add(it item) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		s.dropped.Add(1)
		return true
	}
	if len(s.items) >= queueLimit {
		return false
	}
	s.items = append(s.items, it)
	s.ready.Signal()
	return true
}

// issue returns the next mark number. With window set it first waits until
// fewer than maxMarksAhead marks are outstanding. It reports false if
// delivery stopped.
func (s *sequencer) issue(window bool) (uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if window && s.issued-s.passed >= maxMarksAhead && !s.stopped {
		s.stalls.Add(1)
		for s.issued-s.passed >= maxMarksAhead && !s.stopped {
			s.advanced.Wait()
		}
	}
	if s.stopped {
		return 0, false
	}
	s.issued++
	return s.issued, true
}

// finish issues the closing mark: the dispatcher returns once it passes it.
func (s *sequencer) finish() (uint64, bool) {
	k, ok := s.issue(false)
	if ok {
		s.mu.Lock()
		s.final = k
		s.mu.Unlock()
	}
	return k, ok
}

// caughtUp reports whether every mark issued has been passed.
func (s *sequencer) caughtUp() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.passed == s.issued
}

// waitPassed waits until the dispatcher passed mark k; false if delivery
// stopped first.
func (s *sequencer) waitPassed(k uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.passed < k && !s.stopped {
		s.advanced.Wait()
	}
	return s.passed >= k
}

// abort stops delivery at once: queued events are dropped and every waiter
// returns.
func (s *sequencer) abort() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	s.dropped.Add(uint64(len(s.items)))
	s.items = nil
	s.ready.Broadcast()
	s.advanced.Broadcast()
}

// run delivers queued events to h in order until it passes the closing mark
// or delivery is aborted.
func (s *sequencer) run(h Handler) {
	defer close(s.done)
	var batch []item
	for {
		s.mu.Lock()
		for len(s.items) == 0 && !s.stopped {
			s.ready.Wait()
		}
		if s.stopped {
			s.mu.Unlock()
			return
		}
		batch, s.items = s.items, batch[:0]
		s.mu.Unlock()
		for _, it := range batch {
			if it.reached != nil {
				close(it.reached)
				continue
			}
			if it.mark == 0 {
				h.OnEvent(it.ev)
				s.delivered.Add(1)
				continue
			}
			if s.pass(it.mark) {
				return
			}
		}
		clear(batch)
	}
}

// pass records that every item before mark k was delivered. It reports
// true, and stops delivery, when k is the closing mark.
func (s *sequencer) pass(k uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.passed = k
	last := k == s.final
	if last {
		s.stopped = true
	}
	s.advanced.Broadcast()
	return last
}
