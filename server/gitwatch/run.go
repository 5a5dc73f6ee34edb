package gitwatch

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Run observes repositories until ctx ends, then waits for the
// observations in progress, which the end of ctx cuts short, and returns
// nil. It returns ErrRunning at once if Run was already called.
func (w *Watcher) Run(ctx context.Context) error {
	w.mu.Lock()
	if w.started {
		w.mu.Unlock()
		return ErrRunning
	}
	w.started = true
	w.mu.Unlock()

	var wg sync.WaitGroup
	for range w.workers {
		wg.Go(func() { w.work(ctx) })
	}
	w.schedule(ctx)
	wg.Wait()
	return nil
}

// schedule is the scheduler: it queues each watched repository when its
// interval has passed since its latest observation ended, and sleeps until
// the next one is due or the schedule changes.
func (w *Watcher) schedule(ctx context.Context) {
	timer := time.NewTimer(w.slow)
	defer timer.Stop()
	for {
		if next, ok := w.enqueueDue(time.Now()); ok {
			timer.Reset(time.Until(next))
		} else {
			timer.Stop()
		}
		select {
		case <-ctx.Done():
			return
		case <-w.wake:
		case <-timer.C:
		}
	}
}

// enqueueDue queues the watched repositories due at now that are neither
// queued nor being observed, and returns when the next of the others is
// due, or false if none is waiting for its time. It looks at every
// repository, which for the hundreds a server watches costs microseconds
// per wake.
func (w *Watcher) enqueueDue(now time.Time) (next time.Time, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for id, r := range w.repos {
		if !r.watched || r.queued || r.running {
			continue
		}
		due := r.last.Add(w.intervalLocked(id))
		if !due.After(now) {
			w.enqueueLocked(id, r, false)
			continue
		}
		if !ok || due.Before(next) {
			next, ok = due, true
		}
	}
	return next, ok
}

// work is a worker: it observes queued repositories one at a time until
// ctx ends.
func (w *Watcher) work(ctx context.Context) {
	for ctx.Err() == nil {
		id, r, ok := w.take()
		if !ok {
			select {
			case <-ctx.Done():
			case <-w.ready:
			}
			continue
		}
		w.observeOne(ctx, id, r)
		w.finish(id, r)
	}
}

// take removes the first repository from the queue and marks it as being
// observed, reporting false if the queue is empty.
func (w *Watcher) take() (string, *repo, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.queue) == 0 {
		return "", nil, false
	}
	id := w.queue[0]
	w.queue = slices.Delete(w.queue, 0, 1)
	r := w.repos[id]
	if r.asked {
		w.asked--
	}
	r.queued, r.running, r.asked = false, true, false
	return id, r, true
}

// observeOne observes the repository and records the outcome if it
// differs from the last one recorded. An observation cut short by the end
// of ctx is not recorded.
func (w *Watcher) observeOne(ctx context.Context, id string, r *repo) {
	w.mu.Lock()
	t := r.target
	w.mu.Unlock()

	octx, cancel := context.WithTimeout(ctx, w.timeout)
	o, err := w.observe(octx, t)
	cancel()
	w.metrics.spent(o.CPU)
	if ctx.Err() != nil {
		return
	}
	now := outcome{set: true, obs: o}
	if err != nil {
		now = outcome{set: true, obs: Observation{ObservedAt: o.ObservedAt, CPU: o.CPU}, failure: err.Error()}
	}
	prev := r.recorded
	if prev.set && prev.failure == now.failure && prev.obs.sameState(now.obs) {
		w.metrics.observed(err, false)
		return
	}
	w.metrics.observed(err, true)
	if rerr := w.record(ctx, id, now.obs, err); rerr != nil {
		w.metrics.recordFailed()
		return
	}
	r.recorded = now
}

// finish marks the repository's observation as ended and queues the one a
// Refresh asked for meanwhile.
func (w *Watcher) finish(id string, r *repo) {
	w.mu.Lock()
	r.running = false
	r.last = time.Now()
	if r.again {
		r.again = false
		w.enqueueLocked(id, r, true)
	}
	w.dropIfIdleLocked(id, r)
	w.mu.Unlock()
	w.wakeScheduler()
}
