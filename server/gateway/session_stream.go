package gateway

import (
	"encoding/json"
	"sync/atomic"

	"github.com/herd-dev/herd/shared"
)

// streamSeq numbers session subscriptions across connections.
var streamSeq atomic.Uint64

// maxSessionSubscriptions bounds how many sessions one connection may have
// open in detail at once.
const maxSessionSubscriptions = 64

// sessionStream is one connection's view of one subscribed session.
type sessionStream struct {
	// seq numbers the semantic frames sent for the session since the
	// connection (re)subscribed; the snapshot is 0.
	seq uint64
	// id identifies this subscription, so the writer's record of what it
	// sent starts over with each (see streamBook).
	id uint64
	// replaced and evicted count the session's replaceable frames that a
	// newer state replaced in the queue, and that its own newer states
	// evicted to keep the session within its allowance or the byte bound;
	// they are logged when the session closes on the connection. (States
	// evicted for another session's semantic frame are only counted in
	// the metrics.)
	replaced, evicted int
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
		c.sessions[sessionID] = &sessionStream{id: streamSeq.Add(1)}
		c.mu.Unlock()
	}
	return joined, nil
}

// leaveSession closes a session on the connection and discards what it
// had queued.
func (c *conn) leaveSession(sessionID string) {
	c.g.sessionFeed.leave(sessionID, c)
	c.mu.Lock()
	st := c.sessions[sessionID]
	delete(c.sessions, sessionID)
	c.out.dropSession(sessionID)
	c.mu.Unlock()
	if st != nil {
		c.logStream(sessionID, st)
	}
}

// logStream records a session stream's replacements and evictions, if
// any, when it closes on the connection. No transcript content is logged.
func (c *conn) logStream(sessionID string, st *sessionStream) {
	if st.replaced == 0 && st.evicted == 0 {
		return
	}
	c.g.log.Info("session stream closed", "conn", c.id, "remote", c.remote, "session", sessionID,
		"replaced", st.replaced, "evicted", st.evicted)
}

// sendSession queues a session notification with this connection's next
// seq for the session (semantic frames) or the current one (replaceable
// frames: an intermediate state of msg, keyed by its id and encoded by the
// writer). msg is the message the payload holds, if it is one. Numbering
// and queueing happen under one lock so seq order is queue order.
func (c *conn) sendSession(sessionID, action string, payload json.RawMessage, msg *shared.Message, replaceable bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.sessions[sessionID]
	if !ok {
		return // unsubscribed meanwhile
	}
	now := c.g.cfg.Now().UTC()
	var e entry
	if msg != nil {
		e.msg = &messageFrame{session: sessionID, stream: st.id, action: action, ts: now, msg: *msg}
	}
	if replaceable && msg != nil {
		e.key = msg.ID
		e.msg.seq = st.seq
	} else {
		st.seq++
		frame, err := json.Marshal(shared.Envelope{
			Type: shared.TypeNotification, Action: action, Payload: payload, Seq: st.seq, TS: now,
		})
		if err != nil {
			c.g.log.Error("encode session notification", "action", action, "err", err)
			return
		}
		e.frame = frame
		if e.msg != nil {
			// The writer may send the state as a delta (see streamBook).
			e.msg.seq = st.seq
		}
	}
	key := e.key
	res := c.out.pushSession(sessionID, e)
	c.g.metrics.countYielded(res.yielded)
	switch {
	case !res.ok:
		c.overflow(laneSemantic)
		return
	case key == "":
		c.g.metrics.queuedSemantic.Inc()
		return
	}
	c.g.metrics.queuedReplaceable.Inc()
	if res.replaced {
		st.replaced++
		c.g.metrics.replaced.Inc()
	}
	if res.evicted > 0 {
		st.evicted += res.evicted
		c.g.metrics.evicted.Add(float64(res.evicted))
	}
}

// PublishSession sends a notification to every connection that has the
// session open. A replaceable notification (an intermediate state of a
// streaming message, whose payload is the shared.Message) may be replaced
// in a connection's queue by a newer state of the same message, or
// evicted; it carries the seq of the last semantic frame. Call it only
// after the change it reports has committed.
func (g *Gateway) PublishSession(sessionID, action string, payload any, replaceable bool) {
	var msg *shared.Message
	if m, ok := payload.(shared.Message); ok && m.ID != "" {
		msg = &m
	}
	var raw json.RawMessage
	if !replaceable || msg == nil {
		// A replaceable message state is encoded by each connection's
		// writer (see streamBook), so the whole message is not encoded
		// here for every streamed chunk.
		var err error
		if raw, err = json.Marshal(payload); err != nil {
			g.log.Error("encode session notification", "action", action, "err", err)
			return
		}
	}
	subs := g.sessionFeed.subscribers(sessionID)
	for _, c := range subs {
		c.sendSession(sessionID, action, raw, msg, replaceable)
	}
	g.metrics.notifications.WithLabelValues(action).Add(float64(len(subs)))
}

// PublishWorkspace sends a notification to every connection following the
// workspace's task feed. Call it only after the change it reports has
// committed.
func (g *Gateway) PublishWorkspace(workspaceID, action string, payload any) {
	g.publishWorkspace(workspaceID, action, payload)
}
