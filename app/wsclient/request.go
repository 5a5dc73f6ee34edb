package wsclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/herd-dev/herd/shared"
)

// Request failures that carry no server error. Request wraps them with the
// action's name; test with errors.Is.
var (
	// ErrNotConnected: no connection was open, so the request was not sent.
	ErrNotConnected = errors.New("not connected to the server")
	// ErrClosed: the connection closed before the response arrived; the
	// server may or may not have acted on the request.
	ErrClosed = errors.New("connection closed before the response arrived")
	// ErrTimeout: no response came within the request timeout; the server
	// may or may not have acted on the request.
	ErrTimeout = errors.New("no response within the request timeout")
)

// Request sends action with payload (nil for none) and waits for its
// answer. A response payload is decoded into out unless out is nil. An error
// envelope is returned as a *shared.Error. Otherwise a failure wraps
// ErrNotConnected, ErrClosed, ErrTimeout or ctx's error.
func (c *Client) Request(ctx context.Context, action string, payload, out any) error {
	c.mu.Lock()
	cn := c.cur
	c.mu.Unlock()
	if cn == nil {
		return fmt.Errorf("%s: %w", action, ErrNotConnected)
	}
	return c.roundTrip(ctx, cn, action, payload, out, c.opts.RequestTimeout)
}

// RequestWithin is Request for an action the server may take longer than
// the client's RequestTimeout to answer: it waits up to within, when that
// is longer.
func (c *Client) RequestWithin(ctx context.Context, within time.Duration, action string, payload, out any) error {
	c.mu.Lock()
	cn := c.cur
	c.mu.Unlock()
	if cn == nil {
		return fmt.Errorf("%s: %w", action, ErrNotConnected)
	}
	return c.roundTrip(ctx, cn, action, payload, out, max(within, c.opts.RequestTimeout))
}

// roundTrip sends a request on cn and waits up to timeout for its answer.
func (c *Client) roundTrip(ctx context.Context, cn *conn, action string, payload, out any, timeout time.Duration) error {
	id := "c-" + strconv.FormatUint(c.nextID.Add(1), 10)
	frame, err := encodeRequest(id, action, payload)
	if err != nil {
		return err
	}
	reply := cn.register(id)
	defer cn.forget(id)

	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if interrupted := interruption(ctx, wctx, action); interrupted != nil {
		return interrupted
	}
	// The write is bounded by the request timeout but not by the caller:
	// an interrupted write closes the socket, and one caller giving up must
	// not cost every other request its connection.
	writeCtx, cancelWrite := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	err = cn.ws.Write(writeCtx, websocket.MessageText, frame)
	cancelWrite()
	if err != nil {
		if interrupted := interruption(ctx, wctx, action); interrupted != nil {
			return interrupted
		}
		return fmt.Errorf("%s: %w: %v", action, ErrClosed, err)
	}
	if c.opts.OnRequestSent != nil {
		c.opts.OnRequestSent(action)
	}

	select {
	case env := <-reply:
		return decodeReply(action, env, out)
	case <-cn.done:
		err = fmt.Errorf("%s: %w", action, ErrClosed)
	case <-wctx.Done():
		err = interruption(ctx, wctx, action)
	}
	// An answer that arrived just before the failure still counts.
	select {
	case env := <-reply:
		return decodeReply(action, env, out)
	default:
		return err
	}
}

// interruption explains why wctx (derived from ctx with the request
// timeout) is done: the caller's context, else the timeout. It returns nil
// while wctx is live.
func interruption(ctx, wctx context.Context, action string) error {
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("%s: %w", action, ctx.Err())
	case wctx.Err() != nil:
		return fmt.Errorf("%s: %w", action, ErrTimeout)
	default:
		return nil
	}
}

// encodeRequest builds a request frame.
func encodeRequest(id, action string, payload any) ([]byte, error) {
	env := shared.Envelope{ID: id, Type: shared.TypeRequest, Action: action}
	if payload != nil {
		raw, err := json.Marshal(payload)
		if err != nil {
			return nil, fmt.Errorf("encode %s request: %w", action, err)
		}
		env.Payload = raw
	}
	frame, err := json.Marshal(env)
	if err != nil {
		return nil, fmt.Errorf("encode %s request: %w", action, err)
	}
	return frame, nil
}

// decodeReply turns a response or error envelope into Request's result.
func decodeReply(action string, env shared.Envelope, out any) error {
	if env.Type == shared.TypeError {
		var e shared.Error
		if json.Unmarshal(env.Payload, &e) != nil || e.Code == "" {
			return shared.Errorf(shared.CodeInternal, "%s failed and the server's error could not be read", action)
		}
		return &e
	}
	if out == nil || len(env.Payload) == 0 {
		return nil
	}
	if err := json.Unmarshal(env.Payload, out); err != nil {
		return fmt.Errorf("decode %s response: %w", action, err)
	}
	return nil
}

// conn is one open connection and the requests waiting on it.
type conn struct {
	ws *websocket.Conn
	// done is closed when the connection has failed; waiting requests
	// select on it, so they are all rejected at once.
	done chan struct{}
	// opened is when the connection opened, and lastHeard how long after
	// that its latest frame arrived (monotonic, unlike a stored time).
	opened    time.Time
	lastHeard atomic.Int64

	mu      sync.Mutex
	pending map[string]chan shared.Envelope // guarded by mu; by request id
	failed  bool                            // guarded by mu; set by fail
}

// newConn wraps an open connection.
func newConn(ws *websocket.Conn) *conn {
	return &conn{ws: ws, done: make(chan struct{}), opened: time.Now(), pending: make(map[string]chan shared.Envelope)}
}

// heard records that a frame arrived.
func (cn *conn) heard() { cn.lastHeard.Store(int64(time.Since(cn.opened))) }

// idle returns how long ago the latest frame arrived (or the connection
// opened).
func (cn *conn) idle() time.Duration {
	return time.Since(cn.opened) - time.Duration(cn.lastHeard.Load())
}

// register returns the channel on which the answer to id will arrive.
func (cn *conn) register(id string) <-chan shared.Envelope {
	ch := make(chan shared.Envelope, 1)
	cn.mu.Lock()
	cn.pending[id] = ch
	cn.mu.Unlock()
	return ch
}

// forget stops waiting for id; a late answer is then dropped.
func (cn *conn) forget(id string) {
	cn.mu.Lock()
	delete(cn.pending, id)
	cn.mu.Unlock()
}

// deliver hands an answer to the request waiting for it. An answer nobody
// waits for (late, repeated or unknown) is dropped.
func (cn *conn) deliver(env shared.Envelope) {
	cn.mu.Lock()
	ch, ok := cn.pending[env.ID]
	delete(cn.pending, env.ID)
	ok = ok && !cn.failed
	cn.mu.Unlock()
	if ok {
		ch <- env
	}
}

// fail marks the connection as gone, rejecting every waiting request; an
// answer read after it is dropped. Calls after the first do nothing.
func (cn *conn) fail() {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if !cn.failed {
		cn.failed = true
		close(cn.done)
	}
}

// isFailed reports whether fail was called.
func (cn *conn) isFailed() bool {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	return cn.failed
}
