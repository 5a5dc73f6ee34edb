package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/herd-dev/herd/shared"
)

// maxWorkspaceSubscriptions bounds how many workspace feeds one connection
// may follow.
const maxWorkspaceSubscriptions = 64

var connSeq atomic.Uint64

// conn is one client connection. Its reader goroutine (serve) decodes frames
// and dispatches them; its writer goroutine (writeLoop) is the only one that
// writes to the socket, draining the outbox.
type conn struct {
	g      *Gateway
	ws     *websocket.Conn
	id     uint64
	remote string
	out    *outbox

	ctx    context.Context // cancelled when the connection ends
	cancel context.CancelFunc

	requests sync.WaitGroup // running request goroutines
	// reads and writes count the reader's socket reads and the writer's
	// frame writes, twice each: odd while one is in progress (see
	// keepalive).
	reads, writes atomic.Uint64

	closeOnce sync.Once
	closeReq  chan struct{} // closed when a close is requested
	closeCode websocket.StatusCode
	closeMsg  string

	mu       sync.Mutex                // guards sessions
	sessions map[string]*sessionStream // the open sessions' stream state

	// focus is the session the client shows in front, and the release of
	// its git focus. Only ordered actions and serve's teardown touch them,
	// one at a time.
	focus        string
	releaseFocus func()
}

func newConn(g *Gateway, ws *websocket.Conn, remote string) *conn {
	ctx, cancel := context.WithCancel(context.Background())
	return &conn{
		g:      g,
		ws:     ws,
		id:     connSeq.Add(1),
		remote: remote,
		out: newOutbox(outboxBounds{
			maxOutstanding: g.cfg.MaxInFlight, maxAnswerBytes: g.cfg.MaxAnswerBytes,
			semanticCap: g.cfg.SemanticCap, allowance: g.cfg.Allowance, maxBytes: g.cfg.MaxQueuedBytes,
		}),
		ctx:      ctx,
		cancel:   cancel,
		closeReq: make(chan struct{}),
		sessions: make(map[string]*sessionStream),
	}
}

// serve runs the connection until it ends, then releases everything it held.
func (c *conn) serve() {
	c.ws.SetReadLimit(c.g.cfg.MaxFrameBytes)
	var helpers sync.WaitGroup
	helpers.Go(c.writeLoop)
	helpers.Go(c.keepalive)

	c.readLoop()

	c.cancel()
	c.requests.Wait()
	helpers.Wait()
	c.ws.CloseNow()
	c.g.feed.drop(c)
	c.g.sessionFeed.drop(c)
	c.out.close()
	c.setFocus("", nil)
	c.mu.Lock()
	streams := c.sessions
	c.sessions = map[string]*sessionStream{}
	c.mu.Unlock()
	for id, st := range streams {
		c.logStream(id, st)
	}
}

// setFocus records the focused session and releases the previous one's
// git focus.
func (c *conn) setFocus(sessionID string, release func()) {
	if c.releaseFocus != nil {
		c.releaseFocus()
	}
	c.focus, c.releaseFocus = sessionID, release
}

// readLoop reads frames until the connection fails or closes. Before each
// read it takes a slot for the frame's answer, so a client with too much
// unanswered or unread stops being read (see outbox); every frame read is
// then answered exactly once, even one that cannot be decoded.
func (c *conn) readLoop() {
	for {
		if !c.out.admit(c.ctx) {
			return
		}
		c.reads.Add(1)
		typ, data, err := c.ws.Read(c.ctx)
		c.reads.Add(1)
		if err != nil {
			c.noteReadEnd(err)
			return
		}
		if typ != websocket.MessageText {
			c.replyError("", "", shared.Errorf(shared.CodeBadRequest, "binary frames are not supported; send JSON text frames"))
			continue
		}
		env, err := shared.DecodeRequest(data)
		if err != nil {
			c.replyError(env.ID, env.Action, err)
			continue
		}
		c.dispatch(env)
	}
}

// noteReadEnd records why reading stopped.
func (c *conn) noteReadEnd(err error) {
	reason := "client_closed"
	switch status := websocket.CloseStatus(err); {
	case status == websocket.StatusMessageTooBig:
		reason = "frame_too_big"
	case status == -1 && !errors.Is(err, context.Canceled):
		var ce websocket.CloseError
		if !errors.As(err, &ce) {
			reason = "read_error"
		}
	}
	c.closeOnce.Do(func() {
		c.g.metrics.closes.WithLabelValues(reason).Inc()
	})
}

// writeLoop drains the outbox until the connection ends or a close is
// requested, bounding every write with the write timeout. The connection
// ends with it: nothing else could answer the reader's requests.
func (c *conn) writeLoop() {
	defer c.cancel()
	book := newStreamBook()
	for {
		select {
		case <-c.closeReq:
			c.ws.Close(c.closeCode, c.closeMsg)
			return
		case <-c.ctx.Done():
			return
		case <-c.out.wake:
		}
		for {
			select {
			case <-c.closeReq:
				c.ws.Close(c.closeCode, c.closeMsg)
				return
			default:
			}
			e, ok := c.out.next()
			if !ok {
				break
			}
			frame, err := book.frame(e)
			if err != nil {
				c.g.log.Error("encode session notification", "conn", c.id, "err", err)
				continue
			}
			ctx, cancel := context.WithTimeout(c.ctx, c.g.cfg.WriteTimeout)
			c.writes.Add(1)
			err = c.ws.Write(ctx, websocket.MessageText, frame)
			c.writes.Add(1)
			cancel()
			if err != nil {
				c.closeOnce.Do(func() {
					c.g.metrics.closes.WithLabelValues("write_failed").Inc()
				})
				c.ws.CloseNow()
				return
			}
			c.out.written(e)
		}
	}
}

// closeWith asks the writer to close the connection with a status and a
// reason; reason is also the metrics label. Only the first request counts.
func (c *conn) closeWith(code websocket.StatusCode, msg, reason string) {
	c.closeOnce.Do(func() {
		c.closeCode, c.closeMsg = code, msg
		c.g.metrics.closes.WithLabelValues(reason).Inc()
		c.g.log.Info("closing connection", "conn", c.id, "remote", c.remote, "reason", reason)
		close(c.closeReq)
	})
}

// overflow closes the connection because a lane could not take a frame:
// a client that cannot keep up reconnects and reconciles rather than
// silently missing an ordered notification. An answer never overflows,
// since each has a slot; should one lack it, this is the guard.
func (c *conn) overflow(lane laneClass) {
	select {
	case <-c.ctx.Done():
		return // already ending; nothing to reconcile
	default:
	}
	c.closeWith(websocket.StatusTryAgainLater, string(lane)+" queue full; reconnect to resynchronise", string(lane)+"_overflow")
}

// reply queues the response to a request.
func (c *conn) reply(id, action string, payload any) {
	env, err := shared.NewResponse(id, action, payload, c.g.cfg.Now())
	if err != nil {
		c.g.log.Error("encode response", "action", action, "err", err)
		c.replyError(id, action, shared.Errorf(shared.CodeInternal, "response could not be encoded"))
		return
	}
	c.sendEnvelope(env)
}

// replyError queues an error envelope. Errors without a protocol code are
// logged here, once, and reported to the client as internal.
func (c *conn) replyError(id, action string, err error) {
	var pe *shared.Error
	if !errors.As(err, &pe) {
		c.g.log.Error("request failed", "conn", c.id, "action", action, "id", id, "err", err)
		pe = shared.Errorf(shared.CodeInternal, "internal error; the server log has details")
	}
	c.sendEnvelope(shared.NewErrorEnvelope(id, action, pe, c.g.cfg.Now()))
}

// sendEnvelope queues an answer. One that cannot be encoded is answered
// as internal instead, so the request still gets exactly one answer and
// its slot is freed.
func (c *conn) sendEnvelope(env shared.Envelope) {
	frame, err := json.Marshal(env)
	if err != nil {
		c.g.log.Error("encode envelope", "action", env.Action, "err", err)
		internal := shared.Errorf(shared.CodeInternal, "the answer could not be encoded; the server log has details")
		frame, _ = json.Marshal(shared.NewErrorEnvelope(env.ID, env.Action, internal, c.g.cfg.Now()))
	}
	if !c.out.pushControl(frame) {
		c.overflow(laneControl)
	}
}

// join subscribes the connection to a workspace feed; joining twice is
// harmless.
func (c *conn) join(workspaceID string) error {
	if _, full := c.g.feed.join(workspaceID, c, maxWorkspaceSubscriptions); full {
		return shared.Errorf(shared.CodeBadRequest, "a connection may follow at most %d workspaces; unsubscribe from one first", maxWorkspaceSubscriptions)
	}
	return nil
}

// leave unsubscribes the connection from a workspace feed.
func (c *conn) leave(workspaceID string) {
	c.g.feed.leave(workspaceID, c)
}

// requestContext bounds one request's work: by RequestTimeout, or by
// the action's own timeout when that is longer.
func (c *conn) requestContext(timeout time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(c.ctx, max(timeout, c.g.cfg.RequestTimeout))
}
