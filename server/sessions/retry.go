package sessions

import (
	"context"
	"time"

	"github.com/herd-dev/herd/server/store"
)

// Backoff of persist between attempts, and the bound of one attempt: a
// database that neither answers nor refuses (a network partition) must
// not hold a write, nor shutdown, for the minutes a TCP timeout takes.
// Once the manager is closing, an attempt gets less.
const (
	persistFirstBackoff     = 50 * time.Millisecond
	persistMaxBackoff       = 2 * time.Second
	persistAttemptTimeout   = 10 * time.Second
	persistShutdownDeadline = 2 * time.Second
)

// persist runs write, a change that records what already happened (agent
// output, a turn's end, an agent's failure), until it succeeds. While the
// database is unavailable it is retried with backoff, so an outage delays
// the change instead of losing it: the caller waits, and so does the agent
// whose output it stores (backpressure, never a drop). It gives up and
// returns the error when the error is of another kind, or when ctx or the
// manager ends; start-up recovery then repairs what is left (streaming
// messages, RUNNING sessions). Each attempt runs without ctx's
// cancellation, so a shutdown makes one more attempt rather than none, but
// within a deadline (persistAttemptTimeout, persistShutdownDeadline once
// the manager is closing).
func (m *Manager) persist(ctx context.Context, what, sessionID string, write func(context.Context) error) error {
	backoff := persistFirstBackoff
	for attempt := 1; ; attempt++ {
		bound := persistAttemptTimeout
		if m.ctx.Err() != nil {
			bound = persistShutdownDeadline
		}
		attemptCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bound)
		err := write(attemptCtx)
		cancel()
		if err == nil {
			if attempt > 1 {
				m.log.Info("database write went through after retrying", "what", what, "session", sessionID, "attempts", attempt)
			}
			return nil
		}
		if !store.Unavailable(err) {
			return err
		}
		if attempt == 1 {
			m.log.Warn("database unavailable; retrying", "what", what, "session", sessionID, "err", err)
		}
		m.metrics.retries.Inc()
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			m.metrics.abandoned.Inc()
			m.log.Error("database write abandoned", "what", what, "session", sessionID, "attempts", attempt, "err", err)
			return err
		case <-m.ctx.Done():
			m.metrics.abandoned.Inc()
			m.log.Error("database write abandoned at shutdown", "what", what, "session", sessionID, "attempts", attempt, "err", err)
			return err
		}
		backoff = min(2*backoff, persistMaxBackoff)
	}
}

// persisted is persist for a write that returns what it stored.
func persisted[T any](m *Manager, ctx context.Context, what, sessionID string, write func(context.Context) (T, error)) (T, error) {
	var out T
	err := m.persist(ctx, what, sessionID, func(ctx context.Context) error {
		var err error
		out, err = write(ctx)
		return err
	})
	return out, err
}
