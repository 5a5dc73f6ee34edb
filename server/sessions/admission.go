package sessions

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/server/tracker"
	"github.com/herd-dev/herd/shared"
)

// AddMessage sends a prompt, owned by its client_message_id. A retry
// returns the stored message as a duplicate and dispatches nothing new; a
// session that is RUNNING queues the prompt; CREATED, STARTING, FAILED and
// CANCELLED sessions reject it as not promptable. Attachments are resolved
// and stored with the prompt (see resolveAttachments).
func (m *Manager) AddMessage(ctx context.Context, sessionID, clientMessageID, content string, attachments ...shared.Attachment) (shared.MessageAddResponse, error) {
	r, session, err := m.runOf(ctx, sessionID)
	if err != nil {
		return shared.MessageAddResponse{}, err
	}
	// A transition commits before the run's mirror learns of it: a client
	// that read the new state (a session.list) in between must not be
	// refused for the old one.
	r.remember(session)
	if existing, found, err := m.cfg.Store.MessageByClientID(ctx, clientMessageID); err != nil {
		return shared.MessageAddResponse{}, err
	} else if found {
		return m.duplicate(ctx, r, session, existing)
	}
	attachments, err = m.resolveAttachments(ctx, session, attachments)
	if err != nil {
		return shared.MessageAddResponse{}, err
	}

	r.mu.Lock()
	state := r.state
	if state != shared.SessionRunning && !slices.Contains(promptable, state) {
		r.mu.Unlock()
		return shared.MessageAddResponse{}, shared.Errorf(shared.CodeNotPromptable, "session is %s; prompts are accepted once it waits for input", state)
	}
	// An idle session takes the prompt at once: its tracker claim is taken
	// first, so the prompt is stored already claimed, in one write.
	var claim tracker.Claim
	token := ""
	if slices.Contains(promptable, state) && !r.stopping {
		if c, err := m.tr.Claim(r.id, r.taskID); err == nil {
			claim, token = c, newToken()
		}
	}
	msg, created, claimed, err := m.cfg.Store.AddAndClaimUserMessage(ctx, sessionID, clientMessageID, content, token, attachments...)
	if token != "" && !claimed {
		m.tr.Release(claim)
	}
	if err != nil || !created {
		r.mu.Unlock()
		if err != nil {
			return shared.MessageAddResponse{}, err
		}
		return m.duplicate(ctx, r, session, msg)
	}
	if claimed {
		r.startTurnLocked(msg, token, claim, false)
		r.mu.Unlock()
		return shared.MessageAddResponse{Message: msg, Outcome: shared.OutcomeDispatched}, nil
	}
	head, dispatching := r.admitLocked(ctx)
	r.mu.Unlock()

	if dispatching && head.ID == msg.ID {
		return shared.MessageAddResponse{Message: msg, Outcome: shared.OutcomeDispatched}, nil
	}
	r.publishQueue(ctx)
	m.mark(r.taskID)
	return shared.MessageAddResponse{Message: msg, Outcome: shared.OutcomeQueued}, nil
}

// duplicate answers a retry of a stored prompt. A prompt that a crash left
// undispatched in an idle session is dispatched now, once.
func (m *Manager) duplicate(ctx context.Context, r *run, session shared.Session, msg shared.Message) (shared.MessageAddResponse, error) {
	if msg.TaskID != session.TaskID {
		return shared.MessageAddResponse{}, shared.Errorf(shared.CodeConflict, "client_message_id %q belongs to another task; use a fresh id", msg.ClientMessageID)
	}
	r.kick(ctx)
	return shared.MessageAddResponse{Message: msg, Outcome: shared.OutcomeDuplicate}, nil
}

// admitLocked starts a turn for the head of the queue when the session is
// promptable and the tracker grants the prompt claim. The head is claimed
// here, under the run's lock, so it has left the queue before the caller
// answers. It reports the message it dispatches.
//
// Under the handoff experiment a RUNNING session may also dispatch: when
// the tracker passes it the held claim of a turn whose foreground has
// yielded to background work (tracker.Handoff).
func (r *run) admitLocked(ctx context.Context) (shared.Message, bool) {
	handoff := false
	switch {
	case r.stopping:
		return shared.Message{}, false
	case slices.Contains(promptable, r.state):
	case r.state == shared.SessionRunning && r.m.cfg.Handoff:
		handoff = true
	default:
		return shared.Message{}, false
	}
	queue, err := r.m.cfg.Store.QueuedMessages(ctx, r.id)
	if err != nil || len(queue) == 0 {
		if err != nil {
			r.m.log.Error("load queue", "session", r.id, "err", err)
		}
		return shared.Message{}, false
	}
	var claim tracker.Claim
	if handoff {
		claim, err = r.m.tr.Handoff(r.id)
	} else {
		claim, err = r.m.tr.Claim(r.id, r.taskID)
	}
	if err != nil {
		return shared.Message{}, false // a turn runs; it dispatches the head when it ends
	}
	token := newToken()
	msg, claimed, err := r.m.cfg.Store.ClaimDispatch(ctx, queue[0].ID, token)
	if err != nil || !claimed {
		if err != nil {
			r.m.log.Error("claim prompt", "session", r.id, "err", err)
		}
		r.m.tr.Release(claim)
		return shared.Message{}, false
	}
	r.startTurnLocked(msg, token, claim, handoff)
	return msg, true
}

// kick dispatches the head of the queue if the session is idle; the turn
// publishes the queue once it has claimed its prompt.
func (r *run) kick(ctx context.Context) {
	r.mu.Lock()
	r.admitLocked(ctx)
	r.mu.Unlock()
}

// turnEnd is a coalescer barrier marking the end of a turn: when the sink
// reaches it, everything the agent sent before has been persisted. cut
// says the turn ended because its agent did, or because herd is stopping
// it: the messages still streaming were cut off, and are left for the
// execution's end (run.watch), which knows how it ended, to finish.
type turnEnd struct {
	done chan struct{}
	cut  bool
}

// startTurnLocked runs turn on a goroutine of its own, counted in
// r.turns until it ends. The caller holds r.mu.
func (r *run) startTurnLocked(msg shared.Message, token string, claim tracker.Claim, handoff bool) {
	r.turns++
	r.m.goTracked(func() {
		defer func() {
			r.mu.Lock()
			r.turns--
			r.mu.Unlock()
		}()
		r.turn(msg, token, claim, handoff)
	})
}

// turn runs one claimed prompt: mark the session RUNNING, hand the prompt
// to the agent, wait for the turn to end, then settle, give the tracker
// claim back and dispatch the next one. A handed-off turn finds the session
// RUNNING already; a turn whose claim was handed off meanwhile leaves the
// settling to its successor.
func (r *run) turn(msg shared.Message, token string, claim tracker.Claim, handoff bool) {
	ctx := r.m.ctx
	dispatched := false
	r.beginUnsent(msg.ID)
	defer r.endUnsent(msg.ID)
	defer func() {
		if dispatched {
			r.m.tr.Complete(claim)
		} else {
			r.m.tr.Release(claim)
		}
		r.kick(ctx)
	}()
	// The prompt left the queue when it was claimed; the transition below
	// re-derives the task's summary, queue count included.
	r.publishQueue(ctx)
	ev := evPrompt
	if handoff {
		ev = evHandoff
	}
	if _, err := r.transition(ctx, ev, "", true); err != nil {
		// The session stopped taking prompts meanwhile (or the database
		// stayed away until shutdown): back to the queue.
		r.undispatched(ctx, msg, token, false)
		return
	}
	if err := r.ensureExecution(ctx, nil); err != nil {
		r.fail(ctx, err)
		return
	}
	exec, gone, co := r.running()
	if exec == nil || co == nil {
		r.fail(ctx, errors.New("the agent stopped before the prompt could be sent"))
		return
	}
	// The prompt is sent only once it is stored as sent, so that no restart
	// sends it again: at most once, even when the send is cut short.
	err := ctx.Err()
	if err == nil {
		err = r.m.persist(ctx, "mark prompt sent", r.id, func(ctx context.Context) error {
			return r.m.cfg.Store.MarkSent(ctx, msg.ID, token)
		})
	}
	if err != nil {
		r.m.log.Error("prompt not sent", "session", r.id, "err", err)
		// The session went RUNNING for this prompt: it settles again,
		// unless the turn was handed off (the session is its
		// predecessor's) or herd is stopping (recovery settles it).
		r.undispatched(ctx, msg, token, !handoff && ctx.Err() == nil)
		return
	}
	// The sent prompt is a source of the task row's preview.
	r.m.mark(r.taskID)
	dispatched = r.m.tr.Dispatched(claim)
	r.setPrompt(msg.ID)
	if r.m.cfg.Turns != nil {
		// Before the agent can act on the prompt; and before the turn's
		// start is published, so that a client told of it finds what the
		// watch recorded of it.
		r.m.cfg.Turns.TurnStarting(ctx, r.taskID, r.id, msg.ID)
	}
	msg.Status = shared.MessageComplete
	r.m.pub.PublishSession(r.id, shared.NotifySessionMessageAdded, msg, false)
	r.m.pub.PublishSession(r.id, shared.NotifySessionTurnStarted, shared.TurnStartedEvent{
		SessionID: r.id, TurnID: msg.ID, MessageID: msg.ID,
	}, false)

	var attached []shared.Attachment
	if msg.Metadata != nil {
		attached = msg.Metadata.Attachments
	}
	var stop agent.StopReason
	var promptErr error
	if r.endUnsent(msg.ID) {
		// Cancelled before the prompt reached the agent: it is never
		// sent, and the turn ends as one the agent cancelled.
		stop = agent.StopCancelled
	} else {
		stop, promptErr = exec.Prompt(ctx, msg.Content, attached...)
	}

	end := turnEnd{done: make(chan struct{}), cut: exec.Err() != nil || ctx.Err() != nil}
	if err := co.Barrier(ctx, end); err == nil {
		select {
		case <-end.done:
		case <-exec.Done():
		case <-ctx.Done():
		}
	}
	if exec.Err() != nil {
		// The agent has ended: everything it said is stored once its
		// watch is done with it, and a turn's mark comes after that.
		select {
		case <-gone:
		case <-ctx.Done():
		}
	}
	outcome := settleOutcome(stop, promptErr)
	switch {
	case ctx.Err() != nil:
		// Shutting down: the turn did not fail, it was interrupted, and
		// start-up recovery settles the session and marks the turn.
		return
	case r.isStopping():
		// herd stops the agent (the task was archived): whoever stops it
		// has set the session's state. A prompt it cut off was cancelled,
		// whether the agent answered it so before it went or not at all;
		// one the agent had answered otherwise ended as it said.
		if promptErr != nil || stop == agent.StopCancelled {
			outcome = shared.TurnCancelled
			r.markTurn(ctx, msg.ID, outcome, archivedNotice)
		} else {
			r.markSettled(ctx, msg.ID, stop, nil)
		}
	case promptErr != nil && exec.Err() != nil:
		// The agent died under the turn. Its watch marked the turn,
		// unless the agent was gone before the prompt reached it.
		r.markTurn(ctx, msg.ID, shared.TurnFailed, diedNotice(exec.Err()))
		r.fail(ctx, exec.Err())
	case !r.m.tr.Current(claim):
		// Handed off: the successor owns the foreground and settles the
		// session; this late result changes nothing else, and the turn
		// needs no mark.
		r.takePrompt(msg.ID)
	default:
		if promptErr != nil {
			r.recordError(ctx, promptErr)
		}
		// The mark is stored before the session settles, so that a crash
		// in between leaves the session RUNNING, and recovery finds the
		// mark stored under the id it would give its own.
		r.markSettled(ctx, msg.ID, stop, promptErr)
		// The turn's claim is given back first, so the settled state is
		// derived from a foreground that no longer owns a prompt.
		r.m.tr.Complete(claim)
		// A conflict means the session ended meanwhile (archived); any
		// other error is logged by transition, after retrying an outage
		// until shutdown, when recovery settles the session.
		_, _ = r.transition(ctx, evSettle, "", true)
	}
	// The turn's answer was finished at its end (turnEnd) without a mark
	// of its own: this one, made after the session settled, shows the
	// answer in the same summary as the settled state, also where no
	// transition followed (archived, handed off).
	r.m.mark(r.taskID)
	r.m.pub.PublishSession(r.id, shared.NotifySessionTurnSettled, shared.TurnSettledEvent{
		SessionID: r.id, TurnID: msg.ID, Outcome: outcome,
	}, false)
}

// undispatched undoes a turn whose prompt never reached the agent: the
// prompt goes back to the queue and, with settle, the session settles.
func (r *run) undispatched(ctx context.Context, msg shared.Message, token string, settle bool) {
	err := r.m.persist(ctx, "release claim", r.id, func(ctx context.Context) error {
		return r.m.cfg.Store.ReleaseClaim(ctx, msg.ID, token)
	})
	if err != nil {
		r.m.log.Error("release claim", "session", r.id, "err", err)
	}
	if settle {
		_, _ = r.transition(ctx, evSettle, "", true) // a conflict: it ended otherwise; anything else is logged
	}
	r.publishQueue(ctx)
	r.m.mark(r.taskID)
}

// recordError stores an agent's recoverable error (its prompt failed but
// the agent runs on) as an error message, which the task's status summary
// shows until it is dismissed or the agent answers again.
func (r *run) recordError(ctx context.Context, err error) {
	msg, err := r.appendMessage(ctx, "store agent error", store.NewMessage{
		SessionID: r.id, Type: shared.MessageError,
		Content: storable(strings.TrimPrefix(err.Error(), "prompt: ")), Status: shared.MessageComplete,
	})
	if err != nil {
		return
	}
	r.m.pub.PublishSession(r.id, shared.NotifySessionMessageAdded, msg, false)
	r.m.mark(r.taskID)
}

// appendMessage stores a new message of the session through persist,
// under an id named in advance, so that a retry after a lost answer finds
// it instead of storing it twice. A failure is logged here.
func (r *run) appendMessage(ctx context.Context, what string, in store.NewMessage) (shared.Message, error) {
	in.ID = store.NewID()
	msg, err := persisted(r.m, ctx, what, r.id, func(ctx context.Context) (shared.Message, error) {
		return r.m.cfg.Store.AppendMessage(ctx, in)
	})
	if err != nil {
		r.m.log.Error(what, "session", r.id, "err", err)
	}
	return msg, err
}

// settleOutcome maps how a prompt ended to a turn outcome.
func settleOutcome(stop agent.StopReason, err error) shared.TurnOutcome {
	switch {
	case err != nil:
		return shared.TurnFailed
	case stop == agent.StopCancelled:
		return shared.TurnCancelled
	case stop == agent.StopMaxTokens:
		return shared.TurnMaxTokens
	case stop == agent.StopMaxTurnRequests:
		return shared.TurnMaxTurnRequests
	case stop == agent.StopRefusal:
		return shared.TurnRefusal
	default:
		return shared.TurnEndTurn
	}
}

// Queue returns a session's queued prompts, oldest first; an unknown
// session is not_found.
func (m *Manager) Queue(ctx context.Context, sessionID string) ([]shared.QueuedPrompt, error) {
	if _, err := m.cfg.Store.GetSession(ctx, sessionID); err != nil {
		return nil, err
	}
	return m.queue(ctx, sessionID)
}

// queue loads a known session's queued prompts, oldest first.
func (m *Manager) queue(ctx context.Context, sessionID string) ([]shared.QueuedPrompt, error) {
	msgs, err := m.cfg.Store.QueuedMessages(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	out := make([]shared.QueuedPrompt, len(msgs))
	for i, msg := range msgs {
		out[i] = shared.QueuedPrompt{
			ID: msg.ID, SessionID: msg.SessionID, ClientMessageID: msg.ClientMessageID,
			Content: msg.Content, CreatedAt: msg.CreatedAt,
		}
	}
	return out, nil
}

// RemoveQueued takes a prompt out of a session's queue.
func (m *Manager) RemoveQueued(ctx context.Context, sessionID, queueID string) ([]shared.QueuedPrompt, error) {
	r, _, err := m.runOf(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if err := m.cfg.Store.RemoveQueued(ctx, sessionID, queueID); err != nil {
		return nil, err
	}
	queue := r.publishQueue(ctx)
	m.mark(r.taskID)
	return queue, nil
}

// publishQueue publishes the session's queue and returns it.
func (r *run) publishQueue(ctx context.Context) []shared.QueuedPrompt {
	queue, err := r.m.queue(ctx, r.id)
	if err != nil {
		r.m.log.Error("load queue", "session", r.id, "err", err)
		return nil
	}
	r.m.pub.PublishSession(r.id, shared.NotifySessionQueueChanged, shared.QueueChangedEvent{SessionID: r.id, Queue: queue}, false)
	return queue
}

// Cancel stops what a session is doing: a running turn is cancelled (the
// session then waits for input), and a session that has not finished
// starting is cancelled for good. Cancelling also retires the session's
// background work (subagents, background shells, monitors): the person
// asked for everything to stop, and an agent that stops its work after a
// cancellation need not report each piece ending. Other sessions are
// returned unchanged.
func (m *Manager) Cancel(ctx context.Context, sessionID string) (shared.Session, error) {
	r, session, err := m.runOf(ctx, sessionID)
	if err != nil {
		return shared.Session{}, err
	}
	switch session.State {
	case shared.SessionRunning, shared.SessionWaitingForInput:
		r.cancelUnsent()
		if exec := r.execution(); exec != nil {
			if err := exec.Cancel(ctx); err != nil {
				return shared.Session{}, shared.Errorf(shared.CodeUnavailable, "the agent did not take the cancellation: %v", err)
			}
		}
		m.tr.Cancel(r.id)
		r.mu.Lock()
		turns := r.turns
		r.mu.Unlock()
		if session.State == shared.SessionRunning && turns == 0 && !m.tr.View(r.id).Claimed {
			// RUNNING with no turn in flight: a turn's end that could not
			// be stored (logged then). Cancelling settles it, and the
			// queue runs.
			if _, err := r.transition(ctx, evSettle, "", false); err != nil && shared.ErrorCode(err) != shared.CodeConflict {
				return shared.Session{}, err
			}
			r.kick(ctx)
		}
		return m.cfg.Store.GetSession(ctx, sessionID)
	case shared.SessionCreated, shared.SessionStarting:
		s, err := r.transition(ctx, evCancel, "", false)
		if err != nil {
			return shared.Session{}, err
		}
		r.stop()
		return s, nil
	default:
		return session, nil
	}
}

// EndTask ends the sessions of a task for good, as when it is archived:
// a session that was created or starting becomes CANCELLED, one that runs
// or waits for input COMPLETED, and their agents stop. The state changes
// first, so a turn that the stop interrupts finds its session ended and
// settles nothing; an ended session shows no activity (see live).
func (m *Manager) EndTask(ctx context.Context, taskID string) error {
	sessions, err := m.cfg.Store.ListSessions(ctx, taskID)
	if err != nil {
		return err
	}
	for _, session := range sessions {
		if !lifecycle[evEnd].allows(session.State) && !lifecycle[evAbandon].allows(session.State) {
			continue // ended already
		}
		r, err := m.live(session)
		if err != nil {
			return err
		}
		// The state read above may have moved on (a starting session
		// became ready): whichever of the two applies now ends it, and a
		// conflict with both means it ended meanwhile.
		for _, ev := range []event{evEnd, evAbandon} {
			if _, err = r.transition(ctx, ev, "", false); shared.ErrorCode(err) != shared.CodeConflict {
				break
			}
		}
		if err != nil && shared.ErrorCode(err) != shared.CodeConflict {
			return err
		}
		r.stop()
		m.mu.Lock()
		delete(m.runs, session.ID)
		m.mu.Unlock()
	}
	return nil
}
