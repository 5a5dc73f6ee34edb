package projector

import (
	"context"
	"time"

	"github.com/herd-dev/herd/shared"
)

// run is the writer goroutine: it waits for marks, lets a burst gather for
// the debounce, then projects batches until no task is dirty. After a
// failed batch it backs off before the next one. When Close is called it
// drains what is marked and ends.
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
		if !p.debounced() {
			p.drain(ctx)
			return
		}
		for {
			ids := p.take()
			if len(ids) == 0 {
				break
			}
			err := p.project(ctx, ids, true)
			p.settle(ids)
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

// debounced waits for the debounce to pass, or less when a waiter wants
// the work done now. It reports false when Close is called meanwhile.
func (p *Projector) debounced() bool {
	if p.isUrgent() {
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
			if p.isUrgent() {
				return true
			}
		}
	}
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

func (p *Projector) isUrgent() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.urgent
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

// requeue marks tasks in flight dirty again, keeping the seq of their
// earliest unprojected mark so that waiters wait for the new projection.
func (p *Projector) requeue(ids ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, id := range ids {
		since := p.inflight[id]
		if existing, ok := p.dirty[id]; ok {
			p.dirty[id] = min(existing, since)
			continue
		}
		p.dirty[id] = since
		p.queue = append(p.queue, id)
	}
}

// settle ends the flight of a batch and releases the waiters it satisfied.
func (p *Projector) settle(ids []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
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
		p.project(ctx, ids, false)
		p.settle(ids)
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
// summary and stores and publishes the ones that changed. A task whose
// write lost to another writer, or that it wrote, is queued again: the
// first is recomputed from fresh reads rather than written from stale ones,
// and the second is checked once more (see the package documentation,
// "Several writers"). With retry, the tasks of a failed load or write are
// queued again too; the caller backs off before the next batch. Tasks that
// no longer exist are dropped.
func (p *Projector) project(ctx context.Context, ids []string, retry bool) error {
	srcs, err := p.st.SummarySources(ctx, ids)
	if err != nil {
		p.failed(err)
		p.log.ErrorContext(ctx, "load status summary sources", "task_ids", ids, "err", err)
		if retry {
			p.requeue(ids...)
		}
		return err
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
		next.Revision = src.Revision + 1
		next.UpdatedAt = p.now().UTC().Truncate(time.Microsecond)
		ok, err := p.st.WriteSummary(ctx, src.TaskID, src.WorkspaceID, src.Revision, next)
		switch {
		case err != nil:
			p.failed(err)
			p.log.ErrorContext(ctx, "store status summary", "task_id", src.TaskID, "revision", next.Revision, "err", err)
			if retry {
				p.requeue(src.TaskID)
			}
			if firstErr == nil {
				firstErr = err
			}
		case !ok:
			p.conflicts.Add(1)
			p.requeue(src.TaskID)
		default:
			p.written.Add(1)
			p.pub.PublishWorkspace(src.WorkspaceID, shared.NotifyTaskStatusSummaryUpdated, shared.StatusSummaryEvent{
				TaskID: src.TaskID, WorkspaceID: src.WorkspaceID, StatusSummary: next,
			})
			p.requeue(src.TaskID)
		}
	}
	return firstErr
}

// failed counts a failure and keeps it for waiters whose context ends.
func (p *Projector) failed(err error) {
	p.failures.Add(1)
	p.mu.Lock()
	p.lastErr = err
	p.mu.Unlock()
}
