// Package attention decides when a person must be told that an agent needs
// them, and tells them: the workspace feed's inbox events for every open
// tab, and a Web Push to every subscribed device.
//
// Two sources mark a task: a request stored, answered or withdrawn (from
// the session manager, as soon as it commits), and a status summary
// stored (from the projector, with the summary it replaced). Marks
// coalesce per task and one goroutine works them off in marking order,
// reading what is open from the store, so no mark is lost to a full queue
// and a burst of changes to one task costs one pass. For each task the
// worker remembers which requests it announced and which one the devices
// show; what changed since is published and pushed. What arms a request
// notification is the stored pending request, never a session's state.
package attention

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// Publisher delivers an event to the subscribers of a workspace's feed;
// the gateway implements it.
type Publisher interface {
	PublishWorkspace(workspaceID, action string, payload any)
}

// Pusher delivers a push message to every device of a workspace whose
// preferences take its kind. since is when the event it reports happened,
// for the latency from it to the push leaving herd; except, when set, is a
// device to leave out. It is called from the
// worker, may read the store, and must not wait for the delivery.
type Pusher interface {
	Push(ctx context.Context, workspaceID string, msg shared.PushMessage, since time.Time, except string) error
}

// Config configures an Attention.
type Config struct {
	// Store holds the requests and tasks. Required.
	Store *store.Store
	// Pusher receives the push messages; nil pushes nothing.
	Pusher Pusher
	// Logger receives failures; nil discards them.
	Logger *slog.Logger
	// Now stamps push messages; nil means time.Now.
	Now func() time.Time
}

// Retry delays after a failed read: doubling from the first to the last.
// A task whose pass failed maxFailures times in a row is given up, so one
// that cannot be read does not stall the others for ever.
const (
	firstBackoff = 100 * time.Millisecond
	lastBackoff  = 5 * time.Second
	maxFailures  = 8
)

// maxDeciders bounds the decisions remembered for their close.
const maxDeciders = 1024

// Attention works off the marks of tasks. Its methods are safe for
// concurrent use.
type Attention struct {
	cfg Config
	log *slog.Logger
	// pub is set by Start, before the worker starts, and used only by it.
	pub Publisher

	mu sync.Mutex
	// marks holds what happened to each task not yet worked off; queue
	// holds the same tasks in marking order. A mark of a marked task
	// merges into its entry, so both are bounded by the number of tasks.
	// Guarded by mu.
	marks map[string]*mark
	queue []string
	// started is set by Start and closed by Close; drainCtx bounds the
	// work Close waits for. Guarded by mu.
	started, closed bool
	drainCtx        context.Context
	// deciders maps the pending id of a request answered from a
	// notification to the device that answered it, until its close is
	// pushed; at most maxDeciders (then it starts over: a device that
	// misses its exclusion only gets one close too many). Guarded by mu.
	deciders map[string]string

	// draining is set by the worker once Close asked it to finish; only
	// the worker uses it.
	draining bool

	// told is what was announced of each task; only the worker uses it.
	// It holds the tasks that had a request or a summary change worth a
	// pass since start (a few words each), and forgets a deleted task.
	told map[string]*told

	wake chan struct{} // capacity one
	stop chan struct{}
	done chan struct{}
}

// mark is what happened to a task since its last pass.
type mark struct {
	// closed holds the status of requests seen answered or withdrawn, so
	// their inbox events need no read.
	closed map[string]shared.MessageState
	// summary is the first summary replaced since the last pass and next
	// the newest stored; both nil when no summary change marked the task.
	prev *shared.TaskStatusSummary
	next *shared.TaskStatusSummary
	// summaries is true once a summary change marked the task.
	summaries bool
	// running is true when a summary of the mark had the primary session
	// running, so a turn that started and settled between two passes
	// still counts as settled.
	running bool
	// since is the earliest event of the mark.
	since time.Time
	// failures counts the passes of the mark that failed in a row.
	failures int
}

// told is what the feed and the devices were told of a task.
type told struct {
	// open are the requests announced open, by pending id.
	open map[string]shared.InboxRequest
	// shown is the pending id of the request the devices show; empty
	// when they show none.
	shown string
	// fresh is true until the first pass of the task completes: nothing
	// of it was told by this process yet.
	fresh bool
}

// New returns an Attention; Start starts its worker.
func New(cfg Config) *Attention {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Attention{
		cfg:      cfg,
		log:      log,
		marks:    make(map[string]*mark),
		told:     make(map[string]*told),
		deciders: make(map[string]string),
		wake:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
}

// Start starts the worker, which publishes the inbox events through pub;
// Close ends it. Tasks marked before Start are worked off once it runs.
func (a *Attention) Start(pub Publisher) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.started || a.closed {
		return
	}
	a.started, a.pub = true, pub
	go a.run()
}

// Close takes no more marks and works off those left, until ctx ends:
// sessions stopping withdraw their requests, and the devices showing them
// are told before the server goes. Finished turns are not pushed then
// (every running session settles at shutdown). Marks left when ctx ends
// are dropped: a restart cancels every open request anyway. Close is
// safe to call more than once and without Start.
func (a *Attention) Close(ctx context.Context) {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		if a.started {
			<-a.done
		}
		return
	}
	a.closed = true
	started := a.started
	a.drainCtx = ctx
	a.mu.Unlock()
	if !started {
		return
	}
	close(a.stop)
	<-a.done
}

// decided records that a device's decision answers pendingID, so that
// the close of its notification skips that device: it closed its own,
// and a push that shows nothing costs a browser's patience.
func (a *Attention) decided(pendingID, deviceID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.deciders) >= maxDeciders {
		clear(a.deciders)
	}
	a.deciders[pendingID] = deviceID
}

// undecided forgets a decision that did not answer pendingID.
func (a *Attention) undecided(pendingID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.deciders, pendingID)
}

// decider returns and forgets the device that answered pendingID; empty
// when none did from a notification.
func (a *Attention) decider(pendingID string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	id := a.deciders[pendingID]
	delete(a.deciders, pendingID)
	return id
}

// RequestChanged implements sessions.RequestWatch.
func (a *Attention) RequestChanged(msg shared.Message) {
	a.markTask(msg.TaskID, func(m *mark) {
		if msg.Status != shared.MessagePending && msg.PendingID != "" {
			if m.closed == nil {
				m.closed = make(map[string]shared.MessageState)
			}
			m.closed[msg.PendingID] = msg.Status
		}
	})
}

// SummaryChanged implements projector.Watch. Changes that cannot alter
// what a person is told mark nothing.
func (a *Attention) SummaryChanged(taskID, _ string, prev *shared.TaskStatusSummary, next shared.TaskStatusSummary) {
	if prev != nil && !relevant(*prev, next) {
		return
	}
	a.markTask(taskID, func(m *mark) {
		if !m.summaries {
			m.prev, m.summaries = prev, true
		}
		m.next = &next
		if primaryState(next) == shared.SessionRunning || prev != nil && primaryState(*prev) == shared.SessionRunning {
			m.running = true
		}
	})
}

// markTask merges an event into the task's mark and wakes the worker.
func (a *Attention) markTask(taskID string, merge func(*mark)) {
	if taskID == "" {
		return
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return
	}
	m := a.marks[taskID]
	if m == nil {
		m = &mark{since: a.cfg.Now()}
		a.marks[taskID] = m
		a.queue = append(a.queue, taskID)
	}
	merge(m)
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// take removes the oldest mark.
func (a *Attention) take() (string, *mark, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.queue) == 0 {
		return "", nil, false
	}
	id := a.queue[0]
	a.queue[0] = ""
	a.queue = a.queue[1:]
	m := a.marks[id]
	delete(a.marks, id)
	return id, m, true
}

// putBack merges a mark whose pass failed into the task's current mark,
// keeping the older summary and events, so the next pass sees all of it.
func (a *Attention) putBack(taskID string, old *mark) {
	a.markTask(taskID, func(m *mark) {
		if old.since.Before(m.since) {
			m.since = old.since
		}
		for id, st := range old.closed {
			if m.closed == nil {
				m.closed = make(map[string]shared.MessageState)
			}
			if _, ok := m.closed[id]; !ok {
				m.closed[id] = st
			}
		}
		if old.summaries {
			m.prev, m.summaries = old.prev, true
			if m.next == nil {
				m.next = old.next
			}
		}
		m.running = m.running || old.running
		m.failures = max(m.failures, old.failures+1)
	})
}

// run works off marks until Close, then what is left within Close's
// context.
func (a *Attention) run() {
	defer close(a.done)
	for {
		select {
		case <-a.wake:
			a.workOff(context.Background())
		case <-a.stop:
			a.draining = true
			a.workOff(a.drainCtx)
			return
		}
	}
}

// workOff passes every marked task, backing off after a failure. It
// returns when no mark is left, when Close is called during a backoff,
// or, while draining, at the first failure.
func (a *Attention) workOff(ctx context.Context) {
	var backoff time.Duration
	for ctx.Err() == nil {
		id, m, ok := a.take()
		if !ok {
			return
		}
		err := a.pass(ctx, id, m)
		switch {
		case err == nil:
			backoff = 0
			continue
		case a.draining:
			a.log.Error("attention: read what a task needs at shutdown", "task_id", id, "err", err)
			return
		case m.failures+1 >= maxFailures:
			a.log.Error("attention: giving up on a task that cannot be read", "task_id", id, "err", err)
			continue
		}
		a.log.Error("attention: read what a task needs", "task_id", id, "err", err)
		a.putBack(id, m)
		backoff = min(max(2*backoff, firstBackoff), lastBackoff)
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-a.stop:
			t.Stop()
			return
		}
	}
}

// relevant reports whether a summary change can alter what a person is
// told: a request arming or clearing, an error, a pull request's state,
// or the primary session settling.
func relevant(prev, next shared.TaskStatusSummary) bool {
	switch {
	case prev.PendingAction != next.PendingAction:
		return true
	case errorStamp(prev) != errorStamp(next):
		return true
	case prState(prev) != prState(next):
		return true
	}
	return primaryState(prev) != primaryState(next)
}

func errorStamp(s shared.TaskStatusSummary) string {
	if s.ActiveError == nil {
		return ""
	}
	return s.ActiveError.Stamp
}

func prState(s shared.TaskStatusSummary) shared.PullRequestState {
	if s.PullRequest == nil {
		return ""
	}
	return s.PullRequest.AggregateState
}

func primaryState(s shared.TaskStatusSummary) shared.SessionState {
	if s.PrimarySession == nil {
		return ""
	}
	return s.PrimarySession.State
}
