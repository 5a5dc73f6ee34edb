package tracker

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// fifo delivers changes through one queue per task, in order; tasks
// deliver concurrently. See the package documentation.
type fifo struct {
	publish func(context.Context, Change) error
	timeout time.Duration
	log     *slog.Logger
	wg      sync.WaitGroup // the drain goroutines

	mu       sync.Mutex // guards the fields below
	queues   map[string][]item
	baseline map[string]View // last delivered view by session
	closed   bool
}

// item is a queued change, or a marker that the session's record retired
// (its baseline is forgotten once everything before it is delivered).
type item struct {
	change  Change
	retired bool
}

func newFIFO(publish func(context.Context, Change) error, timeout time.Duration, log *slog.Logger) *fifo {
	return &fifo{
		publish: publish, timeout: timeout, log: log,
		queues: make(map[string][]item), baseline: make(map[string]View),
	}
}

// push queues a change behind the task's earlier ones.
func (f *fifo) push(c Change) {
	f.enqueue(c.TaskID, item{change: c})
}

// forget queues the retirement of a session's record.
func (f *fifo) forget(taskID, sessionID string) {
	f.enqueue(taskID, item{change: Change{TaskID: taskID, SessionID: sessionID}, retired: true})
}

func (f *fifo) enqueue(taskID string, it item) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q, running := f.queues[taskID]
	if f.closed && !running {
		return
	}
	f.queues[taskID] = append(q, it)
	if !running {
		f.wg.Add(1)
		go f.drain(taskID)
	}
}

// drop discards a removed session's queued changes and baseline.
func (f *fifo) drop(taskID, sessionID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.baseline, sessionID)
	q, ok := f.queues[taskID]
	if !ok {
		return
	}
	kept := q[:0]
	for _, it := range q {
		if it.change.SessionID != sessionID {
			kept = append(kept, it)
		}
	}
	f.queues[taskID] = kept
}

// drain delivers a task's queue until it is empty.
func (f *fifo) drain(taskID string) {
	defer f.wg.Done()
	for {
		f.mu.Lock()
		q := f.queues[taskID]
		if len(q) == 0 {
			delete(f.queues, taskID)
			f.mu.Unlock()
			return
		}
		it := q[0]
		q[0] = item{}
		f.queues[taskID] = q[1:]
		c := it.change
		if it.retired {
			delete(f.baseline, c.SessionID)
			f.mu.Unlock()
			continue
		}
		base, had := f.baseline[c.SessionID]
		f.mu.Unlock()
		if had && base == c.View {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
		err := f.publish(ctx, c)
		cancel()
		if err != nil {
			f.log.Error("publish session activity", "task", c.TaskID, "session", c.SessionID, "err", err)
			continue
		}
		f.mu.Lock()
		f.baseline[c.SessionID] = c.View
		f.mu.Unlock()
	}
}

// close waits for queued changes, including those their publication
// causes; changes of tasks with nothing queued are no longer accepted.
func (f *fifo) close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.wg.Wait()
}
