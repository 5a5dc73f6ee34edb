package gitwatch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Defaults of Config's zero fields.
const (
	DefaultSlowInterval = 30 * time.Second
	DefaultFastInterval = 2 * time.Second
	DefaultWorkers      = 4
	DefaultTimeout      = 10 * time.Second
)

// Config configures a Watcher. Only Record is required.
type Config struct {
	// SlowInterval is the time between the end of one observation of a
	// watched repository and the start of the next; zero means
	// DefaultSlowInterval.
	SlowInterval time.Duration
	// FastInterval replaces SlowInterval for a focused repository; zero
	// means DefaultFastInterval.
	FastInterval time.Duration
	// Workers bounds the observations running at once, and so the git
	// processes; zero means DefaultWorkers.
	Workers int
	// Timeout bounds one observation; zero means DefaultTimeout.
	Timeout time.Duration
	// Observe makes an observation; nil means the package's Observe.
	Observe func(context.Context, Target) (Observation, error)
	// Record stores the outcome of an observation of a repository: a
	// success (err nil), or a failure (err set, o carrying only
	// ObservedAt and CPU), which must not be taken for a clean tree. It is
	// called only when the outcome differs from the last one recorded for
	// the repository: the first one, a change of state, a success after a
	// failure, a failure with another message. It is called from a worker
	// goroutine with Run's context, never twice at once for one
	// repository, in the order of the observations, and may call the
	// Watcher's methods. An error means the outcome was not stored: the
	// next observation is recorded even if it is the same.
	Record func(ctx context.Context, repositoryID string, o Observation, err error) error
	// Metrics receives counts; nil means none are kept.
	Metrics *Metrics
}

// ErrRunning is returned by a second call to Run.
var ErrRunning = errors.New("gitwatch: already running")

// Watcher schedules observations of task repositories and records their
// changes; see the package documentation. Its methods may be called from
// any goroutine, before or while Run runs.
type Watcher struct {
	slow, fast, timeout time.Duration
	workers             int
	observe             func(context.Context, Target) (Observation, error)
	record              func(context.Context, string, Observation, error) error
	metrics             *Metrics

	wake  chan struct{} // capacity 1: the schedule changed; wakes the scheduler
	ready chan struct{} // capacity Workers: the queue has work; wakes workers

	mu      sync.Mutex
	repos   map[string]*repo // guarded by mu: repositories watched, queued or being observed
	focus   map[string]int   // guarded by mu: focus count by repository id, absent at zero
	queue   []string         // guarded by mu: repositories waiting for a worker, each at most once
	asked   int              // guarded by mu: how many at the head of queue Refresh asked for
	started bool             // guarded by mu: Run was called
}

// repo is the schedule of one repository. All but recorded are guarded
// by Watcher.mu; recorded belongs to the worker observing the repository,
// and the running flag, set and cleared under mu, hands it over.
type repo struct {
	target  Target
	watched bool      // observed every interval
	queued  bool      // in Watcher.queue
	running bool      // a worker is observing it
	again   bool      // a Refresh came while running: observe once more
	asked   bool      // queued on behalf of Refresh, which Unwatch keeps
	last    time.Time // when its latest observation ended; zero before the first

	recorded outcome // the last outcome Record stored
}

// outcome is an observation's result as far as Record is concerned.
type outcome struct {
	set     bool
	obs     Observation
	failure string // the error's text; empty for a success
}

// New returns a Watcher for cfg. Start its Run to observe anything.
func New(cfg Config) (*Watcher, error) {
	switch {
	case cfg.Record == nil:
		return nil, errors.New("gitwatch: Config.Record is required")
	case cfg.SlowInterval < 0:
		return nil, fmt.Errorf("gitwatch: Config.SlowInterval is negative (%v)", cfg.SlowInterval)
	case cfg.FastInterval < 0:
		return nil, fmt.Errorf("gitwatch: Config.FastInterval is negative (%v)", cfg.FastInterval)
	case cfg.Workers < 0:
		return nil, fmt.Errorf("gitwatch: Config.Workers is negative (%d)", cfg.Workers)
	case cfg.Timeout < 0:
		return nil, fmt.Errorf("gitwatch: Config.Timeout is negative (%v)", cfg.Timeout)
	}
	w := &Watcher{
		slow:    cmp.Or(cfg.SlowInterval, DefaultSlowInterval),
		fast:    cmp.Or(cfg.FastInterval, DefaultFastInterval),
		workers: cmp.Or(cfg.Workers, DefaultWorkers),
		timeout: cmp.Or(cfg.Timeout, DefaultTimeout),
		observe: cfg.Observe,
		record:  cfg.Record,
		metrics: cfg.Metrics,
		repos:   make(map[string]*repo),
		focus:   make(map[string]int),
		wake:    make(chan struct{}, 1),
	}
	w.ready = make(chan struct{}, w.workers)
	if w.observe == nil {
		w.observe = Observe
	}
	return w, nil
}

// Watch observes the repository now and then every interval, until
// Unwatch: the baseline of a running execution. Watching a watched
// repository only replaces its target.
func (w *Watcher) Watch(repositoryID string, t Target) {
	w.mu.Lock()
	r := w.entryLocked(repositoryID, t)
	r.watched = true
	w.mu.Unlock()
	w.wakeScheduler()
}

// Unwatch stops observing the repository: a queued observation is dropped
// unless Refresh asked for it, and one in progress ends and is recorded as
// usual. The last recorded observation stays where Record put it. Call
// Refresh after Unwatch for a final observation of a settled task.
func (w *Watcher) Unwatch(repositoryID string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok := w.repos[repositoryID]
	if !ok {
		return
	}
	r.watched = false
	if r.queued && !r.asked {
		w.queue = slices.DeleteFunc(w.queue, func(id string) bool { return id == repositoryID })
		r.queued = false
	}
	w.dropIfIdleLocked(repositoryID, r)
}

// Focus marks the repositories as looked at: while a repository's focus
// count is positive, a watched one is observed every FastInterval. Each
// Focus of an id must be matched by one Unfocus, so that two browsers
// looking at one session each hold their own focus.
func (w *Watcher) Focus(repositoryIDs []string) {
	w.mu.Lock()
	for _, id := range repositoryIDs {
		w.focus[id]++
	}
	w.mu.Unlock()
	w.wakeScheduler()
}

// Unfocus releases one focus of each repository, ignoring ids without
// any.
func (w *Watcher) Unfocus(repositoryIDs []string) {
	w.mu.Lock()
	for _, id := range repositoryIDs {
		switch n := w.focus[id]; {
		case n > 1:
			w.focus[id] = n - 1
		case n == 1:
			delete(w.focus, id)
		}
	}
	w.mu.Unlock()
	w.wakeScheduler()
}

// Refresh asks for one observation of the repository as soon as a worker
// is free, after earlier refreshes but ahead of scheduled observations,
// whether or not it is watched, without
// changing its focus or whether it is watched. It returns at once; the
// outcome goes to Record if it differs from the last one recorded. Refresh
// requests coalesce: while an observation is queued, it serves them all,
// and while one runs, which may have read the tree before the change that
// prompted the request, exactly one more follows it.
func (w *Watcher) Refresh(repositoryID string, t Target) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.entryLocked(repositoryID, t)
	switch {
	case r.queued:
		if !r.asked {
			i := slices.Index(w.queue, repositoryID)
			w.queue = slices.Insert(slices.Delete(w.queue, i, i+1), w.asked, repositoryID)
			w.asked++
			r.asked = true
		}
		w.metrics.coalesce()
	case r.running:
		if r.again {
			w.metrics.coalesce()
		}
		r.again = true
	default:
		w.enqueueLocked(repositoryID, r, true)
	}
}

// entryLocked returns the repository's schedule, created if needed, with
// its target set to t.
func (w *Watcher) entryLocked(id string, t Target) *repo {
	r, ok := w.repos[id]
	if !ok {
		r = &repo{}
		w.repos[id] = r
	}
	r.target = t
	return r
}

// enqueueLocked queues the repository for a worker: behind the others
// Refresh asked for, ahead of scheduled ones, if asked; last otherwise.
func (w *Watcher) enqueueLocked(id string, r *repo, asked bool) {
	r.queued, r.asked = true, asked
	if asked {
		w.queue = slices.Insert(w.queue, w.asked, id)
		w.asked++
	} else {
		w.queue = append(w.queue, id)
	}
	select {
	case w.ready <- struct{}{}:
	default: // Workers wakes are pending: enough to drain the queue.
	}
}

// dropIfIdleLocked forgets the repository if nothing keeps it: not
// watched, not queued, not being observed.
func (w *Watcher) dropIfIdleLocked(id string, r *repo) {
	if !r.watched && !r.queued && !r.running {
		delete(w.repos, id)
	}
}

// intervalLocked returns the time between observations of the repository.
func (w *Watcher) intervalLocked(id string) time.Duration {
	if w.focus[id] > 0 {
		return w.fast
	}
	return w.slow
}

// wakeScheduler tells the scheduler that the schedule changed.
func (w *Watcher) wakeScheduler() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}
