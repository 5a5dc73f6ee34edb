package agent

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/herd-dev/herd/shared"
)

// ErrTurnInProgress is returned by Prompt while another prompt of the same
// execution is running; ACP allows one turn per session at a time, except
// for adapters with Capabilities.Handoff.
var ErrTurnInProgress = errors.New("agent turn already in progress")

// errPeerGone says a call failed because the agent's output ended; the
// execution's own error explains why.
var errPeerGone = errors.New("agent connection ended")

// Options configure Start.
type Options struct {
	// Profile says what to run. Its Provider selects the adapter
	// capabilities.
	Profile Profile
	// Cwd is the absolute path of an existing directory: the process's
	// working directory and the ACP session's cwd.
	Cwd string
	// Handler receives events and requests. Required.
	Handler Handler
	// StartTimeout bounds initialize plus session/new; default 60s (npx
	// may download the adapter on first use).
	StartTimeout time.Duration
	// KillGrace is how long teardown waits after SIGTERM before SIGKILL,
	// and after the agent's exit for its output to drain; default 3s.
	KillGrace time.Duration
	// ClientVersion is the herd version sent in initialize.
	ClientVersion string
	// Nice, from 1 to 19, lowers the CPU priority of the agent and of
	// everything it starts (builds, tests), so that under agent load the
	// server still answers its clients first; 0 leaves it as herd's.
	Nice int
	// Logger receives the SDK's connection diagnostics; nil discards them.
	Logger *slog.Logger
	// Trace, when set, receives a copy of every frame the agent writes,
	// in wire order, from the goroutine that reads them: it must return
	// quickly. Fixtures of real agents are recorded with it.
	Trace func(frame []byte)
	// ResumeSessionID is the agent's id of an earlier ACP session to
	// continue (see Execution.Restore); "" opens a new one.
	ResumeSessionID string
}

func (o Options) validate() error {
	switch {
	case o.Profile.Command == "":
		return fmt.Errorf("profile %q has no command", o.Profile.ID)
	case o.Handler == nil:
		return errors.New("no handler")
	case !filepath.IsAbs(o.Cwd):
		return fmt.Errorf("cwd %q is not an absolute path", o.Cwd)
	case o.Nice < 0 || o.Nice > 19:
		return fmt.Errorf("nice %d is not between 0 and 19", o.Nice)
	}
	if fi, err := os.Stat(o.Cwd); err != nil {
		return fmt.Errorf("cwd: %w", err)
	} else if !fi.IsDir() {
		return fmt.Errorf("cwd %q is not a directory", o.Cwd)
	}
	return nil
}

// Execution is one running agent process and its ACP session. Its methods
// are safe for concurrent use.
type Execution struct {
	opts      Options
	caps      Capabilities
	cmd       *exec.Cmd
	stdin     *stdinWriter
	stdout    *os.File
	stderr    ring
	reader    *wireReader
	conn      *acp.ClientSideConnection
	seq       *sequencer
	sessionID acp.SessionId
	turn      sync.Mutex
	// restore, authMethods, resumable and promptCaps are set by the handshake, before
	// Start returns, and read-only afterwards.
	restore     Restore
	authMethods []shared.AuthMethod
	resumable   bool
	promptCaps  shared.PromptCapabilities

	stopOnce sync.Once
	stop     chan struct{} // closed to start teardown
	exited   chan struct{} // closed when the process has been reaped
	done     chan struct{} // closed when everything has ended
	state    *os.ProcessState
	waitErr  error
	requests sync.WaitGroup // Handler requests in flight

	mu sync.Mutex
	// err is why the execution ended; closing says Close was called;
	// stopping says teardown began; pending cancels in-flight Handler
	// requests; nextReq numbers them; work is the turn-bound background
	// work of the open prompts. Guarded by mu.
	err      error
	closing  bool
	stopping bool
	pending  map[uint64]context.CancelFunc
	nextReq  uint64
	work     turnWork

	// cfgMu guards config, the session's configuration (config.go), and
	// configAt, the Seq of its latest state.
	cfgMu    sync.Mutex
	config   sessionConfig
	configAt uint64

	// ignored counts session updates that are not events; replayed the
	// updates of a session/load's replay, which are dropped.
	ignored, replayed atomic.Uint64
}

// Start spawns the profile's command in opts.Cwd, speaks initialize
// (protocol version 1) and opens the ACP session — continuing
// opts.ResumeSessionID when the agent can (see openSession), else with
// session/new — and returns the running execution. herd offers the agent no file system or terminal methods
// (they stay off in clientCapabilities): agents use their own tools inside
// Cwd. If the command cannot start, the agent exits, sends a malformed
// frame or does not answer within StartTimeout, Start returns an error
// with the agent's stderr tail and leaves nothing running. Its message
// says what to do: what the profile lacks on this machine, how to
// authenticate the agent (an *AuthRequiredError), or how to look into an
// agent that exits at start.
func Start(ctx context.Context, opts Options) (*Execution, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("start agent %s: %w", opts.Profile.ID, err)
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 60 * time.Second
	}
	if opts.KillGrace <= 0 {
		opts.KillGrace = 3 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	e := &Execution{
		opts: opts, caps: CapabilitiesOf(opts.Profile.Provider), seq: newSequencer(),
		stop: make(chan struct{}), exited: make(chan struct{}), done: make(chan struct{}),
		pending: make(map[uint64]context.CancelFunc),
	}
	if err := e.spawn(); err != nil {
		if missing := opts.Profile.Missing(); missing != "" {
			err = fmt.Errorf("%w; the profile %s", err, missing)
		}
		return nil, fmt.Errorf("start agent %s: %w", opts.Profile.ID, err)
	}
	if err := e.handshake(ctx); err != nil {
		e.requestStop()
		<-e.done
		if errors.Is(err, errPeerGone) {
			err = e.Err()
		}
		var exit *ExitError
		if tail := e.stderr.tail(tailLimit); tail != "" && !errors.As(err, &exit) {
			err = fmt.Errorf("%w; stderr: %s", err, tail)
		}
		if errors.As(err, &exit) {
			if missing := opts.Profile.Missing(); missing != "" {
				err = fmt.Errorf("%w; the profile %s", err, missing)
			} else {
				err = exitedAtStart(opts.Profile, err)
			}
		}
		return nil, fmt.Errorf("start agent %s: %w", opts.Profile.ID, err)
	}
	return e, nil
}

// spawn starts the process and the goroutines that serve it.
func (e *Execution) spawn() error {
	inR, inW, err := os.Pipe()
	if err != nil {
		return err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return err
	}
	cmd := command(e.opts.Profile, e.opts.Cwd)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, &e.stderr
	cmd.WaitDelay = e.opts.KillGrace
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return err
	}
	if e.opts.Nice > 0 {
		// The whole process group: every thread the agent has started
		// by now, and so every thread and process it starts later.
		if err := syscall.Setpriority(syscall.PRIO_PGRP, cmd.Process.Pid, e.opts.Nice); err != nil {
			e.opts.Logger.Warn("lower the agent's CPU priority", "pid", cmd.Process.Pid, "err", err)
		}
	}
	e.cmd, e.stdin, e.stdout = cmd, &stdinWriter{f: inW}, outR
	e.reader = &wireReader{src: bufio.NewReaderSize(outR, 64<<10), seq: e.seq, violation: e.fail, trace: e.opts.Trace}
	gate := NewReadGate(e.reader)
	e.conn = acp.NewClientSideConnection(client{e}, e.stdin, gate)
	e.conn.SetLogger(e.opts.Logger)
	gate.Open()
	go e.seq.run(e.opts.Handler)
	go e.wait()
	go e.supervise()
	return nil
}

// handshake runs initialize and opens the session within StartTimeout.
func (e *Execution) handshake(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, e.opts.StartTimeout)
	defer cancel()
	init, err := e.conn.Initialize(ctx, acp.InitializeRequest{
		ProtocolVersion:    acp.ProtocolVersionNumber,
		ClientCapabilities: acp.ClientCapabilities{Meta: clientMeta},
		ClientInfo:         &acp.Implementation{Name: "herd", Version: e.opts.ClientVersion},
	})
	if err != nil {
		return e.startError(ctx, "initialize", err)
	}
	if init.ProtocolVersion != acp.ProtocolVersionNumber {
		return fmt.Errorf("initialize: agent speaks ACP version %d, herd speaks %d",
			init.ProtocolVersion, acp.ProtocolVersionNumber)
	}
	e.authMethods = authMethodsOf(e.opts.Profile.Provider, init.AuthMethods)
	caps := init.AgentCapabilities
	e.resumable = caps.SessionCapabilities.Resume != nil || caps.LoadSession
	e.promptCaps = promptCapabilitiesOf(caps.PromptCapabilities)
	return e.openSession(ctx, caps)
}

// callError explains why a request to the agent failed.
func (e *Execution) callError(ctx context.Context, method string, err error) error {
	if e.stdin.broken.Load() {
		return errPeerGone
	}
	select {
	case <-e.conn.Done():
		return errPeerGone
	default:
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s: no answer within %v", method, e.opts.StartTimeout)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
	var re *acp.RequestError
	if errors.As(err, &re) {
		return fmt.Errorf("%s: %w", method, agentError(re))
	}
	return fmt.Errorf("%s: %w", method, err)
}

// stdinWriter is the agent's stdin. A failed write means the agent is gone,
// which makes the SDK's error for the request that wrote a transport error
// rather than an answer.
type stdinWriter struct {
	f      *os.File
	broken atomic.Bool
}

// Write writes to the pipe and remembers a failure.
func (w *stdinWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err != nil {
		w.broken.Store(true)
	}
	return n, err
}

// SessionID returns the agent's id for the execution's ACP session.
func (e *Execution) SessionID() string { return string(e.sessionID) }

// Pid returns the agent's process id, which is also its process group id.
func (e *Execution) Pid() int { return e.cmd.Process.Pid }

// Stderr returns the last 64 KiB the agent wrote to stderr.
func (e *Execution) Stderr() string { return e.stderr.tail(stderrLimit) }

// Done is closed when the execution has ended: the process group is gone,
// every event read before the end has been delivered and no Handler method
// is running or will be called again.
func (e *Execution) Done() <-chan struct{} { return e.done }

// Err returns nil while the execution runs and why it ended once Done is
// closed: ErrClosed after Close, an *ExitError when the agent exited on its
// own, an error wrapping ErrProtocol after a malformed frame.
func (e *Execution) Err() error {
	select {
	case <-e.done:
	default:
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

// Stats are an execution's delivery counters.
type Stats struct {
	// Events is how many events OnEvent received.
	Events uint64
	// Ignored counts session updates that are not events (see Event).
	Ignored uint64
	// Replayed counts the updates a session/load replayed, which are
	// history the client has, not events.
	Replayed uint64
	// Stalls counts the times reading the agent's output paused because
	// the Handler was a full window behind.
	Stalls uint64
	// Dropped counts events that arrived after delivery had stopped.
	Dropped uint64
}

// Stats returns the execution's delivery counters.
func (e *Execution) Stats() Stats {
	return Stats{
		Events: e.seq.delivered.Load(), Ignored: e.ignored.Load(), Replayed: e.replayed.Load(),
		Stalls: e.seq.stalls.Load(), Dropped: e.seq.dropped.Load(),
	}
}
