package sessions

import (
	"context"
	"fmt"

	"github.com/herd-dev/herd/shared"
)

// recover repairs what a previous process left behind: no session keeps
// an activity (no execution survived to vouch for it), streaming messages
// end failed with the text they had (their stream was cut off), requests
// no agent waits on are cancelled, sessions it left RUNNING wait for input
// again with their turn marked interrupted (markInterrupted), sessions it
// left starting have failed, and prompts it claimed but did not send go
// back to their queue. Every repaired state is published; then the
// recovered sessions' queues are dispatched, so a prompt whose dispatch
// the crash interrupted runs exactly once.
//
// The claims are released last: until a RUNNING session has settled, its
// latest turn's unsent claim says that turn needs no mark, also to a
// start after a crash during recovery.
func (m *Manager) recover(ctx context.Context) error {
	st := m.cfg.Store
	reset, err := st.ResetActivity(ctx)
	if err != nil {
		return err
	}
	for _, s := range reset {
		m.pub.PublishSession(s.ID, shared.NotifySessionStateChanged, shared.SessionStateEventOf(s), false)
		m.mark(s.TaskID)
	}
	ids, err := st.StreamingMessageIDs(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		// Its stream was cut off: the text it has is all it will have.
		if _, err := st.FinishMessage(ctx, id, shared.MessageFailed); err != nil {
			return fmt.Errorf("finish message %s: %w", id, err)
		}
	}
	if _, err := st.CancelPendingRequests(ctx); err != nil {
		return err
	}
	// A request waits only during a turn, so every task whose request was
	// cancelled here has a RUNNING session below, and each transition
	// re-derives its task's summary.
	stale, err := st.SessionsInStates(ctx, shared.SessionRunning, shared.SessionStarting, shared.SessionCreated)
	if err != nil {
		return err
	}
	var resume []*run
	for _, s := range stale {
		r, _, err := m.runOf(ctx, s.ID)
		if err != nil {
			return err
		}
		if s.State == shared.SessionRunning {
			if err := r.markInterrupted(ctx); err != nil {
				return fmt.Errorf("mark the interrupted turn of session %s: %w", s.ID, err)
			}
			if _, err := r.transition(ctx, evRecoverTurn, "", false); err != nil {
				return err
			}
			resume = append(resume, r)
			continue
		}
		if _, err := r.transition(ctx, evRecoverStart, "herd restarted before the agent was ready; start a new session", false); err != nil {
			return err
		}
	}
	if _, err := st.ReleaseClaims(ctx); err != nil {
		return err
	}
	if len(stale) > 0 {
		m.log.Info("recovered sessions", "count", len(stale))
	}
	for _, r := range resume {
		r.kick(m.ctx)
	}
	return nil
}
