package mockagent

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/herd-dev/herd/server/agent"
)

// Run runs `herd mock-agent [--slow-start MS]`: the scripted agent (see
// the package doc) on stdin and stdout until stdin closes or ctx ends; logs
// go to stderr. version is the agent version it reports in initialize.
func Run(ctx context.Context, version string, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mock-agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	slowStart := fs.Int("slow-start", 0, "milliseconds to wait before answering initialize (env HERD_MOCK_SLOW_START_MS)")
	stateDir := fs.String("state-dir", os.Getenv("HERD_MOCK_STATE_DIR"), "directory that keeps each session's history across processes (env HERD_MOCK_STATE_DIR)")
	configMode := fs.String("config", cmp.Or(os.Getenv("HERD_MOCK_CONFIG"), configOptions), "how the session's settings are offered: options, legacy (modes and models) or none (env HERD_MOCK_CONFIG)")
	textOnly := fs.Bool("text-only", os.Getenv("HERD_MOCK_TEXT_ONLY") == "1", "advertise no prompt content beyond text (env HERD_MOCK_TEXT_ONLY=1); otherwise images and embedded context")
	restoreMode := fs.String("restore", os.Getenv("HERD_MOCK_RESTORE"), "with --state-dir, how a later process continues a session: resume, load or none (env HERD_MOCK_RESTORE; default resume)")
	if v := os.Getenv("HERD_MOCK_SLOW_START_MS"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms < 0 {
			return fmt.Errorf("HERD_MOCK_SLOW_START_MS: %q is not a number of milliseconds", v)
		}
		*slowStart = ms
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *slowStart < 0 || fs.NArg() > 0 {
		return fmt.Errorf("usage: herd mock-agent [--slow-start MS] [--text-only] [--config options|legacy|none] [--state-dir DIR [--restore resume|load|none]]")
	}
	if *configMode != configOptions && *configMode != configLegacy && *configMode != configNone {
		return fmt.Errorf("--config: %q is not options, legacy or none", *configMode)
	}
	switch {
	case *stateDir == "" && *restoreMode != "":
		return fmt.Errorf("--restore %s needs --state-dir", *restoreMode)
	case *stateDir == "":
	case *restoreMode == "":
		*restoreMode = restoreResume
	case *restoreMode != restoreResume && *restoreMode != restoreLoad && *restoreMode != restoreNone:
		return fmt.Errorf("--restore: %q is not resume, load or none", *restoreMode)
	}
	if *stateDir != "" {
		if err := os.MkdirAll(*stateDir, 0o700); err != nil {
			return fmt.Errorf("--state-dir: %w", err)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := &mock{
		ctx: ctx, version: version, slowStart: time.Duration(*slowStart) * time.Millisecond,
		log: slog.New(slog.NewTextHandler(stderr, nil)), sessions: make(map[acp.SessionId]*session),
		stateDir: *stateDir, restoreMode: *restoreMode, configMode: *configMode, textOnly: *textOnly,
	}
	gate := agent.NewReadGate(stdin)
	m.conn = acp.NewAgentSideConnection(m, stdout, gate)
	m.conn.SetLogger(m.log)
	gate.Open()
	select {
	case <-m.conn.Done():
	case <-ctx.Done():
	}
	cancel()
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.background.Wait()
	return nil
}

// mock is the scripted agent. Sessions live until the process ends.
type mock struct {
	ctx       context.Context // ends with the process; bounds background work
	conn      *acp.AgentSideConnection
	log       *slog.Logger
	version   string // reported in initialize
	slowStart time.Duration
	// stateDir keeps session histories across processes ("" keeps them
	// in memory only); restoreMode is how a later process continues them.
	stateDir, restoreMode string
	configMode            string // how settings are offered: configOptions, configLegacy or configNone
	// textOnly advertises no prompt content beyond text.
	textOnly bool
	clarify  atomic.Bool  // the client announced agent.ClarifyMethod
	seq      atomic.Int64 // numbers sessions and messages
	cancels  atomic.Int64 // counts session/cancel notifications
	mu       sync.Mutex   // guards sessions, their turns, and closed
	sessions map[acp.SessionId]*session
	closed   bool // set at shutdown: no background work may start
	// background counts the goroutines of background scenarios.
	background sync.WaitGroup
}

// goBackground runs f on a goroutine that Run waits for, unless the
// agent is shutting down.
func (m *mock) goBackground(f func()) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	m.background.Add(1)
	go func() {
		defer m.background.Done()
		f()
	}()
	return true
}

// Initialize waits the slow-start delay, then offers no optional methods
// but the restore mode's: sessionCapabilities.resume or loadSession. It
// takes images and embedded context in prompts, unless textOnly.
func (m *mock) Initialize(ctx context.Context, p acp.InitializeRequest) (acp.InitializeResponse, error) {
	if err := pause(ctx, m.slowStart); err != nil {
		return acp.InitializeResponse{}, err
	}
	herd, _ := p.ClientCapabilities.Meta["herd"].(map[string]any)
	m.clarify.Store(herd["clarify"] == true)
	var caps acp.AgentCapabilities
	if !m.textOnly {
		caps.PromptCapabilities = acp.PromptCapabilities{Image: true, EmbeddedContext: true}
	}
	switch m.restoreMode {
	case restoreResume:
		caps.SessionCapabilities.Resume = &acp.SessionResumeCapabilities{}
	case restoreLoad:
		caps.LoadSession = true
	}
	return acp.InitializeResponse{
		ProtocolVersion:   acp.ProtocolVersionNumber,
		AgentInfo:         &acp.Implementation{Name: "herd-mock-agent", Version: m.version},
		AgentCapabilities: caps,
		AuthMethods:       []acp.AuthMethod{},
	}, nil
}

// NewSession opens a session in the given absolute cwd.
func (m *mock) NewSession(_ context.Context, p acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	if !filepath.IsAbs(p.Cwd) {
		return acp.NewSessionResponse{}, acp.NewInvalidParams(map[string]any{"error": "cwd must be absolute"})
	}
	id, err := newSessionID()
	if err != nil {
		return acp.NewSessionResponse{}, err
	}
	s := &session{Cwd: p.Cwd}
	if err := m.save(id, s); err != nil {
		return acp.NewSessionResponse{}, acp.NewInternalError(map[string]any{"error": err.Error()})
	}
	m.mu.Lock()
	m.sessions[id] = s
	m.mu.Unlock()
	options, modes, models := m.sessionConfig(s)
	return acp.NewSessionResponse{SessionId: id, ConfigOptions: options, Modes: modes, Models: models}, nil
}

// Prompt plays one turn and adds it to the session's history.
func (m *mock) Prompt(ctx context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	m.mu.Lock()
	s, ok := m.sessions[p.SessionId]
	m.mu.Unlock()
	if !ok {
		return acp.PromptResponse{}, acp.NewInvalidParams(map[string]any{"error": "unknown session " + string(p.SessionId)})
	}
	var text strings.Builder
	for _, b := range p.Prompt {
		if b.Text != nil {
			text.WriteString(b.Text.Text)
		}
	}
	t := &turn{m: m, ctx: ctx, sid: p.SessionId, s: s, cwd: s.Cwd, msg: "msg-" + strconv.FormatInt(m.seq.Add(1), 10), cancels: m.cancels.Load(), blocks: p.Prompt}
	m.mu.Lock()
	s.running++
	m.mu.Unlock()
	err := t.play(text.String())
	m.mu.Lock()
	s.running--
	s.Turns = append(s.Turns, exchange{Prompt: text.String(), Answer: t.said.String()})
	saveErr := m.save(p.SessionId, s)
	m.mu.Unlock()
	if saveErr != nil {
		m.log.Error("save session history", "session", p.SessionId, "err", saveErr)
	}
	superseded := t.held && m.cancels.Load() == t.cancels
	switch {
	case ctx.Err() != nil && !superseded, errors.Is(err, errWithdrawn):
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	case err != nil:
		return acp.PromptResponse{}, err
	}
	return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
}

// Cancel counts the cancellation; the SDK ends the running Prompt's
// context.
func (m *mock) Cancel(context.Context, acp.CancelNotification) error {
	m.cancels.Add(1)
	return nil
}

// Authenticate is not offered: the mock lists no auth methods.
func (m *mock) Authenticate(context.Context, acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	return acp.AuthenticateResponse{}, acp.NewMethodNotFound(acp.AgentMethodAuthenticate)
}

// CloseSession is not offered.
func (m *mock) CloseSession(context.Context, acp.CloseSessionRequest) (acp.CloseSessionResponse, error) {
	return acp.CloseSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionClose)
}

// ListSessions is not offered.
func (m *mock) ListSessions(context.Context, acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	return acp.ListSessionsResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionList)
}

// turn is one prompt being played.
type turn struct {
	m   *mock
	ctx context.Context // ends at session/cancel, or when the next prompt arrives
	sid acp.SessionId
	s   *session // the session's history, guarded by m.mu
	cwd string
	msg string // the messageId of the turn's text
	// said collects the turn's answer text for the history. A turn's
	// chunks are sent from one goroutine at a time.
	said strings.Builder
	// held is set by a held-open turn, whose context the SDK also ends when
	// the next prompt supersedes it; only a session/cancel since cancels
	// was read cancels it.
	held    bool
	cancels int64
	// blocks is the prompt as the client sent it (see turn.content).
	blocks []acp.ContentBlock
}

// play runs the prompt's scenario, or echoes it.
func (t *turn) play(prompt string) error {
	line, _, _ := strings.Cut(prompt, "\n")
	name, ok := strings.CutPrefix(line, "/scenario ")
	if !ok {
		return t.say(prompt)
	}
	name, rest, _ := strings.Cut(strings.TrimSpace(name), " ")
	args := strings.Fields(rest)
	switch name {
	case "stream":
		n, err := intArgs(args, 1, 2)
		if err != nil {
			return err
		}
		return t.chunks(n[0], time.Duration(n[1])*time.Millisecond, t.say)
	case "reasoning-burst":
		n, err := intArgs(args, 1, 1)
		if err != nil {
			return err
		}
		if err := t.chunks(n[0], 0, t.think); err != nil {
			return err
		}
		return t.say("done")
	case "tool":
		return t.tool()
	case "permission":
		return t.permission(false)
	case "permission-busy":
		return t.permission(true)
	case "clarify":
		return t.clarify()
	case "write":
		file, text, _ := strings.Cut(strings.TrimSpace(rest), " ")
		return t.write(file, text)
	case "error":
		if err := t.say("Something went wrong; you can retry."); err != nil {
			return err
		}
		return acp.NewInternalError(map[string]any{"error": "mock agent: scripted recoverable error"})
	case "crash":
		return t.crash()
	case "history":
		return t.history()
	case "config":
		return t.showConfig()
	case "set-config":
		if len(args) != 2 {
			return acp.NewInvalidParams(map[string]any{"error": "usage: /scenario set-config OPTION VALUE"})
		}
		return t.selfConfig(args[0], args[1])
	case "sleep":
		ms, err := intArgs(args, 1, 1)
		if err != nil {
			return err
		}
		return pause(t.ctx, time.Duration(ms[0])*time.Millisecond)
	case "slow-start":
		return t.say("slow-start delays initialize: start the agent with --slow-start MS or HERD_MOCK_SLOW_START_MS")
	case "background":
		return t.backgroundWork(args, false)
	case "background-held":
		return t.backgroundWork(args, true)
	case "claude-replay":
		return t.claudeReplay(args)
	case "content":
		return t.content()
	case "permission-kinds":
		return t.permissionKinds(rest == "die")
	case "permission-pair":
		return t.permissionPair()
	case "plan":
		n, err := intArgs(args, 1, 2)
		if err != nil {
			return err
		}
		return t.plan(n[0], time.Duration(n[1])*time.Millisecond)
	case "tool-output":
		return t.toolOutput(args)
	case "tool-diff":
		return t.toolDiff(args)
	case "facts":
		return t.facts(args)
	}
	return acp.NewInvalidParams(map[string]any{"error": "unknown scenario " + strconv.Quote(name)})
}

// chunks sends n chunks through emit, gap apart; chunk i is "i ".
func (t *turn) chunks(n int, gap time.Duration, emit func(string) error) error {
	for i := range n {
		if i > 0 && gap > 0 {
			if err := pause(t.ctx, gap); err != nil {
				return err
			}
		}
		if err := emit(strconv.Itoa(i) + " "); err != nil {
			return err
		}
	}
	return nil
}

// crash streams three chunks, then exits with status 3 mid-turn.
func (t *turn) crash() error {
	if err := t.chunks(3, 0, t.say); err != nil {
		return err
	}
	t.m.log.Error("crashing on purpose (scenario crash)")
	os.Exit(3)
	return nil // not reached: os.Exit does not return
}

// intArgs parses between lo and hi non-negative integers; missing ones
// are zero.
func intArgs(args []string, lo, hi int) ([]int, error) {
	if len(args) < lo || len(args) > hi {
		return nil, acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf("want %d to %d numbers, got %q", lo, hi, args)})
	}
	out := make([]int, hi)
	for i, a := range args {
		v, err := strconv.Atoi(a)
		if err != nil || v < 0 {
			return nil, acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf("%q is not a non-negative number", a)})
		}
		out[i] = v
	}
	return out, nil
}

// send writes one session/update for the turn.
func (t *turn) send(ctx context.Context, u acp.SessionUpdate) error {
	return t.m.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: t.sid, Update: u})
}

// say sends a chunk of the turn's answer.
func (t *turn) say(text string) error {
	t.said.WriteString(text)
	return t.send(t.ctx, acp.SessionUpdate{AgentMessageChunk: &acp.SessionUpdateAgentMessageChunk{
		Content: acp.TextBlock(text), MessageId: &t.msg,
	}})
}

// think sends a chunk of the turn's reasoning.
func (t *turn) think(text string) error {
	id := t.msg + "-thought"
	return t.send(t.ctx, acp.SessionUpdate{AgentThoughtChunk: &acp.SessionUpdateAgentThoughtChunk{
		Content: acp.TextBlock(text), MessageId: &id,
	}})
}

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
