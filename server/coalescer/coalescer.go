package coalescer

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/herd-dev/herd/server/clock"
)

// Kind says which stream of an agent turn a chunk belongs to.
type Kind string

const (
	// KindAgent is assistant output: the text the agent addresses to the
	// person.
	KindAgent Kind = "agent"
	// KindThinking is reasoning output.
	KindThinking Kind = "thinking"
)

// kinds lists the kinds by slot, the index of a kind's current message.
var kinds = [...]Kind{KindAgent, KindThinking}

// slot returns the index of k in kinds, and false for an unknown kind.
func (k Kind) slot() (int, bool) {
	switch k {
	case KindAgent:
		return 0, true
	case KindThinking:
		return 1, true
	}
	return 0, false
}

// Op says what an Output asks the Sink to do.
type Op uint8

const (
	// OpOpen creates message Key of kind Kind whose first bytes are Text.
	OpOpen Op = iota + 1
	// OpAppend appends Text to message Key.
	OpAppend
	// OpBarrier passes Event through; every chunk fed before it has been
	// published and every message it follows has ended.
	OpBarrier
)

// String returns the op's lowercase name, for logs and test failures.
func (o Op) String() string {
	switch o {
	case OpOpen:
		return "open"
	case OpAppend:
		return "append"
	case OpBarrier:
		return "barrier"
	}
	return "op(" + strconv.Itoa(int(o)) + ")"
}

// Output is one publication handed to the Sink.
//
// For one message, the Text of its OpOpen followed by the Texts of its
// OpAppends, in output order, is byte for byte the concatenation of the
// chunks it received.
type Output struct {
	// Op says which of the fields below are set.
	Op Op
	// Key identifies the message for OpOpen and OpAppend; it is empty for
	// OpBarrier.
	Key string
	// Kind is the message's kind for OpOpen and OpAppend; it is empty for
	// OpBarrier.
	Kind Kind
	// Text is the message's first bytes (OpOpen) or only the bytes received
	// since its previous publication (OpAppend), never empty for either; it
	// is empty for OpBarrier.
	Text string
	// Event is the value given to Barrier, for OpBarrier; nil otherwise.
	Event any
}

// Sink receives the outputs of one Coalescer. It is called only from the
// goroutine running Run, one output at a time, in order. It may take as long
// as it needs (persisting, publishing): while it runs, undelivered bytes
// accumulate, and once they pass Config.MaxPendingBytes, Chunk and Barrier
// block. A slow Sink therefore slows its own session's producer and nothing
// else. A Sink must not call its Coalescer's methods.
type Sink func(Output)

const (
	// DefaultWindow is the coalescing window used when Config.Window is zero.
	DefaultWindow = 100 * time.Millisecond
	// DefaultMaxPendingBytes is the backpressure threshold used when
	// Config.MaxPendingBytes is zero.
	DefaultMaxPendingBytes = 8 << 20
)

// Config configures a Coalescer. Only Sink is required.
type Config struct {
	// Sink receives the outputs. Required.
	Sink Sink
	// Window is the shortest time between two publications of one message;
	// zero means DefaultWindow.
	Window time.Duration
	// MaxPendingBytes bounds the input not yet handed to the Sink: chunk
	// bytes plus a fixed charge per queued chunk or barrier. Chunk and
	// Barrier block while it is exceeded, so it may be exceeded by at most
	// one chunk. Bytes waiting for their window count too, which caps one
	// session's stream at about MaxPendingBytes per Window (80 MiB/s with
	// the defaults). Zero means DefaultMaxPendingBytes.
	MaxPendingBytes int
	// Clock supplies time; nil means the system clock.
	Clock clock.Clock
	// NewKey returns the key of a new message. It is called from the
	// goroutine running Run and must not return a key twice. Nil means a
	// per-Coalescer sequence: "m1", "m2", ….
	NewKey func() string
	// Metrics receives counts; nil means none are kept. One Metrics is
	// shared by every Coalescer of a process.
	Metrics *Metrics
}

// ErrClosed is returned by Chunk and Barrier once the Coalescer has closed,
// by Close or by the end of Run's context.
var ErrClosed = errors.New("coalescer: closed")

// ErrRunning is returned by a second call to Run.
var ErrRunning = errors.New("coalescer: already running")

// Coalescer turns one session execution's stream of chunks and barriers into
// few publications; see the package documentation. Chunk, Barrier and Close
// may be called from any goroutine; Run must be running for input to be
// published.
type Coalescer struct {
	window  time.Duration
	max     int
	clock   clock.Clock
	sink    Sink
	newKey  func() string
	metrics *Metrics

	wake    chan struct{} // capacity 1: Run has work (input, a timer, closing)
	done    chan struct{} // closed on closing; releases producers waiting for room
	stopped chan struct{} // closed when Run returns

	mu      sync.Mutex
	queue   []item        // guarded by mu: input not yet taken by Run, in order
	pending int           // guarded by mu: the quantity MaxPendingBytes bounds
	woken   bool          // guarded by mu: a wake is sent and queue not yet taken
	closed  bool          // guarded by mu: no more input is accepted
	started bool          // guarded by mu: Run has been called
	room    chan struct{} // guarded by mu: closed once pending is within max; nil while no producer waits

	// The fields below belong to the goroutine running Run.
	spare   []item               // the queue's previous array, reused
	current [len(kinds)]*message // the message each kind's chunks go to, or nil
	live    []*message           // current messages, in the order they were opened
	timer   clock.Timer          // wakes Run when a window ends, or nil
	timerAt time.Time            // when timer fires
}

// New returns a Coalescer for cfg. Start its Run before feeding it.
func New(cfg Config) (*Coalescer, error) {
	if cfg.Sink == nil {
		return nil, errors.New("coalescer: Config.Sink is required")
	}
	if cfg.Window < 0 {
		return nil, fmt.Errorf("coalescer: Config.Window is negative (%v)", cfg.Window)
	}
	if cfg.MaxPendingBytes < 0 {
		return nil, fmt.Errorf("coalescer: Config.MaxPendingBytes is negative (%d)", cfg.MaxPendingBytes)
	}
	c := &Coalescer{
		window:  cfg.Window,
		max:     cfg.MaxPendingBytes,
		clock:   cfg.Clock,
		sink:    cfg.Sink,
		newKey:  cfg.NewKey,
		metrics: cfg.Metrics,
		wake:    make(chan struct{}, 1),
		done:    make(chan struct{}),
		stopped: make(chan struct{}),
		live:    make([]*message, 0, len(kinds)),
	}
	if c.window == 0 {
		c.window = DefaultWindow
	}
	if c.max == 0 {
		c.max = DefaultMaxPendingBytes
	}
	if c.clock == nil {
		c.clock = clock.System{}
	}
	if c.newKey == nil {
		seq := 0
		c.newKey = func() string {
			seq++
			return "m" + strconv.Itoa(seq)
		}
	}
	return c, nil
}
