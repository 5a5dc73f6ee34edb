package sessions

import (
	"context"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// keepAgentSession stores the agent's own session id behind the session,
// so that the next execution continues it (agent.Options.ResumeSessionID),
// and says so when this execution could not: an agent asked to continue
// earlier that opened a fresh session instead remembers none of the
// transcript's turns, which the session's header (ContextLost, published
// with its state) and a status message in the transcript then tell. A
// restored context clears the header's notice.
func (r *run) keepAgentSession(ctx context.Context, exec *agent.Execution, previous string) {
	r.keepPromptCapabilities(ctx, exec)
	lost := ""
	if previous != "" {
		lost = exec.Restore().Lost
	}
	var s shared.Session
	// A retry after a lost answer finds the change made: a raised revision
	// still needs publishing.
	changed := false
	err := r.m.persist(ctx, "store agent session", r.id, func(ctx context.Context) error {
		var err error
		var wrote bool
		s, wrote, err = r.m.cfg.Store.SetAgentSession(ctx, r.id, exec.SessionID(), lost)
		changed = changed || wrote
		return err
	})
	if err != nil {
		r.m.log.Error("store agent session", "session", r.id, "err", err)
	} else if changed {
		r.remember(s)
		r.m.pub.PublishSession(r.id, shared.NotifySessionStateChanged, shared.SessionStateEventOf(s), false)
	}
	if lost == "" {
		if previous != "" {
			r.m.log.Info("agent session continued", "session", r.id, "agent_session", previous, "method", exec.Restore().Method)
		}
		return
	}
	r.m.log.Info("agent context not restored", "session", r.id, "previous", previous, "why", lost)
	msg, err := r.appendMessage(ctx, "store context notice", store.NewMessage{
		SessionID: r.id, Type: shared.MessageStatus, Status: shared.MessageComplete,
		Content: storable(contextLostNotice(lost)),
	})
	if err != nil {
		return
	}
	r.m.pub.PublishSession(r.id, shared.NotifySessionMessageAdded, msg, false)
}

// contextLostNotice is the transcript's words for a fresh agent session
// that replaced one the agent could not continue.
func contextLostNotice(why string) string {
	return "Context not restored: the agent started a fresh session and does not remember the earlier turns of this transcript (" + why + ")."
}
