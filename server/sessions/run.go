package sessions

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/coalescer"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/server/tracker"
	"github.com/herd-dev/herd/shared"
)

// run is the live side of one session: its agent execution, its stream
// coalescer and its admission gate. At most one turn runs at a time.
type run struct {
	m      *Manager
	id     string
	taskID string

	mu sync.Mutex // guards the fields below
	// state and activity mirror the stored session at revision rev.
	state    shared.SessionState
	activity store.Activity
	rev      int64
	profile  string
	exec     *agent.Execution
	// execGone is closed once exec's watch has finished with it.
	execGone chan struct{}
	co       *coalescer.Coalescer
	// texec is exec's handle in the tracker.
	texec tracker.Exec
	// waiting holds the agent's unanswered requests by pending id.
	waiting  map[string]*waiter
	stopping bool
	// turns counts the turn goroutines in flight (see startTurnLocked).
	turns int
	// agentMessage is the agent's id (ACP messageId) of the newest text
	// or reasoning chunk that carried one.
	agentMessage string
	// configMu orders the stores of the session's configuration;
	// configAt is the Seq of the latest state stored, config that state's
	// configuration (see storeConfig).
	configMu sync.Mutex
	configAt uint64
	config   shared.SessionConfig
	// startMu makes one caller at a time start the agent (see
	// ensureExecution): a turn, or a configuration change.
	startMu sync.Mutex
	// prompt is the id of the sent prompt whose turn holds the
	// foreground, until the turn ends or its mark is written (see
	// takePrompt); a handed-off turn's successor replaces it.
	prompt string
	// unsent is the prompt of the turn that has begun but not yet handed
	// its prompt to the agent (it waits for the agent to start, or for the
	// turn's start to be recorded); unsentCancelled says the person
	// cancelled meanwhile, so the prompt is never sent (see
	// cancelUnsent).
	unsent          string
	unsentCancelled bool
}

// waiter is an agent request waiting for the person's answer.
type waiter struct {
	kind    shared.MessageType
	options []string // permission option ids
	answer  chan string
}

func newRun(m *Manager, s shared.Session) *run {
	return &run{
		m: m, id: s.ID, taskID: s.TaskID,
		state: s.State, activity: storedActivity(s), rev: s.StateRevision,
		profile: s.AgentProfileID, waiting: make(map[string]*waiter),
	}
}

// remember mirrors a stored copy of the session unless the mirror is
// already newer.
func (r *run) remember(s shared.Session) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.StateRevision >= r.rev {
		r.state, r.activity, r.rev = s.State, storedActivity(s), s.StateRevision
	}
}

// revision returns the state_revision the mirror holds.
func (r *run) revision() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rev
}

// mirror returns the session's state and activity as last stored.
func (r *run) mirror() (shared.SessionState, store.Activity) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state, r.activity
}

// storedActivity returns a session's stored activity.
func storedActivity(s shared.Session) store.Activity {
	return store.Activity{Foreground: s.ForegroundActivity, Subagents: s.ActiveSubagentCount}
}

// begin starts a new session's agent in the background, then dispatches
// prompt (when given) once the agent is ready.
func (r *run) begin(profile agent.Profile, prompt string) {
	r.m.goTracked(func() {
		ctx := r.m.ctx
		if _, err := r.transition(ctx, evStart, "", true); err != nil {
			return // cancelled meanwhile, or logged by transition
		}
		if err := r.ensureExecution(ctx, &profile); err != nil {
			r.fail(ctx, err)
			return
		}
		if _, err := r.transition(ctx, evReady, "", true); err != nil {
			return // cancelled while starting
		}
		if prompt != "" {
			err := r.m.persist(ctx, "store initial prompt", r.id, func(ctx context.Context) error {
				_, _, err := r.m.cfg.Store.AddUserMessage(ctx, r.id, "initial-"+r.id, prompt)
				return err
			})
			if err != nil {
				r.m.log.Error("store initial prompt", "session", r.id, "err", err)
			}
		}
		r.kick(ctx)
	})
}

// ensureExecution starts the session's agent unless one runs. An agent
// that has just died is not one: once its watch has finished with it (the
// session failed, or it died idle and may be continued) a new one starts,
// unless the session failed.
func (r *run) ensureExecution(ctx context.Context, profile *agent.Profile) error {
	r.startMu.Lock()
	defer r.startMu.Unlock()
	for {
		r.mu.Lock()
		if r.stopping {
			r.mu.Unlock()
			return errors.New("the session is stopping")
		}
		if r.state == shared.SessionFailed {
			r.mu.Unlock()
			return errors.New("the agent stopped and the session failed")
		}
		if r.exec == nil {
			break
		}
		exec, gone := r.exec, r.execGone
		r.mu.Unlock()
		select {
		case <-exec.Done():
		default:
			return nil
		}
		select {
		case <-gone:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	profileID := r.profile
	r.mu.Unlock()

	if profile == nil {
		p, err := r.m.cfg.Profile(ctx, profileID)
		if err != nil {
			return err
		}
		profile = &p
	}
	dir, err := r.m.workingDir(ctx, r.taskID)
	if err != nil {
		return err
	}
	stored, err := r.m.cfg.Store.GetSession(ctx, r.id)
	if err != nil {
		return err
	}
	sink := newSink(r)
	co, err := coalescer.New(coalescer.Config{Sink: sink.handle, Metrics: r.m.cfg.Metrics})
	if err != nil {
		return err
	}
	coDone := make(chan struct{})
	r.m.goTracked(func() {
		defer close(coDone)
		_ = co.Run(r.m.ctx)
	})
	texec := r.m.tr.Attach(r.id, r.taskID, capabilitiesOf(profile.Provider))
	r.mu.Lock()
	r.co, r.texec = co, texec
	r.mu.Unlock()
	exec, err := agent.Start(r.m.ctx, agent.Options{
		Profile: *profile, Cwd: dir, Handler: r, ClientVersion: r.m.cfg.Version, Logger: r.m.log,
		Nice: r.m.cfg.AgentNice, ResumeSessionID: stored.AgentSessionID,
	})
	if r.m.cfg.Started != nil {
		r.m.cfg.Started(profile.ID, err)
	}
	if err != nil {
		co.Close()
		<-coDone
		r.m.tr.Detach(texec)
		return fmt.Errorf("start %s: %w", profile.Name, err)
	}
	gone := make(chan struct{})
	r.mu.Lock()
	stopping := r.stopping
	if !stopping {
		r.exec, r.execGone = exec, gone
	}
	r.mu.Unlock()
	r.m.goTracked(func() {
		defer close(gone)
		r.watch(exec, texec, co, coDone, sink)
	})
	if stopping {
		// Cancelled while the agent was starting: do not keep it.
		_ = exec.Close()
		return errors.New("the session was cancelled while its agent started")
	}
	r.keepAgentSession(ctx, exec, stored.AgentSessionID)
	return nil
}

// watch waits for an execution to end. The stream is flushed, what the
// execution left open is finished (failed when the agent died on its own,
// cancelled when herd stopped it), the tracker retires what the execution
// owned, and an agent that exited on its own fails the session.
func (r *run) watch(exec *agent.Execution, texec tracker.Exec, co *coalescer.Coalescer, coDone <-chan struct{}, sink *sink) {
	<-exec.Done()
	co.Close()
	<-coDone
	r.mu.Lock()
	stopping := r.stopping
	r.mu.Unlock()
	crashed := !stopping && exec.Err() != nil
	status := shared.MessageCancelled
	if crashed {
		status = shared.MessageFailed
	}
	sink.end(status)
	r.m.tr.Detach(texec)
	r.mu.Lock()
	// An agent that can continue its session and dies while nothing is
	// asked of it loses no turn: the next prompt starts it again.
	idle := crashed && r.exec == exec && !exec.PromptOpen() && exec.Resumable() && exec.SessionID() != ""
	if r.exec == exec {
		r.exec, r.co = nil, nil
	}
	for id, w := range r.waiting {
		close(w.answer)
		delete(r.waiting, id)
	}
	r.mu.Unlock()
	switch {
	case idle:
		r.noteIdleExit(exec.Err())
	case crashed:
		if exec.PromptOpen() {
			// The agent died under a turn: the turn's mark follows
			// everything stored above, and comes before the failure, so
			// no crash of herd in between loses it.
			r.markTurn(r.m.ctx, r.heldPrompt(), shared.TurnFailed, diedNotice(exec.Err()))
		}
		r.fail(r.m.ctx, exec.Err())
	}
}

// noteIdleExit tells the transcript that the agent exited between turns
// and that the next prompt continues its session.
func (r *run) noteIdleExit(err error) {
	r.m.log.Info("agent exited while idle", "session", r.id, "err", err)
	msg, err := r.appendMessage(r.m.ctx, "store agent exit notice", store.NewMessage{
		SessionID: r.id, Type: shared.MessageStatus, Status: shared.MessageComplete,
		Content: storable("The agent stopped while waiting for a prompt (" + reason(err.Error()) + "). The next prompt starts it again and continues its session."),
	})
	if err != nil {
		return
	}
	r.m.pub.PublishSession(r.id, shared.NotifySessionMessageAdded, msg, false)
}

// fail moves the session to FAILED with a message a person can act on. A
// session that has ended meanwhile stays as it is.
func (r *run) fail(ctx context.Context, err error) {
	msg := err.Error()
	if len(msg) > shared.MaxErrorPreviewBytes*4 {
		msg = strings.ToValidUTF8(msg[:shared.MaxErrorPreviewBytes*4], "")
	}
	r.m.log.Info("session failed", "session", r.id, "err", err)
	_, _ = r.transition(ctx, evFail, storable(msg), true) // a conflict: it ended otherwise; anything else is logged
}

// stop tears the execution down; the session keeps its state.
func (r *run) stop() {
	r.mu.Lock()
	r.stopping = true
	exec := r.exec
	r.mu.Unlock()
	if exec != nil {
		_ = exec.Close()
	}
}

// isStopping reports whether herd is tearing the session's execution
// down (see stop).
func (r *run) isStopping() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stopping
}

// coalescer returns the running execution's coalescer, or nil.
func (r *run) coalescer() *coalescer.Coalescer {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.co
}

// stream returns the running execution's coalescer (nil when none) and
// its tracker handle.
func (r *run) stream() (*coalescer.Coalescer, tracker.Exec) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.co, r.texec
}

// running returns the running execution (nil when none), the channel
// closed once its watch has finished with it, and its coalescer.
func (r *run) running() (*agent.Execution, <-chan struct{}, *coalescer.Coalescer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.exec, r.execGone, r.co
}

// execution returns the running execution, or nil.
func (r *run) execution() *agent.Execution {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.exec
}
