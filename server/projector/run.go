package projector

import (
	"context"
	"time"

	"github.com/herd-dev/herd/shared"
)

// run is the writer goroutine: it waits for marks, then projects batches
// until no task is dirty, letting marks gather for the debounce before
// each batch that would not be full. After a failed batch it backs off
// before the next one. When Close is called it drains what is marked and
// ends.
func (p *Projector) run(ctx context.Context) {
	defer close(p.done)
	var backoff time.Duration
	for {
		select {
		case <-p.wake:
		case <-p.stop:
			p.drain(ctx)
			return
		}
		for {
			if !p.debounced() {
				p.drain(ctx)
				return
			}
			ids := p.take()
			if len(ids) == 0 {
				break
			}
			again, err := p.project(ctx, ids, true)
			p.settle(ids, again)
			if err == nil {
				backoff = 0
				continue
			}
			backoff = min(max(2*backoff, p.firstBackoff), p.lastBackoff)
			if !p.pause(backoff) {
				p.drain(ctx)
				return
			}
		}
	}
}

// debounced waits for the debounce to pass, so that a burst of marks
// costs one projection per task; it does not wait while no task is dirty,
// while a full batch is, or while a waiter wants the work done now. It
// reports false when Close is called meanwhile.
func (p *Projector) debounced() bool {
	if !p.shouldWait() {
		return true
	}
	t := time.NewTimer(p.debounce)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			return true
		case <-p.stop:
			return false
		case <-p.wake:
			if !p.shouldWait() {
				return true
			}
		}
	}
}

// shouldWait reports whether the next batch is worth waiting for.
func (p *Projector) shouldWait() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.urgent && len(p.queue) > 0 && len(p.queue) < p.batch
}

// pause waits d after a failure; waiters do not cut it short, so a failing
// database is not hammered. It reports false when Close is called
// meanwhile.
func (p *Projector) pause(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-p.stop:
		return false
	}
}

// take moves up to a batch of dirty tasks, oldest marks first, in flight.
func (p *Projector) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := min(p.batch, len(p.queue))
	if n == 0 {
		return nil
	}
	ids := make([]string, n)
	copy(ids, p.queue)
	clear(p.queue[:n])
	p.queue = p.queue[n:]
	if len(p.queue) == 0 {
		p.queue = nil
	}
	for _, id := range ids {
		p.inflight[id] = p.dirty[id]
		delete(p.dirty, id)
	}
	return ids
}

// settle ends the flight of a batch: the tasks in again are dirty once
// more, keeping the seq of their earliest unprojected mark so that waiters
// wait for the new projection, and the waiters the batch satisfied are
// released.
func (p *Projector) settle(ids, again []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, id := range again {
		since := p.inflight[id]
		if existing, ok := p.dirty[id]; ok {
			p.dirty[id] = min(existing, since)
			continue
		}
		p.dirty[id] = since
		p.queue = append(p.queue, id)
	}
	for _, id := range ids {
		delete(p.inflight, id)
	}
	p.releaseLocked()
}

// drain projects everything marked, without debounce and without retrying
// failures, then releases every waiter: Close's last pass.
func (p *Projector) drain(ctx context.Context) {
	for {
		ids := p.take()
		if len(ids) == 0 {
			break
		}
		again, _ := p.project(ctx, ids, false)
		p.settle(ids, again)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, w := range p.waiters {
		w.err = ErrClosed
		close(w.done)
	}
	p.waiters, p.urgent = nil, false
}

// project loads the sources of a batch of tasks in one go, derives each
// summary and stores and publishes the ones that changed. It returns the
// tasks to project again: one whose write lost to another writer, to be
// recomputed from fresh reads rather than written from stale ones, and one
// it wrote, to be checked once more (see the package documentation,
// "Several writers"); with retry, also those of a failed load or write,
// and the error, after which the caller backs off. Tasks that no longer
// exist are dropped.
func (p *Projector) project(ctx context.Context, ids []string, retry bool) (again []string, err error) {
	srcs, err := p.st.SummarySources(ctx, ids)
	if err != nil {
		p.failed(err)
		p.log.ErrorContext(ctx, "load status summary sources", "task_ids", ids, "err", err)
		if retry {
			again = ids
		}
		return again, err
	}
	var firstErr error
	for i := range srcs {
		src := &srcs[i]
		next := Derive(*src)
		p.projected.Add(1)
		if src.Current != nil && sameSummary(next, *src.Current) {
			p.unchanged.Add(1)
			continue
		}
		now := p.now().UTC().Truncate(time.Microsecond)
		next.Revision = src.Revision + 1
		if src.Current == nil {
			// The row went missing: clients may hold any revision it had.
			// Restart above all of them from the clock in microseconds; a
			// task's summaries are written one at a time, each taking
			// longer than a microsecond, so no counter overtook the clock.
			next.Revision = max(next.Revision, now.UnixMicro())
		}
		next.UpdatedAt = now
		ok, err := p.st.WriteSummary(ctx, src.TaskID, src.WorkspaceID, src.Revision, next)
		switch {
		case err != nil:
			p.failed(err)
			p.log.ErrorContext(ctx, "store status summary", "task_id", src.TaskID, "revision", next.Revision, "err", err)
			if retry {
				again = append(again, src.TaskID)
			}
			if firstErr == nil {
				firstErr = err
			}
		case !ok:
			p.conflicts.Add(1)
			again = append(again, src.TaskID)
		default:
			p.written.Add(1)
			p.pub.PublishWorkspace(src.WorkspaceID, shared.NotifyTaskStatusSummaryUpdated, shared.StatusSummaryEvent{
				TaskID: src.TaskID, WorkspaceID: src.WorkspaceID, StatusSummary: next,
			})
			if p.watch != nil {
				p.watch.SummaryChanged(src.TaskID, src.WorkspaceID, src.Current, next)
			}
			again = append(again, src.TaskID)
		}
	}
	return again, firstErr
}

// failed counts a failure and keeps it for waiters whose context ends.
func (p *Projector) failed(err error) {
	p.failures.Add(1)
	p.mu.Lock()
	p.lastErr = err
	p.mu.Unlock()
}
