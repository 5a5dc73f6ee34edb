package sessions

import (
	"context"
	"slices"
	"time"

	"github.com/herd-dev/herd/shared"
)

// RespondPermission answers the permission request the session's agent is
// waiting on under pending_id, with one of its options.
func (m *Manager) RespondPermission(ctx context.Context, req shared.PermissionRespondRequest) (shared.Message, error) {
	return m.respond(ctx, req.SessionID, req.PendingID, shared.MessagePermissionRequest, req.OptionID,
		&shared.MessageMetadata{SelectedOptionID: req.OptionID})
}

// RespondClarification answers the clarification question the session's
// agent is waiting on under pending_id.
func (m *Manager) RespondClarification(ctx context.Context, req shared.ClarificationRespondRequest) (shared.Message, error) {
	return m.respond(ctx, req.SessionID, req.PendingID, shared.MessageClarificationRequest, req.Answer,
		&shared.MessageMetadata{Answer: req.Answer})
}

// resolveTimeout bounds storing an answer.
const resolveTimeout = 10 * time.Second

// respond resolves exactly the request named, then hands the answer to the
// agent.
func (m *Manager) respond(ctx context.Context, sessionID, pendingID string, kind shared.MessageType, answer string, meta *shared.MessageMetadata) (shared.Message, error) {
	r, _, err := m.runOf(ctx, sessionID)
	if err != nil {
		return shared.Message{}, err
	}
	r.mu.Lock()
	w, ok := r.waiting[pendingID]
	if ok && w.kind != kind {
		ok = false
	}
	if ok && kind == shared.MessagePermissionRequest && !slices.Contains(w.options, answer) {
		r.mu.Unlock()
		return shared.Message{}, shared.Errorf(shared.CodeBadRequest, "option_id %q is not one of the request's options %v", answer, w.options)
	}
	if ok {
		delete(r.waiting, pendingID)
	}
	r.mu.Unlock()
	if !ok {
		return shared.Message{}, shared.Errorf(shared.CodeNotFound, "the agent of session %q is not waiting on a %s %q", sessionID, kind, pendingID)
	}
	// The waiter is taken: the answer is stored even if the asker gives
	// up now (a phone's post cut off), and a failed write puts the
	// waiter back, so the request stays answerable.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), resolveTimeout)
	defer cancel()
	msg, err := m.cfg.Store.ResolveRequest(wctx, sessionID, pendingID, shared.MessageResolved, meta)
	if err != nil {
		r.mu.Lock()
		if r.waiting != nil {
			r.waiting[pendingID] = w
		}
		r.mu.Unlock()
		return shared.Message{}, err
	}
	m.pub.PublishSession(sessionID, shared.NotifySessionMessageUpdated, msg, false)
	m.requestChanged(msg)
	w.answer <- answer
	return msg, nil
}
