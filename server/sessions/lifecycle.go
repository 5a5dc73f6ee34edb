package sessions

import (
	"context"
	"fmt"
	"slices"

	"github.com/herd-dev/herd/shared"
)

// event names a cause of a session's lifecycle change. lifecycle lists,
// for each, the states it may leave and the state it leads to; no state
// changes otherwise.
type event string

// The lifecycle events.
const (
	// evStart: the agent of a new session is being started.
	evStart event = "start"
	// evReady: the agent answered initialize and session/new.
	evReady event = "ready"
	// evPrompt: a claimed prompt is handed to the agent.
	evPrompt event = "prompt"
	// evHandoff: under the handoff experiment, a new prompt takes over the
	// claim of a turn whose foreground yielded; the session stays RUNNING.
	evHandoff event = "handoff"
	// evSettle: the turn ended (end of turn, cancellation, refusal, an
	// error the agent survived).
	evSettle event = "settle"
	// evFail: the agent could not start, or died on its own.
	evFail event = "fail"
	// evCancel: session.cancel before the agent was ready.
	evCancel event = "cancel"
	// evEnd: the task was archived; its agent stops.
	evEnd event = "end"
	// evAbandon: the task was archived before its agent was ready.
	evAbandon event = "abandon"
	// evRecoverTurn: start-up found a turn a previous process left running.
	evRecoverTurn event = "recover_turn"
	// evRecoverStart: start-up found a session a previous process left
	// starting; its agent is gone.
	evRecoverStart event = "recover_start"
)

// edge is the rule of one event: the states it may leave and where it
// leads.
type edge struct {
	from []shared.SessionState
	to   shared.SessionState
}

// lifecycle is the session state machine, one entry per event. FAILED and
// CANCELLED are final; COMPLETED and IDLE accept prompts as
// WAITING_FOR_INPUT does. No event enters IDLE: herd does not stop idle
// agents, but a database written by one that does stays promptable.
var lifecycle = map[event]edge{
	evStart:        {from: states(shared.SessionCreated), to: shared.SessionStarting},
	evReady:        {from: states(shared.SessionStarting), to: shared.SessionWaitingForInput},
	evPrompt:       {from: promptable, to: shared.SessionRunning},
	evHandoff:      {from: states(shared.SessionRunning), to: shared.SessionRunning},
	evSettle:       {from: states(shared.SessionRunning), to: shared.SessionWaitingForInput},
	evFail:         {from: states(shared.SessionStarting, shared.SessionRunning, shared.SessionWaitingForInput), to: shared.SessionFailed},
	evCancel:       {from: states(shared.SessionCreated, shared.SessionStarting), to: shared.SessionCancelled},
	evEnd:          {from: states(shared.SessionRunning, shared.SessionWaitingForInput, shared.SessionIdle), to: shared.SessionCompleted},
	evAbandon:      {from: states(shared.SessionCreated, shared.SessionStarting), to: shared.SessionCancelled},
	evRecoverTurn:  {from: states(shared.SessionRunning), to: shared.SessionWaitingForInput},
	evRecoverStart: {from: states(shared.SessionCreated, shared.SessionStarting), to: shared.SessionFailed},
}

// promptable states accept a prompt for dispatch.
var promptable = states(shared.SessionWaitingForInput, shared.SessionCompleted, shared.SessionIdle)

func states(s ...shared.SessionState) []shared.SessionState { return s }

// edgeOf returns an event's rule; an event missing from the table is a
// programming error, reported as an internal error.
func edgeOf(ev event) (edge, error) {
	e, ok := lifecycle[ev]
	if !ok {
		return edge{}, fmt.Errorf("session lifecycle has no event %q", ev)
	}
	return e, nil
}

// allows reports whether ev may change a session in state from.
func (e edge) allows(from shared.SessionState) bool { return slices.Contains(e.from, from) }

// live reports whether a session in state s may have a running agent, and
// so may show activity: only these states store what the tracker reports.
func live(s shared.SessionState) bool {
	switch s {
	case shared.SessionStarting, shared.SessionRunning, shared.SessionWaitingForInput:
		return true
	}
	return false
}

// transition applies ev to the session: a compare-and-set in the store
// from the states ev may leave, then the mirror, the publication and the
// marks. A session in another state is a conflict, which the caller
// handles; an unavailable database is retried while the manager runs when
// retry is set (the change is the outcome of something that already
// happened, such as a turn's end, and must not be lost); any other error is
// logged here and returned.
func (r *run) transition(ctx context.Context, ev event, errMsg string, retry bool) (shared.Session, error) {
	e, err := edgeOf(ev)
	if err != nil {
		r.m.log.Error("session transition", "session", r.id, "err", err)
		return shared.Session{}, err
	}
	var s shared.Session
	attempts := 0
	write := func(ctx context.Context) error {
		attempts++
		s, err = r.m.cfg.Store.Transition(ctx, r.id, e.from, e.to, errMsg, r.m.activityOf(r.id, e.to))
		if attempts > 1 && shared.ErrorCode(err) == shared.CodeConflict {
			// An earlier attempt may have committed with its answer lost.
			if stored, getErr := r.m.cfg.Store.GetSession(ctx, r.id); getErr == nil && stored.State == e.to && stored.StateRevision > r.revision() {
				s, err = stored, nil
			}
		}
		return err
	}
	if retry {
		err = r.m.persist(ctx, "session "+string(ev), r.id, write)
	} else {
		err = write(ctx)
	}
	if err != nil {
		if shared.ErrorCode(err) != shared.CodeConflict {
			r.m.log.Error("session transition failed", "session", r.id, "event", string(ev), "to", e.to, "err", err)
		}
		return s, err
	}
	r.remember(s)
	r.m.pub.PublishSession(r.id, shared.NotifySessionStateChanged, shared.SessionStateEventOf(s), false)
	r.m.mark(r.taskID)
	if r.m.cfg.Git != nil {
		r.m.cfg.Git.SessionState(r.taskID, r.id, s.State)
	}
	return s, nil
}
