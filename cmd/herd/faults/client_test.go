package faults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/herd-dev/herd/shared"
)

// errClosed says the connection ended before the request was answered:
// the outcome is unknown.
var errClosed = errors.New("connection closed before the answer")

// client speaks the wire protocol as a script would: JSON envelopes over
// one WebSocket, requests correlated by id, notifications handed to a
// callback on the reading goroutine.
type client struct {
	conn   *websocket.Conn
	nextID atomic.Int64
	notify func(action string, payload json.RawMessage)

	mu      sync.Mutex               // guards waiting
	waiting map[string]chan envelope // request id → its answer
	idless  chan envelope            // errors that carry no id
	done    chan struct{}            // closed when reading stops
	readErr error                    // why reading stopped; set before done closes
}

// envelope is one frame from the server.
type envelope struct {
	ID      string          `json:"id"`
	Type    shared.Type     `json:"type"`
	Action  string          `json:"action"`
	Payload json.RawMessage `json:"payload"`
}

// dialOptions shape the upgrade request.
type dialOptions struct {
	header http.Header
	// local is the client's source address (a 127.0.0.x for the
	// per-address auth limit); empty lets the kernel choose.
	local string
	// notify receives every notification; it runs on the reading
	// goroutine and must not block.
	notify func(action string, payload json.RawMessage)
}

// dial opens a WebSocket to addr. On a refused upgrade the response says
// why.
func dial(ctx context.Context, addr string, o dialOptions) (*client, *http.Response, error) {
	hc := http.DefaultClient
	if o.local != "" {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(o.local)}}
		hc = &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	}
	conn, resp, err := websocket.Dial(ctx, "ws://"+addr+"/ws", &websocket.DialOptions{HTTPHeader: o.header, HTTPClient: hc})
	if err != nil {
		return nil, resp, err
	}
	conn.SetReadLimit(64 << 20)
	c := &client{
		conn: conn, notify: o.notify, waiting: map[string]chan envelope{},
		idless: make(chan envelope, 64), done: make(chan struct{}),
	}
	go c.read()
	return c, resp, nil
}

// read delivers frames until the connection ends.
func (c *client) read() {
	defer close(c.done)
	for {
		_, data, err := c.conn.Read(context.Background())
		if err != nil {
			c.readErr = err
			return
		}
		var env envelope
		if err := json.Unmarshal(data, &env); err != nil {
			c.readErr = fmt.Errorf("server sent a frame that is not JSON: %q", data)
			c.conn.CloseNow()
			return
		}
		switch {
		case env.Type == shared.TypeNotification:
			if c.notify != nil {
				c.notify(env.Action, env.Payload)
			}
		case env.ID == "":
			select {
			case c.idless <- env:
			default: // nobody asked for it: dropped, as a script would
			}
		default:
			c.mu.Lock()
			ch := c.waiting[env.ID]
			delete(c.waiting, env.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- env
			}
		}
	}
}

// close ends the connection normally and waits for reading to stop.
func (c *client) close() {
	_ = c.conn.Close(websocket.StatusNormalClosure, "")
	<-c.done
}

// expect registers interest in the answer to id before the request is
// sent.
func (c *client) expect(id string) chan envelope {
	ch := make(chan envelope, 1)
	c.mu.Lock()
	c.waiting[id] = ch
	c.mu.Unlock()
	return ch
}

// await waits for an answer registered with expect.
func (c *client) await(ctx context.Context, id string, ch chan envelope) (envelope, error) {
	defer func() {
		c.mu.Lock()
		delete(c.waiting, id)
		c.mu.Unlock()
	}()
	select {
	case env := <-ch:
		return env, nil
	case <-c.done:
		select {
		case env := <-ch: // answered just before the end
			return env, nil
		default:
		}
		return envelope{}, fmt.Errorf("%w: %v", errClosed, c.readErr)
	case <-ctx.Done():
		return envelope{}, fmt.Errorf("%w: no answer: %v", errClosed, ctx.Err())
	}
}

// call sends one request and decodes its response into out (when not
// nil). A protocol error comes back as a *shared.Error; errClosed wraps
// every failure to get an answer.
func (c *client) call(ctx context.Context, action string, payload, out any) error {
	id := "c-" + strconv.FormatInt(c.nextID.Add(1), 10)
	frame, err := json.Marshal(map[string]any{"id": id, "type": "request", "action": action, "payload": payload})
	if err != nil {
		return err
	}
	env, err := c.roundTrip(ctx, id, websocket.MessageText, frame)
	if err != nil {
		return err
	}
	return decodeAnswer(env, out)
}

// roundTrip sends a frame expected to be answered under id.
func (c *client) roundTrip(ctx context.Context, id string, typ websocket.MessageType, frame []byte) (envelope, error) {
	ch := c.expect(id)
	if err := c.conn.Write(ctx, typ, frame); err != nil {
		c.mu.Lock()
		delete(c.waiting, id)
		c.mu.Unlock()
		return envelope{}, fmt.Errorf("%w: write: %v", errClosed, err)
	}
	return c.await(ctx, id, ch)
}

// decodeAnswer turns a response into out and an error envelope into a
// *shared.Error.
func decodeAnswer(env envelope, out any) error {
	switch env.Type {
	case shared.TypeResponse:
		if out == nil {
			return nil
		}
		return json.Unmarshal(env.Payload, out)
	case shared.TypeError:
		var e shared.Error
		if err := json.Unmarshal(env.Payload, &e); err != nil {
			return fmt.Errorf("undecodable error payload %s: %w", env.Payload, err)
		}
		return &e
	}
	return fmt.Errorf("answer of unexpected type %q", env.Type)
}

// codeOf returns a protocol error's code, "" for success and "closed"
// when no answer came.
func codeOf(err error) string {
	var pe *shared.Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &pe):
		return string(pe.Code)
	case errors.Is(err, errClosed):
		return "closed"
	}
	return "transport: " + err.Error()
}

// timeout bounds one request of the suite.
func timeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
