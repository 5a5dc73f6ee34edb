package push

import (
	"slices"
	"time"

	"github.com/herd-dev/herd/server/clock"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// item is a message waiting for, or being sent to, one device.
type item struct {
	target store.PushTarget
	msg    Message
	// eventAt starts the message's latency.
	eventAt time.Time
	// deadline is when its TTL passes: no request is made after it.
	deadline time.Time
	// attempts counts the requests made for it.
	attempts int
	// reply receives a SendNow's outcome (capacity 1, so a worker never
	// waits for a caller who gave up); nil for Send.
	reply chan error
}

// laneState is where a device's lane is in the worker cycle.
type laneState int

const (
	// laneIdle: nothing waits; the lane is not in Sender.lanes.
	laneIdle laneState = iota
	// laneReady: in Sender.ready, waiting for a worker.
	laneReady
	// laneBusy: a worker is sending its head message.
	laneBusy
	// laneParked: its head message waits for a retry timer.
	laneParked
)

// lane is one device's queue. A lane is in at most one place at a time
// (ready, with a worker, or parked), so one device never has two
// requests in flight and its messages leave in order. Every field is
// guarded by Sender.mu.
type lane struct {
	id    string
	items []*item // waiting, next first
	state laneState
	// timer is the retry timer while parked.
	timer clock.Timer
}

// enqueue adds it to its device's lane: in place of a waiting message of
// the same tag, else at the end, dropping the oldest waiting message when
// the lane is full.
func (s *Sender) enqueue(it *item) error {
	var dropped *item
	var outcome Outcome
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return ErrClosed
	}
	l := s.lanes[it.target.ID]
	if l == nil {
		l = &lane{id: it.target.ID}
		s.lanes[l.id] = l
	}
	// SendNow's messages have a caller waiting for their own answer: they
	// are neither replaced nor dropped, nor replace others.
	replaceable := func(o *item) bool {
		return o.reply == nil && it.reply == nil && it.msg.Payload.Tag != "" && o.msg.Payload.Tag == it.msg.Payload.Tag
	}
	evictable := func(o *item) bool { return o.reply == nil }
	if i := slices.IndexFunc(l.items, replaceable); i >= 0 {
		dropped, outcome = l.items[i], OutcomeReplaced
		l.items[i] = it
	} else if len(l.items) < s.cfg.QueueLength {
		l.items = append(l.items, it)
	} else if i := slices.IndexFunc(l.items, evictable); i >= 0 {
		dropped, outcome = l.items[i], OutcomeOverflow
		l.items = append(slices.Delete(l.items, i, i+1), it)
	} else if it.reply != nil {
		s.mu.Unlock()
		return shared.Errorf(shared.CodeUnavailable, "too many test pushes are waiting for this device")
	} else {
		// Every waiting message is a SendNow's: the new one is the
		// overflow.
		dropped, outcome = it, OutcomeOverflow
	}
	if l.state == laneIdle {
		s.readyLocked(l)
	}
	s.mu.Unlock()
	if dropped != nil {
		s.drop([]*item{dropped}, outcome, nil)
	}
	return nil
}

// readyLocked puts l, which has waiting messages, in the ready queue and
// wakes a worker.
func (s *Sender) readyLocked(l *lane) {
	l.state = laneReady
	s.ready = append(s.ready, l)
	select {
	case s.wake <- struct{}{}:
	default:
		// As many wake-ups are pending as there are workers: one of them
		// will find l.
	}
}

// withdraw removes it from its lane if it is still waiting.
func (s *Sender) withdraw(it *item) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l := s.lanes[it.target.ID]; l != nil {
		l.items = slices.DeleteFunc(l.items, func(o *item) bool { return o == it })
		if len(l.items) == 0 && l.state == laneReady {
			s.ready = slices.DeleteFunc(s.ready, func(o *lane) bool { return o == l })
			l.state = laneIdle
			delete(s.lanes, l.id)
		}
	}
}

// work is a worker: it sends the head message of one ready lane at a
// time until Close, then drains the ready lanes and ends.
func (s *Sender) work() {
	defer s.workers.Done()
	for {
		l, it, exit := s.take()
		switch {
		case exit:
			return
		case it == nil:
			select {
			case <-s.wake:
			case <-s.done:
			}
		default:
			s.deliver(l, it)
		}
	}
}

// take pops the next ready lane's head message, marking the lane busy. It
// returns no item when none is ready, and exit once Close was called and
// none is.
func (s *Sender) take() (l *lane, it *item, exit bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ready) == 0 {
		return nil, nil, s.closing
	}
	l = s.ready[0]
	s.ready[0] = nil
	s.ready = s.ready[1:]
	it = l.items[0]
	l.items[0] = nil
	l.items = l.items[1:]
	l.state = laneBusy
	return l, it, false
}

// finish ends a worker's turn with l: the lane goes back to the ready
// queue if messages wait, or is forgotten.
func (s *Sender) finish(l *lane) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settleLocked(l)
}

// settleLocked makes l ready when messages wait, else idle and forgotten.
func (s *Sender) settleLocked(l *lane) {
	if len(l.items) > 0 {
		s.readyLocked(l)
		return
	}
	l.state = laneIdle
	delete(s.lanes, l.id)
}

// park puts it back at the head of l and holds the lane for after; while
// closing it drops it instead.
func (s *Sender) park(l *lane, it *item, after time.Duration) {
	s.mu.Lock()
	if s.closing {
		s.settleLocked(l)
		s.mu.Unlock()
		s.drop([]*item{it}, OutcomeClosed, ErrClosed)
		return
	}
	l.items = append([]*item{it}, l.items...)
	l.state = laneParked
	s.timers.Add(1)
	l.timer = s.clock.AfterFunc(after, func() {
		defer s.timers.Done()
		s.unpark(l)
	})
	s.mu.Unlock()
}

// unpark makes a parked lane ready when its retry timer fires; after
// Close, when workers may have ended, it drops the lane's messages.
func (s *Sender) unpark(l *lane) {
	s.mu.Lock()
	if l.state != laneParked {
		s.mu.Unlock()
		return
	}
	l.timer = nil
	if !s.closing {
		// A withdrawn SendNow may have emptied it.
		s.settleLocked(l)
		s.mu.Unlock()
		return
	}
	dropped := l.items
	l.items, l.state = nil, laneIdle
	delete(s.lanes, l.id)
	s.mu.Unlock()
	s.drop(dropped, OutcomeClosed, ErrClosed)
}

// dropLane drops every message waiting in l with outcome, for a device
// that is gone.
func (s *Sender) dropLane(l *lane, outcome Outcome, err error) {
	s.mu.Lock()
	dropped := l.items
	l.items = nil
	s.mu.Unlock()
	s.drop(dropped, outcome, err)
}

// drop reports items that were not sent.
func (s *Sender) drop(items []*item, outcome Outcome, err error) {
	for _, it := range items {
		if err == nil {
			err = shared.Errorf(shared.CodeUnavailable, "the push was %s before it was sent", outcome)
		}
		s.report(it, Result{Outcome: outcome, Err: err})
	}
}

// report tells the metrics, the OnResult hook and a waiting SendNow the
// outcome r of it.
func (s *Sender) report(it *item, r Result) {
	r.DeviceID, r.Kind, r.Tag = it.target.ID, it.msg.Payload.Kind, it.msg.Payload.Tag
	r.Attempts = it.attempts
	s.cfg.Metrics.result(r)
	if s.cfg.OnResult != nil {
		s.cfg.OnResult(r)
	}
	if it.reply != nil {
		it.reply <- r.Err
	}
}
