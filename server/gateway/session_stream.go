package gateway

import (
	"encoding/json"

	"github.com/herd-dev/herd/shared"
)

// maxSessionSubscriptions bounds how many sessions one connection may have
// open in detail at once.
const maxSessionSubscriptions = 32

// sessionStream is one connection's view of one subscribed session.
type sessionStream struct {
	// seq numbers the semantic frames sent for the session since the
	// connection (re)subscribed; the snapshot is 0.
	seq uint64
}

// joinSession opens a session on the connection. It reports false when
// the connection already had it open. A notification the feed delivers
// before the stream state exists is skipped; it is in the snapshot the
// caller reads next.
func (c *conn) joinSession(sessionID string) (bool, error) {
	joined, full := c.g.sessionFeed.join(sessionID, c, maxSessionSubscriptions)
	if full {
		return false, shared.Errorf(shared.CodeBadRequest, "a connection may open at most %d sessions; unsubscribe from one first", maxSessionSubscriptions)
	}
	if joined {
		c.mu.Lock()
		c.sessions[sessionID] = &sessionStream{}
		c.mu.Unlock()
	}
	return joined, nil
}

// leaveSession closes a session on the connection.
func (c *conn) leaveSession(sessionID string) {
	c.g.sessionFeed.leave(sessionID, c)
	c.mu.Lock()
	delete(c.sessions, sessionID)
	c.mu.Unlock()
}

// sendSession queues a session notification with this connection's next
// seq for the session (semantic frames) or the current one (replaceable
// frames). Numbering and queueing happen under one lock so seq order is
// queue order.
func (c *conn) sendSession(sessionID, action string, payload json.RawMessage, replaceable bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.sessions[sessionID]
	if !ok {
		return // unsubscribed meanwhile
	}
	if !replaceable {
		st.seq++
	}
	frame, err := json.Marshal(shared.Envelope{
		Type: shared.TypeNotification, Action: action, Payload: payload, Seq: st.seq, TS: c.g.cfg.Now().UTC(),
	})
	if err != nil {
		c.g.log.Error("encode session notification", "action", action, "err", err)
		return
	}
	c.send(laneSemantic, frame)
}

// PublishSession sends a notification to every connection that has the
// session open. Replaceable notifications (intermediate states of a
// streaming message) carry the seq of the last semantic frame. Call it
// only after the change it reports has committed.
func (g *Gateway) PublishSession(sessionID, action string, payload any, replaceable bool) {
	raw, err := json.Marshal(payload)
	if err != nil {
		g.log.Error("encode session notification", "action", action, "err", err)
		return
	}
	subs := g.sessionFeed.subscribers(sessionID)
	for _, c := range subs {
		c.sendSession(sessionID, action, raw, replaceable)
	}
	g.metrics.notifications.WithLabelValues(action).Add(float64(len(subs)))
}

// PublishWorkspace sends a notification to every connection following the
// workspace's task feed. Call it only after the change it reports has
// committed.
func (g *Gateway) PublishWorkspace(workspaceID, action string, payload any) {
	g.publishWorkspace(workspaceID, action, payload)
}
