package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/herd-dev/herd/shared"
)

// Store is the persistence the gateway's actions need.
type Store interface {
	CreateWorkspace(ctx context.Context, name string) (shared.Workspace, error)
	GetWorkspace(ctx context.Context, id string) (shared.Workspace, error)
	ListWorkspaces(ctx context.Context) ([]shared.Workspace, error)
	CreateTask(ctx context.Context, in shared.TaskCreateRequest) (shared.Task, error)
	GetTask(ctx context.Context, id string) (shared.Task, error)
	UpdateTask(ctx context.Context, in shared.TaskUpdateRequest) (shared.Task, error)
	ArchiveTask(ctx context.Context, id string) (shared.Task, error)
	ListTasks(ctx context.Context, q shared.TaskListRequest) (shared.TaskListResponse, error)
	RelinkPullRequests(ctx context.Context, taskID string) ([]string, error)
	RepositoryGits(ctx context.Context, taskID string) ([]shared.RepositoryGit, error)
}

// Tasks creates and archives tasks together with their worktrees.
type Tasks interface {
	CreateTask(ctx context.Context, in shared.TaskCreateRequest) (shared.Task, error)
	ArchiveTask(ctx context.Context, in shared.TaskArchiveRequest) (shared.Task, error)
}

// storeTasks creates and archives tasks in the store alone, without
// worktrees: the Tasks of a Config that names none.
type storeTasks struct{ Store }

// ArchiveTask archives the task in the store.
func (s storeTasks) ArchiveTask(ctx context.Context, in shared.TaskArchiveRequest) (shared.Task, error) {
	return s.Store.ArchiveTask(ctx, in.TaskID)
}

// Git observes the repositories of sessions' tasks.
type Git interface {
	// Focus gives the session's repositories the fast cadence until
	// release is called.
	Focus(ctx context.Context, sessionID string) (release func(), err error)
	// Refresh schedules one fresh observation of the session's
	// repositories.
	Refresh(ctx context.Context, sessionID string) error
}

// ProfileLister lists agent profiles with their availability on this machine.
type ProfileLister interface {
	ListProfiles(ctx context.Context) ([]shared.AgentProfile, error)
}

// Config configures a Gateway. Zero values take the documented defaults.
type Config struct {
	Store    Store
	Profiles ProfileLister
	// Sessions serves the session actions; nil leaves them unknown.
	Sessions Sessions
	// Summaries is told about task changes that summaries derive from
	// and serves error.dismiss; nil leaves that action unknown.
	Summaries Summaries
	// Tasks creates and archives tasks with their worktrees; nil leaves
	// both to the store alone (no worktrees).
	Tasks Tasks
	// Git serves focus and session.git.refresh; nil makes focus only
	// acknowledge and session.git.refresh unavailable.
	Git Git
	// Attention serves the inbox and push actions; nil leaves them
	// unknown.
	Attention Attention
	// Review serves the review actions; nil leaves them unknown.
	Review Review
	Logger *slog.Logger
	// Registerer receives the gateway's metrics; nil skips registration.
	Registerer prometheus.Registerer
	// Version and Features describe the server in boot responses.
	Version  string
	Features []string
	// AllowedOrigins lists extra browser origins (host patterns) allowed to
	// upgrade; same-origin requests and clients without Origin always are.
	AllowedOrigins []string
	// MaxFrameBytes bounds an inbound frame (default shared.MaxFrameBytes).
	MaxFrameBytes int64
	// WriteTimeout bounds one frame write to a client (default 10 s).
	WriteTimeout time.Duration
	// RequestTimeout bounds one request's work (default 30 s).
	RequestTimeout time.Duration
	// MaxInFlight bounds a connection's outstanding requests: read and
	// not yet answered on the socket, whether running or answered and
	// waiting to be written (default 16). Further frames wait to be read.
	MaxInFlight int
	// MaxAnswerBytes is how many bytes of answers a connection may have
	// waiting to be written before its further frames wait to be read
	// (default 4 MiB). A larger answer is still sent, on its own.
	MaxAnswerBytes int
	// SemanticCap bounds the ordered notifications queued per connection
	// (default 1024).
	SemanticCap int
	// Allowance bounds the replaceable notifications one session may have
	// queued on a connection (default 8).
	Allowance int
	// MaxQueuedBytes bounds a connection's queued notification bytes
	// (default 16 MiB).
	MaxQueuedBytes int
	// PingInterval is how often, give or take a fifth, every connection is
	// pinged (default 30 s).
	PingInterval time.Duration
	// PingTimeout is how long a ping may go unanswered, by a client from
	// which nothing else arrives either, before the connection is closed
	// (default 20 s).
	PingTimeout time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Gateway serves WebSocket connections speaking the herd protocol.
type Gateway struct {
	cfg     Config
	log     *slog.Logger
	metrics *metrics
	// feed is the workspace task feeds; sessionFeed the session streams.
	feed        *feed
	sessionFeed *feed
	actions     map[string]action

	mu       sync.Mutex // guards conns and closing
	conns    map[*conn]struct{}
	closing  bool
	handlers sync.WaitGroup // one per connection being served
}

// New returns a Gateway, registering its metrics with cfg.Registerer.
func New(cfg Config) (*Gateway, error) {
	if cfg.Store == nil || cfg.Profiles == nil {
		return nil, errors.New("gateway: Store and Profiles are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Tasks == nil {
		cfg.Tasks = storeTasks{cfg.Store}
	}
	if cfg.MaxFrameBytes <= 0 {
		cfg.MaxFrameBytes = shared.MaxFrameBytes
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 10 * time.Second
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 30 * time.Second
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = defaultOutstanding
	}
	if cfg.MaxAnswerBytes <= 0 {
		cfg.MaxAnswerBytes = defaultAnswerBytes
	}
	if cfg.Allowance <= 0 {
		cfg.Allowance = defaultAllowance
	}
	if cfg.MaxQueuedBytes <= 0 {
		cfg.MaxQueuedBytes = defaultQueuedBytes
	}
	if cfg.SemanticCap <= 0 {
		cfg.SemanticCap = defaultSemanticCap
	}
	if cfg.PingInterval <= 0 {
		cfg.PingInterval = defaultPingInterval
	}
	if cfg.PingTimeout <= 0 {
		cfg.PingTimeout = defaultPingTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	g := &Gateway{
		cfg:         cfg,
		log:         cfg.Logger,
		metrics:     m,
		feed:        newFeed(),
		sessionFeed: newFeed(),
		conns:       make(map[*conn]struct{}),
	}
	g.actions = g.actionTable()
	if cfg.Sessions != nil {
		for name, a := range g.sessionActions() {
			g.actions[name] = a
		}
	}
	if cfg.Summaries != nil {
		g.actions[shared.ActionErrorDismiss] = action{run: handle(g.errorDismiss)}
	}
	if cfg.Attention != nil {
		for name, a := range g.attentionActions() {
			g.actions[name] = a
		}
	}
	if cfg.Review != nil {
		for name, a := range g.reviewActions() {
			g.actions[name] = a
		}
	}
	return g, nil
}

// ServeHTTP upgrades the request to a WebSocket and serves it until the
// connection ends. Authentication happens before this handler.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.begin() {
		http.Error(w, "server is shutting down", http.StatusServiceUnavailable)
		return
	}
	defer g.handlers.Done()
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		OriginPatterns:  g.cfg.AllowedOrigins,
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		g.log.Info("websocket upgrade refused", "remote", r.RemoteAddr, "err", err)
		return
	}
	c := newConn(g, ws, r.RemoteAddr)
	if !g.register(c) {
		ws.Close(websocket.StatusGoingAway, "server is shutting down")
		return
	}
	defer g.unregister(c)
	c.serve()
}

// begin counts a handler in unless the gateway is shutting down.
func (g *Gateway) begin() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closing {
		return false
	}
	g.handlers.Add(1)
	return true
}

func (g *Gateway) register(c *conn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closing {
		return false
	}
	g.conns[c] = struct{}{}
	g.metrics.connections.Inc()
	return true
}

func (g *Gateway) unregister(c *conn) {
	g.mu.Lock()
	delete(g.conns, c)
	g.mu.Unlock()
	g.metrics.connections.Dec()
}

// Shutdown closes every connection with status 1001 (going away), refuses
// new ones, and waits until their handlers have returned or ctx ends.
func (g *Gateway) Shutdown(ctx context.Context) error {
	g.mu.Lock()
	g.closing = true
	conns := make([]*conn, 0, len(g.conns))
	for c := range g.conns {
		conns = append(conns, c)
	}
	g.mu.Unlock()
	for _, c := range conns {
		c.closeWith(websocket.StatusGoingAway, "server shutting down", "shutdown")
	}
	done := make(chan struct{})
	go func() {
		g.handlers.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		g.mu.Lock()
		for c := range g.conns {
			c.ws.CloseNow()
		}
		g.mu.Unlock()
		<-done
		return ctx.Err()
	}
}

// publishWorkspace sends a notification to every connection following the
// workspace. Call it only after the change it reports has committed.
func (g *Gateway) publishWorkspace(workspaceID, action string, payload any) {
	env, err := shared.NewNotification(action, payload, g.cfg.Now())
	if err != nil {
		g.log.Error("encode notification", "action", action, "err", err)
		return
	}
	frame, err := json.Marshal(env)
	if err != nil {
		g.log.Error("encode notification", "action", action, "err", err)
		return
	}
	subs := g.feed.subscribers(workspaceID)
	for _, c := range subs {
		res := c.out.pushFeed(frame)
		if !res.ok {
			c.overflow(laneSemantic)
		}
		g.metrics.countYielded(res.yielded)
	}
	g.metrics.notifications.WithLabelValues(action).Add(float64(len(subs)))
}
