package tracker

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/herd-dev/herd/shared"
)

// Capabilities are what an execution's adapter attests (see
// agent.Capabilities); they are fixed when the execution attaches.
type Capabilities struct {
	// AttestsBackground lets the execution's attested frames register
	// background work and its model-cycle ends yield the foreground.
	AttestsBackground bool
	// Handoff says the provider accepts a new human prompt while an
	// earlier prompt request is still open, once the foreground has
	// yielded. It matters only with Config.Handoff on.
	Handoff bool
}

// Config configures a Tracker.
type Config struct {
	// Publish delivers one change of a session's activity. It runs on the
	// task's publication goroutine, never concurrently for one task; an
	// error keeps the change undelivered, so the next change of the session
	// is published even if it equals this one.
	Publish func(ctx context.Context, c Change) error
	// Handoff turns on the Claude background prompt handoff experiment
	// (HERD_FEATURES_CLAUDE_BACKGROUND_PROMPT_HANDOFF); it is read once.
	Handoff bool
	// PublishTimeout bounds one Publish call; 0 means 10 s.
	PublishTimeout time.Duration
	Logger         *slog.Logger
}

// Change is one published change of a session's activity.
type Change struct {
	TaskID, SessionID string
	View              View
}

// View is a session's activity at one moment, captured whole.
type View struct {
	// Generating is set while the foreground owns the conversation: a
	// claimed prompt before its human-origin cycle ended, or top-level
	// output of the agent.
	Generating bool
	// Claimed is set while a prompt claim is held.
	Claimed bool
	// Background is set while a registered background workload is live.
	Background bool
	// Subagents counts the live subagent registrations.
	Subagents int
	// Attested is set when every attached execution attests background
	// work.
	Attested bool
	// Handoff is set when every attached execution also attests the
	// handoff.
	Handoff bool
}

// Exec is an attached execution's handle; its frames and teardown name it.
type Exec struct {
	session string
	record  uint64
	id      uint64
}

// Claim is a held prompt claim; Dispatched, Complete and Release name it.
type Claim struct {
	session string
	record  uint64
	gen     uint64
}

// Generation is the claim's admission generation, rising by one per claim
// of the session's record.
func (c Claim) Generation() uint64 { return c.gen }

// Tracker holds the activity record of every session with a live
// execution or a prompt in flight.
type Tracker struct {
	cfg Config
	log *slog.Logger
	pub *fifo

	next atomic.Uint64 // last record or execution identity handed out

	mu      sync.Mutex // guards records
	records map[string]*record
}

// New returns a Tracker.
func New(cfg Config) (*Tracker, error) {
	if cfg.Publish == nil {
		return nil, errors.New("tracker: Publish is required")
	}
	if cfg.PublishTimeout <= 0 {
		cfg.PublishTimeout = 10 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	t := &Tracker{cfg: cfg, log: cfg.Logger, records: make(map[string]*record)}
	t.pub = newFIFO(cfg.Publish, cfg.PublishTimeout, cfg.Logger)
	return t, nil
}

// Close waits for queued publications to be delivered; later changes of
// a task with nothing queued are not published.
func (t *Tracker) Close() { t.pub.close() }

// errPromptInProgress refuses a claim while another is held.
func errPromptInProgress(sessionID string) error {
	return shared.Errorf(shared.CodePromptInProgress, "session %q is already handling a prompt", sessionID)
}

// acquire returns the session's live record with its mutex held, creating
// it when create is set, or nil. The record's mutex is taken before the
// map's is released, so retirement cannot detach it meanwhile.
func (t *Tracker) acquire(sessionID, taskID string, create bool) *record {
	t.mu.Lock()
	r := t.records[sessionID]
	if r == nil {
		if !create {
			t.mu.Unlock()
			return nil
		}
		r = newRecord(t.next.Add(1), sessionID, taskID)
		t.records[sessionID] = r
	}
	r.mu.Lock()
	t.mu.Unlock()
	return r
}

// release unlocks r after publishing its change, if any, and retires it
// when it has become idle.
func (t *Tracker) release(r *record, before View) {
	if v := r.viewLocked(); v != before {
		t.pub.push(Change{TaskID: r.task, SessionID: r.session, View: v})
	}
	idle := r.idleLocked()
	r.mu.Unlock()
	if idle {
		t.retire(r)
	}
}

// retire detaches r if it is still the session's record and still idle.
func (t *Tracker) retire(r *record) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	if t.records[r.session] != r || !r.idleLocked() {
		return
	}
	r.dead = true
	delete(t.records, r.session)
	t.pub.forget(r.task, r.session)
}

// Attach registers a new execution of a session and returns its handle.
func (t *Tracker) Attach(sessionID, taskID string, caps Capabilities) Exec {
	r := t.acquire(sessionID, taskID, true)
	before := r.viewLocked()
	id := t.next.Add(1)
	r.execs[id] = caps
	e := Exec{session: sessionID, record: r.id, id: id}
	t.release(r, before)
	return e
}

// Detach retires everything an execution owned: its tool ownership, its
// background registrations and its claim on the record. It is idempotent.
func (t *Tracker) Detach(e Exec) {
	r := t.acquire(e.session, "", false)
	if r == nil {
		return
	}
	before := r.viewLocked()
	if r.id == e.record {
		r.detachLocked(e.id)
	}
	t.release(r, before)
}

// Frame records one agent frame of an execution. A frame of an execution
// that is no longer attached changes nothing.
func (t *Tracker) Frame(e Exec, f Frame) {
	r := t.acquire(e.session, "", false)
	if r == nil {
		return
	}
	before := r.viewLocked()
	if caps, ok := r.execs[e.id]; ok && r.id == e.record {
		r.frameLocked(e.id, caps, f)
	}
	t.release(r, before)
}

// Claim takes the session's prompt gate: exactly one of any number of
// concurrent callers gets the claim; the others get prompt_in_progress
// until it is completed or released. The claim marks the foreground
// generating.
func (t *Tracker) Claim(sessionID, taskID string) (Claim, error) {
	r := t.acquire(sessionID, taskID, true)
	before := r.viewLocked()
	if r.claim != nil {
		t.release(r, before)
		return Claim{}, errPromptInProgress(sessionID)
	}
	c := r.claimLocked()
	t.release(r, before)
	return c, nil
}

// Handoff passes the held claim of a session to a new human prompt, under
// the experiment only: the adapter must attest the handoff, the held
// prompt must have been dispatched and its human-origin model cycle ended
// (generation-matched), the foreground must be idle and background work
// live. The earlier claim becomes stale. Otherwise it returns
// prompt_in_progress and changes nothing.
func (t *Tracker) Handoff(sessionID string) (Claim, error) {
	if !t.cfg.Handoff {
		return Claim{}, errPromptInProgress(sessionID)
	}
	r := t.acquire(sessionID, "", false)
	if r == nil {
		return Claim{}, errPromptInProgress(sessionID)
	}
	before := r.viewLocked()
	if !r.handoffReadyLocked() {
		t.release(r, before)
		return Claim{}, errPromptInProgress(sessionID)
	}
	c := r.claimLocked()
	t.release(r, before)
	return c, nil
}

// Dispatched records that the claimed prompt reached the agent. It
// reports false for a stale claim.
func (t *Tracker) Dispatched(c Claim) bool {
	return t.withClaim(c, func(r *record) { r.claim.dispatched = true })
}

// Complete ends the claimed turn: the foreground is idle again and the
// gate opens; background registrations stay. It reports false, changing
// nothing, for a stale claim (a handed-off or retired one).
func (t *Tracker) Complete(c Claim) bool {
	return t.withClaim(c, func(r *record) {
		r.claim = nil
		r.generating = false
		r.yielded = 0
	})
}

// Release gives back a claim whose prompt never reached the agent. The
// gate opens; the foreground stays generating only if foreground output
// arrived after the claim was taken. It reports false for a stale claim.
func (t *Tracker) Release(c Claim) bool {
	return t.withClaim(c, func(r *record) {
		r.generating = r.epoch != r.claim.epoch
		r.claim = nil
		r.yielded = 0
	})
}

// Current reports whether c is the session's held claim.
func (t *Tracker) Current(c Claim) bool {
	return t.withClaim(c, nil)
}

// withClaim applies f (when not nil) to the session's record if c is its
// held claim, publishing what f changed, and reports whether it is.
func (t *Tracker) withClaim(c Claim, f func(*record)) bool {
	r := t.acquire(c.session, "", false)
	if r == nil {
		return false
	}
	before := r.viewLocked()
	ok := r.currentLocked(c)
	if ok && f != nil {
		f(r)
	}
	t.release(r, before)
	return ok
}

// Cancel retires every background registration of the session (its
// subagents, background shells and monitors) and what their tool calls
// owned, as an explicit cancellation's full cleanup (spec 000): the agent
// stops that work without reporting each piece's end. The claim and the
// attached executions stay; the turn settles as usual.
func (t *Tracker) Cancel(sessionID string) {
	r := t.acquire(sessionID, "", false)
	if r == nil {
		return
	}
	before := r.viewLocked()
	r.cancelWorkLocked()
	t.release(r, before)
}

// Remove forgets a session at once (it was deleted): its record is
// detached whatever it holds, outstanding claims and executions become
// stale, and its queued publications are dropped.
func (t *Tracker) Remove(sessionID string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.records[sessionID]
	if r == nil {
		return
	}
	r.mu.Lock()
	r.dead = true
	delete(t.records, sessionID)
	r.mu.Unlock()
	t.pub.drop(r.task, sessionID)
}

// View returns a session's activity; a session without a record has none.
func (t *Tracker) View(sessionID string) View {
	r := t.acquire(sessionID, "", false)
	if r == nil {
		return View{}
	}
	defer r.mu.Unlock()
	return r.viewLocked()
}

// ActivityOf returns what a session in state with activity v shows (spec
// 001): its foreground activity and its live subagent count. A RUNNING
// session is generating; under the experiment, one whose executions all
// attest background work shows background while its foreground has
// yielded to live background work; other states show none.
func (t *Tracker) ActivityOf(v View, state shared.SessionState) (shared.ForegroundActivity, int) {
	switch {
	case state != shared.SessionRunning:
		return "", v.Subagents
	case t.cfg.Handoff && v.Attested && !v.Generating && v.Background:
		return shared.ActivityBackground, v.Subagents
	default:
		return shared.ActivityGenerating, v.Subagents
	}
}
