package wsclient

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/herd-dev/herd/shared"
)

// Defaults for the zero fields of Options.
const (
	DefaultRequestTimeout = 10 * time.Second
	DefaultDialTimeout    = 10 * time.Second
	DefaultMinBackoff     = 250 * time.Millisecond
	DefaultMaxBackoff     = 10 * time.Second
	// DefaultPingInterval and DefaultPingTimeout: after about 30 s without
	// a frame from the server the client sends a ping request, and a
	// connection that leaves it unanswered for 15 s is dead.
	DefaultPingInterval = 30 * time.Second
	DefaultPingTimeout  = 15 * time.Second
	// DefaultReadLimit admits the largest response the client expects: a
	// task.list page of 10,000 tasks with their summaries.
	DefaultReadLimit = 64 << 20
)

// Status is the state of the client's connection.
type Status int

// Connection statuses, reported through Options.OnStatus.
const (
	// StatusConnecting: a dial is in progress.
	StatusConnecting Status = iota
	// StatusOnline: a connection is open and requests can be sent.
	StatusOnline
	// StatusOffline: the last dial failed or the connection dropped; the
	// client is waiting to dial again.
	StatusOffline
)

// String returns connecting, online or offline.
func (s Status) String() string {
	switch s {
	case StatusOnline:
		return "online"
	case StatusOffline:
		return "offline"
	default:
		return "connecting"
	}
}

// Options configures a Client. Only URL is required.
type Options struct {
	// URL is the server's WebSocket endpoint, such as ws://host/ws.
	URL string
	// DialOptions are passed to websocket.Dial; in the browser only
	// Subprotocols exist (cookies carry the credentials).
	DialOptions *websocket.DialOptions
	// OnConnect runs after every successful dial, on its own goroutine,
	// with a context that ends when that connection ends. It is where the
	// application boots and subscribes again. It must return once its
	// context is done; the client does not dial again before it returns.
	OnConnect func(ctx context.Context)
	// OnNotification receives every notification envelope, in arrival
	// order, on the reading goroutine. It must return quickly.
	OnNotification func(shared.Envelope)
	// OnRequestSent, when set, runs on the requesting goroutine right after
	// a request frame has been handed to the socket. It must return
	// quickly; the web app's test hooks use it to drop the connection at a
	// chosen moment.
	OnRequestSent func(action string)
	// OnStatus receives every status change on the client's goroutine. It
	// must return quickly and must not call Close.
	OnStatus func(Status)
	// RequestTimeout bounds each request; zero means DefaultRequestTimeout.
	RequestTimeout time.Duration
	// DialTimeout bounds each dial; zero means DefaultDialTimeout.
	DialTimeout time.Duration
	// MinBackoff and MaxBackoff bound the wait between dials; zero means
	// DefaultMinBackoff and DefaultMaxBackoff.
	MinBackoff, MaxBackoff time.Duration
	// ReadLimit is the largest frame accepted from the server; zero means
	// DefaultReadLimit.
	ReadLimit int64
	// PingInterval is how long, give or take a fifth, a connection may go
	// without a frame from the server before the client checks it with a
	// ping request; zero means DefaultPingInterval.
	PingInterval time.Duration
	// PingTimeout is how long that ping may go unanswered before the
	// connection is taken for dead and dropped; zero means
	// DefaultPingTimeout.
	PingTimeout time.Duration
}

// withDefaults returns o with its zero fields set to the defaults.
func (o Options) withDefaults() Options {
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	set(&o.RequestTimeout, DefaultRequestTimeout)
	set(&o.DialTimeout, DefaultDialTimeout)
	set(&o.MinBackoff, DefaultMinBackoff)
	set(&o.MaxBackoff, DefaultMaxBackoff)
	set(&o.PingInterval, DefaultPingInterval)
	set(&o.PingTimeout, DefaultPingTimeout)
	o.MaxBackoff = max(o.MaxBackoff, o.MinBackoff)
	if o.ReadLimit <= 0 {
		o.ReadLimit = DefaultReadLimit
	}
	return o
}

// Client is a reconnecting WebSocket client speaking the herd protocol. Its
// methods are safe for concurrent use.
type Client struct {
	opts Options
	// ctx ends when Close is called.
	ctx    context.Context
	cancel context.CancelFunc
	// nudge holds at most one pending request to end the backoff early.
	nudge  chan struct{}
	nextID atomic.Uint64
	wg     sync.WaitGroup
	start  sync.Once
	stop   sync.Once

	mu     sync.Mutex
	cur    *conn // guarded by mu; nil while not connected
	closed bool  // guarded by mu; set by Close
}

// New returns a client for opts. It does not connect until Start, so the
// caller can keep the client where its callbacks will look for it first.
func New(opts Options) *Client {
	ctx, cancel := context.WithCancel(context.Background())
	return &Client{
		opts:   opts.withDefaults(),
		ctx:    ctx,
		cancel: cancel,
		nudge:  make(chan struct{}, 1),
	}
}

// Start begins connecting in the background and keeps reconnecting until
// Close. Calls after the first, or after Close, do nothing.
func (c *Client) Start() {
	c.start.Do(func() {
		// Under mu, so Close either sees the goroutine counted or stops it
		// from starting.
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.closed {
			c.wg.Go(c.run)
		}
	})
}

// Nudge ends the current wait between dials so the client dials again at
// once. A nudge during a dial skips the wait after it, should the dial
// fail; a nudge while a connection is open is forgotten when it ends.
func (c *Client) Nudge() {
	select {
	case c.nudge <- struct{}{}:
	default:
	}
}

// Close closes the connection with a normal closure, rejects the requests
// still waiting, stops reconnecting and waits for the client's goroutines
// (including a running OnConnect hook) to end. No callback runs after Close
// returns. Close must not be called from a callback.
func (c *Client) Close() {
	c.stop.Do(func() {
		c.mu.Lock()
		c.closed = true
		cur := c.cur
		c.mu.Unlock()

		c.cancel()
		if cur != nil {
			_ = cur.ws.Close(websocket.StatusNormalClosure, "client closed")
		}
		c.wg.Wait()
	})
}

// Drop closes the current connection as if the network had failed: the
// requests waiting on it are rejected with ErrClosed at once, anything the
// server still sends on it is ignored, and the client dials again after
// its backoff. Without a connection it does nothing.
func (c *Client) Drop() {
	c.mu.Lock()
	cur := c.cur
	c.mu.Unlock()
	if cur != nil {
		cur.fail()
		_ = cur.ws.CloseNow()
	}
}

// run dials, serves and backs off until Close.
func (c *Client) run() {
	for attempt := 0; ; attempt++ {
		c.report(StatusConnecting)
		if ws, err := c.dial(); err == nil {
			attempt = 0
			c.serve(ws)
		}
		if c.ctx.Err() != nil {
			return
		}
		c.report(StatusOffline)
		if !c.wait(backoff(attempt, c.opts.MinBackoff, c.opts.MaxBackoff)) {
			return
		}
	}
}

// dial opens one connection.
func (c *Client) dial() (*websocket.Conn, error) {
	ctx, cancel := context.WithTimeout(c.ctx, c.opts.DialTimeout)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, c.opts.URL, c.opts.DialOptions)
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(c.opts.ReadLimit)
	return ws, nil
}

// serve makes ws the current connection, runs the OnConnect hook and the
// keepalive beside it and reads until the connection fails; then it
// rejects the waiting requests and waits for the hook and the keepalive
// to return.
func (c *Client) serve(ws *websocket.Conn) {
	cn := newConn(ws)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		_ = ws.Close(websocket.StatusNormalClosure, "client closed")
		return
	}
	c.cur = cn
	c.mu.Unlock()
	c.report(StatusOnline)

	hookCtx, endHook := context.WithCancel(c.ctx)
	var helpers sync.WaitGroup
	if c.opts.OnConnect != nil {
		helpers.Go(func() { c.opts.OnConnect(hookCtx) })
	}
	helpers.Go(func() { c.keepalive(cn) })

	c.read(cn)

	c.mu.Lock()
	c.cur = nil
	c.mu.Unlock()
	cn.fail()
	endHook()
	_ = ws.CloseNow()
	helpers.Wait()
	// A nudge that came while the connection was open is stale.
	select {
	case <-c.nudge:
	default:
	}
}

// read delivers frames until the connection fails. Frames that are not
// envelopes are dropped: the protocol has nothing to say about them.
func (c *Client) read(cn *conn) {
	for {
		_, data, err := cn.ws.Read(context.Background())
		if err != nil || cn.isFailed() {
			return
		}
		cn.heard()
		var env shared.Envelope
		if json.Unmarshal(data, &env) != nil {
			continue
		}
		switch env.Type {
		case shared.TypeResponse, shared.TypeError:
			cn.deliver(env)
		case shared.TypeNotification:
			if c.opts.OnNotification != nil {
				c.opts.OnNotification(env)
			}
		}
	}
}

// keepalive checks the connection with a ping request whenever nothing
// has come from the server for about PingInterval, and drops it, as a
// network failure would, when the ping goes unanswered for PingTimeout: a
// browser cannot send ping frames, and a dead connection (a phone that
// lost its network) would otherwise go unnoticed until a request timed
// out. The drop leads to the usual reconnect and OnConnect. It ends with
// the connection.
func (c *Client) keepalive(cn *conn) {
	quiet := jittered(c.opts.PingInterval)
	t := time.NewTimer(quiet)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-cn.done:
			return
		}
		if idle := cn.idle(); idle < quiet {
			t.Reset(quiet - idle)
			continue
		}
		err := c.roundTrip(c.ctx, cn, shared.ActionPing, nil, nil, c.opts.PingTimeout)
		if errors.Is(err, ErrTimeout) {
			cn.fail()
			_ = cn.ws.CloseNow()
			return
		}
		quiet = jittered(c.opts.PingInterval)
		t.Reset(quiet)
	}
}

// jittered returns d give or take a fifth, at random, so that clients
// connected together do not ping together.
func jittered(d time.Duration) time.Duration {
	return d - d/5 + rand.N(2*d/5+1)
}

// wait sleeps for d, or less when nudged; it returns false when the client
// is closing.
func (c *Client) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.nudge:
		return true
	case <-c.ctx.Done():
		return false
	}
}

// report tells OnStatus about a status change.
func (c *Client) report(s Status) {
	if c.opts.OnStatus != nil {
		c.opts.OnStatus(s)
	}
}

// backoff returns the wait before dial attempt+1: lo doubled per attempt,
// capped at hi, with "equal jitter" (a random point in the upper half) so
// that many clients dropped together do not return together.
func backoff(attempt int, lo, hi time.Duration) time.Duration {
	d := hi
	if attempt < 32 {
		if v := lo << attempt; v > 0 && v < hi {
			d = v
		}
	}
	half := d / 2
	return half + rand.N(d-half+1)
}
