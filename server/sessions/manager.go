package sessions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/coalescer"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/server/tracker"
	"github.com/herd-dev/herd/shared"
)

// Publisher delivers notifications; the gateway implements it. Both
// methods are called only after the change they report has committed.
type Publisher interface {
	PublishSession(sessionID, action string, payload any, replaceable bool)
	PublishWorkspace(workspaceID, action string, payload any)
}

// Marker is told which tasks' status summaries may have changed; the
// projector implements it.
type Marker interface {
	Mark(taskID string)
}

// RequestWatch is told every permission or clarification request a
// session stores, when it opens and when it is answered or withdrawn, after
// the change has committed; attention implements it. It must not block.
type RequestWatch interface {
	RequestChanged(msg shared.Message)
}

// GitWatch is told every state a session stores, so that a task's
// repositories are watched while one of its sessions runs.
type GitWatch interface {
	SessionState(taskID, sessionID string, state shared.SessionState)
}

// TurnWatch is told of every turn's start: its prompt is stored as sent
// and the agent has not been handed it yet. Review implements it, to
// record the worktree each turn starts from. The turn waits for
// TurnStarting to return, so it must bound itself; it cannot stop the
// turn, which proceeds whatever it met.
type TurnWatch interface {
	TurnStarting(ctx context.Context, taskID, sessionID, turnID string)
}

// ProfileFunc resolves an agent profile id to how to start it.
type ProfileFunc func(ctx context.Context, id string) (agent.Profile, error)

// Config configures a Manager.
type Config struct {
	Store *store.Store
	// Profile resolves agent profile ids.
	Profile ProfileFunc
	// DefaultProfile is used when a session is created without one.
	DefaultProfile string
	// Started, when set, is called after every attempt to start an agent
	// with the profile's id and the error that stopped it (nil when it
	// started), so the profile list can show what the last start said.
	Started func(profileID string, err error)
	// ScratchDir holds a working directory per task without repositories.
	ScratchDir string
	// Version is sent to agents in initialize.
	Version string
	Logger  *slog.Logger
	// Metrics receives the stream coalescers' counters; nil counts nothing.
	Metrics *coalescer.Metrics
	// Projector is marked after every change a status summary derives
	// from; nil marks nothing.
	Projector Marker
	// Handoff turns on the Claude background prompt handoff experiment
	// (see package tracker).
	Handoff bool
	// Git is told every stored session state; nil tells nobody.
	Git GitWatch
	// Requests, when set, is told of every stored change of a request.
	Requests RequestWatch
	// Turns, when set, is told of every turn's start before the agent is
	// handed its prompt.
	Turns TurnWatch
	// AgentNice lowers the CPU priority of agents (see agent.Options.Nice).
	AgentNice int
	// Registerer receives the manager's metrics; nil skips registration.
	Registerer prometheus.Registerer
}

// Manager runs sessions: their lifecycle, prompt admission and queue, and
// the agent executions behind them.
type Manager struct {
	cfg     Config
	log     *slog.Logger
	pub     Publisher
	tr      *tracker.Tracker
	metrics *metrics

	ctx    context.Context // cancelled by Close; parent of every execution
	cancel context.CancelFunc
	wg     sync.WaitGroup // every goroutine the manager starts

	mu     sync.Mutex // guards runs and closed
	runs   map[string]*run
	closed bool
}

// New returns a Manager; Start makes it serve.
func New(cfg Config) (*Manager, error) {
	if cfg.Store == nil || cfg.Profile == nil || cfg.ScratchDir == "" {
		return nil, errors.New("sessions: Store, Profile and ScratchDir are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	met, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{cfg: cfg, log: cfg.Logger, metrics: met, ctx: ctx, cancel: cancel, runs: make(map[string]*run)}
	tr, err := tracker.New(tracker.Config{Publish: m.publishActivity, Handoff: cfg.Handoff, Logger: cfg.Logger})
	if err != nil {
		cancel()
		return nil, err
	}
	m.tr = tr
	return m, nil
}

// Start sets the publisher and recovers sessions a previous process left
// running (see recover). It must run before the server reports ready.
func (m *Manager) Start(ctx context.Context, pub Publisher) error {
	m.pub = pub
	return m.recover(ctx)
}

// Close stops every execution and waits for the manager's goroutines.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	runs := make([]*run, 0, len(m.runs))
	for _, r := range m.runs {
		runs = append(runs, r)
	}
	m.mu.Unlock()
	m.cancel()
	for _, r := range runs {
		r.stop()
	}
	m.wg.Wait()
	m.tr.Close()
}

// mark tells the projector that a task's summary may have changed.
func (m *Manager) mark(taskID string) {
	if m.cfg.Projector != nil {
		m.cfg.Projector.Mark(taskID)
	}
}

// requestChanged tells the request watch of a request's stored change and
// marks its task's summary.
func (m *Manager) requestChanged(msg shared.Message) {
	m.mark(msg.TaskID)
	if m.cfg.Requests != nil {
		m.cfg.Requests.RequestChanged(msg)
	}
}

// Create creates a session for a task and starts its agent; with a prompt,
// the prompt is dispatched as soon as the agent is ready.
func (m *Manager) Create(ctx context.Context, req shared.SessionCreateRequest) (shared.Session, error) {
	task, err := m.cfg.Store.GetTask(ctx, req.TaskID)
	if err != nil {
		return shared.Session{}, err
	}
	profileID := req.AgentProfileID
	if profileID == "" {
		profileID = m.cfg.DefaultProfile
	}
	profile, err := m.cfg.Profile(ctx, profileID)
	if err != nil {
		return shared.Session{}, err
	}
	session, err := m.cfg.Store.CreateSession(ctx, task.ID, profile.ID)
	if err != nil {
		return shared.Session{}, err
	}
	if task.PrimarySessionID == "" {
		if updated, err := m.cfg.Store.GetTask(ctx, task.ID); err == nil {
			updated.StatusSummary = nil
			m.pub.PublishWorkspace(task.WorkspaceID, shared.NotifyTaskUpdated, updated)
		}
	}
	r, err := m.live(session)
	if err != nil {
		return shared.Session{}, err
	}
	r.begin(profile, req.Prompt)
	return session, nil
}

// Get returns a session.
func (m *Manager) Get(ctx context.Context, sessionID string) (shared.Session, error) {
	return m.cfg.Store.GetSession(ctx, sessionID)
}

// List returns a task's sessions.
func (m *Manager) List(ctx context.Context, taskID string) ([]shared.Session, error) {
	return m.cfg.Store.ListSessions(ctx, taskID)
}

// snapshotMessages is how many of the newest messages a snapshot carries;
// older ones are paged with message.list.
const snapshotMessages = 100

// Snapshot returns a session with its newest messages, queue, unanswered
// requests and slash commands.
func (m *Manager) Snapshot(ctx context.Context, sessionID string) (shared.SessionSnapshot, error) {
	session, err := m.cfg.Store.GetSession(ctx, sessionID)
	if err != nil {
		return shared.SessionSnapshot{}, err
	}
	msgs, _, err := m.cfg.Store.ListMessages(ctx, sessionID, 0, snapshotMessages)
	if err != nil {
		return shared.SessionSnapshot{}, err
	}
	queue, err := m.Queue(ctx, sessionID)
	if err != nil {
		return shared.SessionSnapshot{}, err
	}
	pending, err := m.cfg.Store.PendingRequests(ctx, sessionID)
	if err != nil {
		return shared.SessionSnapshot{}, err
	}
	commands, err := m.cfg.Store.SessionCommands(ctx, sessionID)
	if err != nil {
		return shared.SessionSnapshot{}, err
	}
	return shared.SessionSnapshot{Session: session, Messages: msgs, Queue: queue, Pending: pending, Commands: commands}, nil
}

// ListMessages pages a session's transcript.
func (m *Manager) ListMessages(ctx context.Context, req shared.MessageListRequest) (shared.MessageListResponse, error) {
	if _, err := m.cfg.Store.GetSession(ctx, req.SessionID); err != nil {
		return shared.MessageListResponse{}, err
	}
	msgs, more, err := m.cfg.Store.ListMessages(ctx, req.SessionID, req.BeforeSeq, req.Limit)
	if err != nil {
		return shared.MessageListResponse{}, err
	}
	return shared.MessageListResponse{Messages: msgs, HasMore: more}, nil
}

// GetMessage returns one message with its full content.
func (m *Manager) GetMessage(ctx context.Context, sessionID, messageID string) (shared.Message, error) {
	return m.cfg.Store.GetMessage(ctx, sessionID, messageID)
}

// live returns the in-memory run of a session, creating it if needed.
func (m *Manager) live(session shared.Session) (*run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, shared.Errorf(shared.CodeUnavailable, "the server is shutting down")
	}
	if r, ok := m.runs[session.ID]; ok {
		return r, nil
	}
	r := newRun(m, session)
	m.runs[session.ID] = r
	return r, nil
}

// runOf returns a session as stored and its run, creating the run when
// the session has none in memory (after a restart, for example).
func (m *Manager) runOf(ctx context.Context, sessionID string) (*run, shared.Session, error) {
	session, err := m.cfg.Store.GetSession(ctx, sessionID)
	if err != nil {
		return nil, shared.Session{}, err
	}
	r, err := m.live(session)
	return r, session, err
}

// workingDir returns where a task's agent runs: its first repository, or a
// scratch directory of its own.
func (m *Manager) workingDir(ctx context.Context, taskID string) (string, error) {
	task, err := m.cfg.Store.GetTask(ctx, taskID)
	if err != nil {
		return "", err
	}
	if len(task.Repositories) > 0 {
		repo := task.Repositories[0]
		if repo.WorktreePath != "" {
			return repo.WorktreePath, nil
		}
		return repo.Path, nil
	}
	dir := filepath.Join(m.cfg.ScratchDir, taskID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create scratch directory: %w", err)
	}
	return dir, nil
}

// goTracked runs f on a goroutine the manager waits for on Close.
func (m *Manager) goTracked(f func()) {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		f()
	}()
}
