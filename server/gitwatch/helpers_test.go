package gitwatch_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/gitwatch"
)

// fakeGit is a Config.Observe that answers from a table instead of git.
// Targets name repositories by Dir; tests use the repository id.
type fakeGit struct {
	mu      sync.Mutex
	state   map[string]gitwatch.Observation // guarded by mu: what each repository holds
	fail    map[string]error                // guarded by mu: why observing a repository fails
	hold    map[string]chan struct{}        // guarded by mu: observations wait for a value or a close
	calls   []call                          // guarded by mu: observations started, in order
	running map[string]int                  // guarded by mu: observations in progress, by repository
	total   int                             // guarded by mu: observations in progress
	maxEach int                             // guarded by mu: most observations of one repository at once
	maxAll  int                             // guarded by mu: most observations at once
	start   time.Time
}

// call is one observation: which repository, and when it started, from
// the start of the test.
type call struct {
	id string
	at time.Duration
}

func newFakeGit() *fakeGit {
	return &fakeGit{
		state: make(map[string]gitwatch.Observation), fail: make(map[string]error),
		hold: make(map[string]chan struct{}), running: make(map[string]int), start: time.Now(),
	}
}

func (f *fakeGit) observe(ctx context.Context, t gitwatch.Target) (gitwatch.Observation, error) {
	f.mu.Lock()
	f.calls = append(f.calls, call{t.Dir, time.Since(f.start)})
	f.running[t.Dir]++
	f.total++
	f.maxEach = max(f.maxEach, f.running[t.Dir])
	f.maxAll = max(f.maxAll, f.total)
	hold := f.hold[t.Dir]
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.running[t.Dir]--
		f.total--
		f.mu.Unlock()
	}()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return gitwatch.Observation{ObservedAt: time.Now()}, ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	o := f.state[t.Dir]
	o.ObservedAt, o.CPU = time.Now(), time.Millisecond
	return o, f.fail[t.Dir]
}

// set makes a repository hold o from now on.
func (f *fakeGit) set(id string, o gitwatch.Observation) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.state[id] = o
}

// setFail makes observing a repository fail with err, or succeed if nil.
func (f *fakeGit) setFail(id string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail[id] = err
}

// block makes observations of a repository wait, until the returned
// channel gets a value (one observation continues) or is closed (all do).
func (f *fakeGit) block(id string) chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := make(chan struct{})
	f.hold[id] = c
	return c
}

// times returns when the repository's observations started.
func (f *fakeGit) times(id string) []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	var at []time.Duration
	for _, c := range f.calls {
		if c.id == id {
			at = append(at, c.at)
		}
	}
	return at
}

// all returns the observations started, in order.
func (f *fakeGit) all() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]call(nil), f.calls...)
}

// most returns the most observations that ran at once, of one repository
// and of all.
func (f *fakeGit) most() (m struct{ each, all int }) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m.each, m.all = f.maxEach, f.maxAll
	return m
}

// count returns how many observations started.
func (f *fakeGit) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// records keeps what Record received.
type records struct {
	mu   sync.Mutex
	list []record
	fail error // guarded by mu: what Record returns
}

// record is one Record call.
type record struct {
	id        string
	additions int
	err       string
}

func (r *records) record(_ context.Context, id string, o gitwatch.Observation, err error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return r.fail
	}
	rec := record{id: id, additions: o.Additions}
	if err != nil {
		rec.err = err.Error()
	}
	r.list = append(r.list, rec)
	return nil
}

func (r *records) all() []record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]record(nil), r.list...)
}

func (r *records) setFail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail = err
}

// harness is a running Watcher with a fake git, inside a synctest bubble.
type harness struct {
	*gitwatch.Watcher
	git     *fakeGit
	records *records
}

// start runs a Watcher with the fake git; cfg's Observe and Record are
// replaced. It stops when the test ends.
func start(t *testing.T, cfg gitwatch.Config) *harness {
	t.Helper()
	h := &harness{git: newFakeGit(), records: &records{}}
	cfg.Observe, cfg.Record = h.git.observe, h.records.record
	w, err := gitwatch.New(cfg)
	require.NoError(t, err)
	h.Watcher = w
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return h
}

// occupy keeps the Watcher's only worker observing the repository "busy"
// until the returned channel is closed, so that what the test asks for
// next waits in the queue.
func (h *harness) occupy() chan struct{} {
	release := h.git.block("busy")
	h.Refresh("busy", target("busy"))
	synctest.Wait()
	return release
}

// target is the fake target of a repository.
func target(id string) gitwatch.Target { return gitwatch.Target{Dir: id, BaseBranch: "main"} }

// seconds turns whole seconds into durations, for expected start times.
func seconds(s ...int) []time.Duration {
	d := make([]time.Duration, len(s))
	for i, n := range s {
		d[i] = time.Duration(n) * time.Second
	}
	return d
}

var errIndexLock = errors.New("fatal: Unable to create '.git/index.lock': File exists")
