package loadbench

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
	"syscall"
	"time"

	"github.com/coder/websocket"

	"github.com/herd-dev/herd/shared"
)

// benchReadLimit bounds one inbound frame on a bench connection. Session
// snapshots and full-state message updates can be large.
const benchReadLimit = 64 << 20

// benchCallTimeout bounds one request when the caller's context has no
// earlier deadline.
const benchCallTimeout = 60 * time.Second

// wsClient is one bench connection to the server's /ws. Its reader
// goroutine (readLoop) is the only reader: it matches responses to requests
// by id, counts every frame by action and hands notifications to onNote.
// Requests may be sent from any goroutine. A stalled client stops reading,
// as a browser tab frozen in the background does, so the server's outbound
// queue for it fills.
type wsClient struct {
	conn *websocket.Conn
	ids  atomic.Uint64
	// onNote sees every notification on the reader goroutine; it must not
	// block. It is set before the reader starts and never changes.
	onNote func(benchNote)

	mu       sync.Mutex            // guards the fields below
	pending  map[string]chan reply // in-flight requests by id
	counts   frameCounts
	resume   chan struct{} // non-nil while stalled; closed to resume
	finished bool          // the reader has stopped: no request can be answered
	readErr  error         // why reading stopped

	done chan struct{} // closed when the reader has stopped
}

// benchNote is one notification as the reader received it.
type benchNote struct {
	Action  string
	Payload json.RawMessage
	Seq     uint64
	At      time.Time // when the frame was read
}

// reply is the answer to a request.
type reply struct {
	payload json.RawMessage
	err     error
	at      time.Time // when the answer was read
}

// frameCount is a number of frames and their bytes.
type frameCount struct {
	Frames int64 `json:"frames"`
	Bytes  int64 `json:"bytes"`
}

// frameCounts counts what a connection received, by envelope type and
// action.
type frameCounts struct {
	Notifications map[string]frameCount `json:"notifications"`
	Responses     map[string]frameCount `json:"responses"`
	Errors        map[string]frameCount `json:"errors,omitempty"`
}

func newFrameCounts() frameCounts {
	return frameCounts{
		Notifications: map[string]frameCount{},
		Responses:     map[string]frameCount{},
		Errors:        map[string]frameCount{},
	}
}

// total sums every frame counted.
func (fc frameCounts) total() frameCount {
	var t frameCount
	for _, m := range []map[string]frameCount{fc.Notifications, fc.Responses, fc.Errors} {
		for _, c := range m {
			t.Frames += c.Frames
			t.Bytes += c.Bytes
		}
	}
	return t
}

// merge adds o's counts into fc.
func (fc frameCounts) merge(o frameCounts) {
	mergeCounts(fc.Notifications, o.Notifications)
	mergeCounts(fc.Responses, o.Responses)
	mergeCounts(fc.Errors, o.Errors)
}

func mergeCounts(dst, src map[string]frameCount) {
	for k, c := range src {
		d := dst[k]
		d.Frames += c.Frames
		d.Bytes += c.Bytes
		dst[k] = d
	}
}

// dialBench connects to the server at addr and starts the reader.
func dialBench(ctx context.Context, addr string, onNote func(benchNote)) (*wsClient, error) {
	return dialBenchBuffer(ctx, addr, onNote, 0)
}

// dialBenchBuffer is dialBench with the socket's receive buffer set to
// rcvbuf bytes (SO_RCVBUF; the kernel doubles it) when rcvbuf > 0, as on a
// slow link: a client that stops reading then backs up into the server
// after kilobytes rather than after the megabytes loopback autotuning
// would allow.
func dialBenchBuffer(ctx context.Context, addr string, onNote func(benchNote), rcvbuf int) (*wsClient, error) {
	dctx, cancel := context.WithTimeout(ctx, benchCallTimeout)
	defer cancel()
	var opts *websocket.DialOptions
	if rcvbuf > 0 {
		d := &net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
			var serr error
			err := rc.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf)
			})
			return errors.Join(err, serr)
		}}
		opts = &websocket.DialOptions{HTTPClient: &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}}
	}
	conn, _, err := websocket.Dial(dctx, "ws://"+addr+"/ws", opts)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	conn.SetReadLimit(benchReadLimit)
	if onNote == nil {
		onNote = func(benchNote) {}
	}
	c := &wsClient{
		conn:    conn,
		onNote:  onNote,
		pending: map[string]chan reply{},
		counts:  newFrameCounts(),
		done:    make(chan struct{}),
	}
	go c.readLoop()
	return c, nil
}

// inFrame is the part of an envelope the reader decodes.
type inFrame struct {
	ID      string          `json:"id"`
	Type    shared.Type     `json:"type"`
	Action  string          `json:"action"`
	Payload json.RawMessage `json:"payload"`
	Seq     uint64          `json:"seq"`
}

// readLoop reads until the connection ends. The reader owns the socket's
// read side; it ends when the socket fails or closes (close ends it).
func (c *wsClient) readLoop() {
	var err error
	defer func() {
		c.mu.Lock()
		c.readErr = err
		c.finished = true
		pending := c.pending
		c.pending = map[string]chan reply{}
		c.mu.Unlock()
		for _, ch := range pending {
			ch <- reply{err: fmt.Errorf("connection ended: %w", err)}
		}
		close(c.done)
	}()
	for {
		c.waitWhileStalled()
		var data []byte
		_, data, err = c.conn.Read(context.Background())
		if err != nil {
			return
		}
		at := time.Now()
		var f inFrame
		if jerr := json.Unmarshal(data, &f); jerr != nil {
			c.mu.Lock()
			c.counts.Errors["(undecodable frame)"] = addCount(c.counts.Errors["(undecodable frame)"], len(data))
			c.mu.Unlock()
			continue
		}
		switch f.Type {
		case shared.TypeResponse, shared.TypeError:
			c.mu.Lock()
			if f.Type == shared.TypeResponse {
				c.counts.Responses[f.Action] = addCount(c.counts.Responses[f.Action], len(data))
			} else {
				c.counts.Errors[f.Action] = addCount(c.counts.Errors[f.Action], len(data))
			}
			ch := c.pending[f.ID]
			delete(c.pending, f.ID)
			c.mu.Unlock()
			if ch == nil {
				continue
			}
			r := reply{payload: f.Payload, at: at}
			if f.Type == shared.TypeError {
				we := &shared.Error{}
				if json.Unmarshal(f.Payload, we) != nil {
					we.Code, we.Message = "undecodable", string(f.Payload)
				}
				r.err = we
			}
			ch <- r
		default:
			c.mu.Lock()
			c.counts.Notifications[f.Action] = addCount(c.counts.Notifications[f.Action], len(data))
			c.mu.Unlock()
			c.onNote(benchNote{Action: f.Action, Payload: f.Payload, Seq: f.Seq, At: at})
		}
	}
}

// addCount returns c with one more frame of size bytes.
func addCount(c frameCount, size int) frameCount {
	c.Frames++
	c.Bytes += int64(size)
	return c
}

// waitWhileStalled blocks while the client is stalled.
func (c *wsClient) waitWhileStalled() {
	c.mu.Lock()
	ch := c.resume
	c.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

// stall stops reading after the frame being read, if any.
func (c *wsClient) stall() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.resume == nil {
		c.resume = make(chan struct{})
	}
}

// unstall resumes reading.
func (c *wsClient) unstall() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.resume != nil {
		close(c.resume)
		c.resume = nil
	}
}

// ended reports whether the reader has stopped, and why.
func (c *wsClient) ended() (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.finished, c.readErr
}

// takeCounts returns the frames counted since the last call and resets
// the counters.
func (c *wsClient) takeCounts() frameCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	fc := c.counts
	c.counts = newFrameCounts()
	return fc
}

// close closes the connection normally and waits for the reader. A stalled
// client is resumed first so its reader can see the end.
func (c *wsClient) close() {
	c.unstall()
	_ = c.conn.Close(websocket.StatusNormalClosure, "bench done")
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		_ = c.conn.CloseNow()
		<-c.done
	}
}

// roundTrip sends a request and waits for its answer. It returns the
// response payload and the time from just before the write to the moment
// the answer was read off the socket. An error envelope is a *shared.Error.
func (c *wsClient) roundTrip(ctx context.Context, action string, payload any) (json.RawMessage, time.Duration, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, benchCallTimeout)
		defer cancel()
	}
	id := "b" + strconv.FormatUint(c.ids.Add(1), 10)
	frame, err := json.Marshal(shared.Envelope{ID: id, Type: shared.TypeRequest, Action: action, Payload: mustRaw(payload)})
	if err != nil {
		return nil, 0, fmt.Errorf("encode %s: %w", action, err)
	}
	ch := make(chan reply, 1)
	c.mu.Lock()
	if c.finished {
		rerr := c.readErr
		c.mu.Unlock()
		return nil, 0, fmt.Errorf("%s: connection ended: %w", action, rerr)
	}
	c.pending[id] = ch
	c.mu.Unlock()
	start := time.Now()
	if err := c.conn.Write(ctx, websocket.MessageText, frame); err != nil {
		c.forget(id)
		return nil, 0, fmt.Errorf("send %s: %w", action, err)
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, r.at.Sub(start), fmt.Errorf("%s: %w", action, r.err)
		}
		return r.payload, r.at.Sub(start), nil
	case <-ctx.Done():
		c.forget(id)
		return nil, 0, fmt.Errorf("%s: no answer: %w", action, ctx.Err())
	}
}

// call sends a request and decodes its response into out (unless nil).
func (c *wsClient) call(ctx context.Context, action string, payload, out any) error {
	raw, _, err := c.roundTrip(ctx, action, payload)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decode %s response: %w", action, err)
	}
	return nil
}

func (c *wsClient) forget(id string) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// mustRaw encodes a request payload; the bench only sends payloads that
// encode.
func mustRaw(payload any) json.RawMessage {
	if payload == nil {
		return nil
	}
	b, err := json.Marshal(payload)
	if err != nil {
		panic(fmt.Sprintf("bench: encode payload: %v", err))
	}
	return b
}

// closeDescription describes how a connection ended, from the client's
// side: the close status the server sent, or that it sent none.
func closeDescription(err error) string {
	if err == nil {
		return "open"
	}
	status := websocket.CloseStatus(err)
	if status == -1 {
		return "no close frame: " + err.Error()
	}
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return fmt.Sprintf("%d %s: %s", int(status), status, ce.Reason)
	}
	return status.String()
}
