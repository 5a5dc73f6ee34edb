package projector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// Publisher delivers an event to the subscribers of a workspace's feed.
// The projector calls it from its writer goroutine, after the summary it
// carries has been stored; it may call Mark but must not wait for the
// projector (Flush, Rebuild, Dismiss, Close).
type Publisher interface {
	PublishWorkspace(workspaceID, action string, payload any)
}

// Watch is told every summary the projector stores, with the summary it
// replaced (nil when the task had none), from the writer goroutine right
// after it is published; attention implements it. It must not block.
type Watch interface {
	SummaryChanged(taskID, workspaceID string, prev *shared.TaskStatusSummary, next shared.TaskStatusSummary)
}

// Defaults of Config.
const (
	DefaultDebounce  = 25 * time.Millisecond
	DefaultBatchSize = 256
)

// Retry delays after a failed load or write: doubling from the first to
// the last.
const (
	firstBackoff = 100 * time.Millisecond
	lastBackoff  = 10 * time.Second
)

var (
	// ErrNotStarted is returned by Flush, Rebuild and Dismiss before Start.
	ErrNotStarted = errors.New("status summary projector not started")
	// ErrClosed is returned by Flush, Rebuild and Dismiss after Close.
	ErrClosed = errors.New("status summary projector closed")
)

// Config configures a Projector.
type Config struct {
	// Store holds the summaries and their sources. Required.
	Store *store.Store
	// Logger receives projection failures; nil discards them.
	Logger *slog.Logger
	// Debounce is how long the writer waits after the first mark of a quiet
	// period, so that a burst of source events costs one projection per
	// task. Zero means DefaultDebounce.
	Debounce time.Duration
	// BatchSize bounds the tasks projected together, with one batch of
	// reads. Zero means DefaultBatchSize.
	BatchSize int
	// Clock stamps UpdatedAt; nil means time.Now.
	Clock func() time.Time
	// Watch, when set, is told every summary stored.
	Watch Watch
}

// sources is the part of the store the projector uses.
type sources interface {
	SummarySources(ctx context.Context, taskIDs []string) ([]store.SummarySource, error)
	WriteSummary(ctx context.Context, taskID, workspaceID string, expected int64, next shared.TaskStatusSummary) (bool, error)
	DismissError(ctx context.Context, taskID, stamp string) error
	AllTaskIDs(ctx context.Context, n int, fn func(ids []string) error) error
}

// Projector keeps every task's status summary equal to what Derive makes
// of the task's sources. See the package documentation.
type Projector struct {
	st       sources
	log      *slog.Logger
	debounce time.Duration
	batch    int
	now      func() time.Time
	// firstBackoff and lastBackoff bound the retry delay; tests shorten them.
	firstBackoff, lastBackoff time.Duration

	// pub is set by Start, before the writer goroutine starts, and used
	// only by it.
	pub   Publisher
	watch Watch
	// wake has capacity one: a send never blocks, and a pending wake-up
	// stands for any number of signals.
	wake   chan struct{}
	stop   chan struct{} // closed by Close
	done   chan struct{} // closed when the writer goroutine has ended
	cancel context.CancelFunc

	mu sync.Mutex
	// started and closed say where the projector is in its life. Guarded
	// by mu.
	started, closed bool
	// seq counts the marks so far. Guarded by mu.
	seq uint64
	// dirty maps each task waiting for projection to the seq of its
	// earliest mark not yet projected; queue holds the same tasks in
	// marking order. A mark of a dirty task coalesces into its entry, so
	// both are bounded by the number of tasks. Guarded by mu.
	dirty map[string]uint64
	queue []string
	// inflight maps the tasks of the batch being projected to the seq of
	// their earliest mark. Guarded by mu.
	inflight map[string]uint64
	// waiters are the Flush, Rebuild and Dismiss calls waiting for marks
	// to be projected; urgent is true while there are any, and makes the
	// writer skip the debounce. Guarded by mu.
	waiters []*waiter
	urgent  bool
	// lastErr is the latest load or write failure, reported to a waiter
	// whose context ends. Guarded by mu.
	lastErr error

	marks, projected, written, unchanged, conflicts, failures atomic.Uint64
}

// discard is the Publisher of a projector started without one.
type discard struct{}

func (discard) PublishWorkspace(string, string, any) {}

// waiter waits until every mark of its task (every task when task is
// empty) up to seq target has been projected.
type waiter struct {
	task   string
	target uint64
	done   chan struct{}
	err    error
}

// Stats counts what a Projector has done since New.
type Stats struct {
	// Marks counts Mark calls (and the marks of Rebuild and Dismiss).
	Marks uint64
	// Projected counts summaries derived; each is Written or Unchanged,
	// or lost a race (Conflicts) or failed to store.
	Projected uint64
	// Written counts new revisions stored and published.
	Written uint64
	// Unchanged counts semantic no-ops: nothing written or published.
	Unchanged uint64
	// Conflicts counts writes lost to another writer; the task was
	// projected again from fresh reads.
	Conflicts uint64
	// Failures counts failed batch loads and summary writes.
	Failures uint64
}

// New returns a Projector; Start sets it running.
func New(cfg Config) (*Projector, error) {
	switch {
	case cfg.Store == nil:
		return nil, errors.New("projector: a store is required")
	case cfg.Debounce < 0:
		return nil, fmt.Errorf("projector: debounce %v is negative", cfg.Debounce)
	case cfg.BatchSize < 0:
		return nil, fmt.Errorf("projector: batch size %d is negative", cfg.BatchSize)
	}
	p := &Projector{
		st:           cfg.Store,
		log:          cfg.Logger,
		debounce:     cfg.Debounce,
		batch:        cfg.BatchSize,
		now:          cfg.Clock,
		watch:        cfg.Watch,
		firstBackoff: firstBackoff,
		lastBackoff:  lastBackoff,
		wake:         make(chan struct{}, 1),
		stop:         make(chan struct{}),
		done:         make(chan struct{}),
		dirty:        make(map[string]uint64),
		inflight:     make(map[string]uint64),
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.debounce == 0 {
		p.debounce = DefaultDebounce
	}
	if p.batch == 0 {
		p.batch = DefaultBatchSize
	}
	if p.now == nil {
		p.now = time.Now
	}
	return p, nil
}

// Start starts the writer goroutine, which publishes every new summary
// through pub. Tasks marked before Start are projected once it runs. Start
// may be called once; Close ends the goroutine.
func (p *Projector) Start(pub Publisher) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started || p.closed {
		return
	}
	if pub == nil {
		pub = discard{}
	}
	p.started, p.pub = true, pub
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	go p.run(ctx)
}

// Mark records that a source of the task's summary changed. It is O(1)
// and never waits for the database; it is safe from any goroutine,
// including from inside a Publisher. Marks after Close are ignored.
func (p *Projector) Mark(taskID string) {
	p.mark(taskID)
}

// mark records a mark of each task, wakes the writer when one became dirty
// and returns the seq of the last mark.
func (p *Projector) mark(taskIDs ...string) (last uint64) {
	p.marks.Add(uint64(len(taskIDs)))
	p.mu.Lock()
	if p.closed {
		last = p.seq
		p.mu.Unlock()
		return last
	}
	woke := false
	for _, id := range taskIDs {
		p.seq++
		if _, ok := p.dirty[id]; ok {
			continue
		}
		p.dirty[id] = p.seq
		p.queue = append(p.queue, id)
		woke = true
	}
	last = p.seq
	p.mu.Unlock()
	if woke {
		p.signal()
	}
	return last
}

// signal wakes the writer without blocking.
func (p *Projector) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Flush projects every task marked so far and returns when that is done,
// skipping the debounce. A failed load or write is retried with backoff
// until it succeeds or ctx ends; the error then names the failure.
func (p *Projector) Flush(ctx context.Context) error {
	p.mu.Lock()
	target := p.seq
	p.mu.Unlock()
	return p.await(ctx, "", target)
}

// Rebuild projects every task, in batches of Config.BatchSize: it repairs
// missing and stale summaries and publishes each one that changed. The
// server runs it after start-up recovery and before it reports ready.
func (p *Projector) Rebuild(ctx context.Context) error {
	if err := p.usable(); err != nil {
		return err
	}
	err := p.st.AllTaskIDs(ctx, p.batch, func(ids []string) error {
		return p.await(ctx, "", p.mark(ids...))
	})
	if err != nil {
		return fmt.Errorf("rebuild status summaries: %w", err)
	}
	return nil
}

// Dismiss hides the task's agent error stamp and every earlier one (see
// store.DismissError), then projects the task and returns once its new
// summary is stored and published.
func (p *Projector) Dismiss(ctx context.Context, taskID, stamp string) error {
	if err := p.usable(); err != nil {
		return err
	}
	if err := p.st.DismissError(ctx, taskID, stamp); err != nil {
		return err
	}
	return p.await(ctx, taskID, p.mark(taskID))
}

// Close projects what is marked (a failure is logged, not retried), stops
// the writer goroutine and returns when it has ended. Later calls return
// at once.
func (p *Projector) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.done
		return
	}
	p.closed = true
	started := p.started
	p.mu.Unlock()
	if !started {
		close(p.done)
		return
	}
	close(p.stop)
	<-p.done
	p.cancel()
}

// Stats returns the projector's counters.
func (p *Projector) Stats() Stats {
	return Stats{
		Marks: p.marks.Load(), Projected: p.projected.Load(), Written: p.written.Load(),
		Unchanged: p.unchanged.Load(), Conflicts: p.conflicts.Load(), Failures: p.failures.Load(),
	}
}

// usable reports why the projector cannot take work, if it cannot.
func (p *Projector) usable() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closed:
		return ErrClosed
	case !p.started:
		return ErrNotStarted
	}
	return nil
}

// await waits until the marks of task (every task when empty) up to seq
// target have been projected.
func (p *Projector) await(ctx context.Context, task string, target uint64) error {
	p.mu.Lock()
	switch {
	case p.closed:
		p.mu.Unlock()
		return ErrClosed
	case !p.started:
		p.mu.Unlock()
		return ErrNotStarted
	}
	w := &waiter{task: task, target: target, done: make(chan struct{})}
	var oldest uint64
	var pending bool
	if task == "" {
		oldest, pending = p.oldestLocked()
	}
	if p.satisfiedLocked(w, oldest, pending) {
		p.mu.Unlock()
		return nil
	}
	p.waiters = append(p.waiters, w)
	p.urgent = true
	p.mu.Unlock()
	p.signal()

	select {
	case <-w.done:
		return w.err
	case <-ctx.Done():
	}
	p.mu.Lock()
	released := true
	for i, x := range p.waiters {
		if x == w {
			p.waiters = append(p.waiters[:i], p.waiters[i+1:]...)
			released = false
			break
		}
	}
	p.urgent = len(p.waiters) > 0
	last := p.lastErr
	p.mu.Unlock()
	if released {
		// The wait ended as the context did.
		return w.err
	}
	if last != nil {
		return fmt.Errorf("wait for status summaries: %w (last failure: %v)", ctx.Err(), last)
	}
	return fmt.Errorf("wait for status summaries: %w", ctx.Err())
}

// oldestLocked returns the seq of the oldest mark not yet projected, of
// any task; ok is false when every mark has been.
func (p *Projector) oldestLocked() (oldest uint64, ok bool) {
	for _, m := range []map[string]uint64{p.dirty, p.inflight} {
		for _, since := range m {
			if !ok || since < oldest {
				oldest, ok = since, true
			}
		}
	}
	return oldest, ok
}

// satisfiedLocked reports whether w's marks have all been projected, given
// the oldest outstanding mark of any task (pending false: there is none),
// which only a waiter for every task needs.
func (p *Projector) satisfiedLocked(w *waiter, oldest uint64, pending bool) bool {
	if w.task == "" {
		return !pending || oldest > w.target
	}
	for _, m := range []map[string]uint64{p.dirty, p.inflight} {
		if since, ok := m[w.task]; ok && since <= w.target {
			return false
		}
	}
	return true
}

// releaseLocked ends the waits that are over.
func (p *Projector) releaseLocked() {
	if len(p.waiters) == 0 {
		return
	}
	oldest, pending := p.oldestLocked()
	kept := p.waiters[:0]
	for _, w := range p.waiters {
		if p.satisfiedLocked(w, oldest, pending) {
			close(w.done)
			continue
		}
		kept = append(kept, w)
	}
	clear(p.waiters[len(kept):])
	p.waiters = kept
	p.urgent = len(p.waiters) > 0
}
