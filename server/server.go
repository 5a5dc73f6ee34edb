package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/attention"
	"github.com/herd-dev/herd/server/coalescer"
	"github.com/herd-dev/herd/server/gateway"
	"github.com/herd-dev/herd/server/github"
	"github.com/herd-dev/herd/server/gitwatch"
	"github.com/herd-dev/herd/server/projector"
	"github.com/herd-dev/herd/server/push"
	"github.com/herd-dev/herd/server/review"
	"github.com/herd-dev/herd/server/sessions"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/server/taskgit"
	"github.com/herd-dev/herd/shared"
)

// Options are the parts of a Server that are not configuration.
type Options struct {
	// Version identifies the build; it is reported by boot and /healthz.
	Version string
	// UI serves the web app; nil (or Config.NoUI) serves only the API.
	UI http.Handler
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
	// BeforeReady, when set, runs as the last start-up step, before the
	// server reports ready. Tests use it to observe the not-ready window.
	BeforeReady func(context.Context) error
	// Now is the clock of the limit on failed token attempts; nil means
	// time.Now. Tests step it instead of waiting.
	Now func() time.Time
	// PushLoopbackHTTP lets push devices use http:// endpoints on a
	// loopback host: tests' push service. Real ones are https.
	PushLoopbackHTTP bool
	// PushResult, when set, is told the outcome of every push (see
	// push.Config.OnResult); benchmarks read latencies from it.
	PushResult func(push.Result)
	// MockAgent is the built-in mock profile (agent.MockProfile); a zero
	// Command means the running executable as `herd mock-agent`, as
	// herd serve runs it. Tests give mocktest.Profile(), the test binary.
	MockAgent agent.Profile
}

// Server is herd's HTTP and WebSocket server with its runtime.
type Server struct {
	cfg  Config
	opts Options
	log  *slog.Logger

	registry *prometheus.Registry
	echo     *echo.Echo
	http     *http.Server
	ln       net.Listener
	serveErr chan error

	// authLimit limits failed token attempts per client.
	authLimit *authLimiter
	// tokenDigest is the SHA-256 of cfg.Token, which presented tokens'
	// digests are compared with.
	tokenDigest [sha256.Size]byte

	ready     atomic.Bool
	gateway   atomic.Pointer[gateway.Gateway]   // set once start-up work is done
	store     *store.Store                      // set by Start before ready
	sessions  *sessions.Manager                 // set by Start before ready
	projector *projector.Projector              // set by Start before ready
	git       *taskgit.Service                  // set by Start before ready
	review    *review.Service                   // set by Start before ready
	webhook   atomic.Pointer[github.Webhook]    // set by Start with a webhook secret
	attention *attention.Attention              // set by Start before ready
	push      *push.Sender                      // set by Start before ready
	devices   atomic.Pointer[attention.Service] // set once start-up work is done
	// dbCheck answers /readyz's database question; set by Start before ready.
	dbCheck *databaseCheck
	// background runs work that lasts until shutdown (the GitHub poller);
	// stopBackground ends it.
	background     sync.WaitGroup
	stopBackground context.CancelFunc
	// profiles are the built-in profiles followed by those of
	// --agents-file (read by New); the first builtinCount are built in.
	profiles     []agent.Profile
	builtinCount int
	// auth holds what each profile's latest start said about its
	// authentication.
	auth profileAuth

	shutdownOnce sync.Once
}

// New validates cfg and builds a Server; Start makes it serve.
func New(cfg Config, opts Options) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.ShutdownTimeout == 0 {
		cfg.ShutdownTimeout = 10 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.NoUI {
		opts.UI = nil
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MockAgent.Command == "" {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find the herd binary for the mock agent: %w", err)
		}
		opts.MockAgent = agent.MockProfile(self, "mock-agent")
	}
	s := &Server{
		cfg:      cfg,
		opts:     opts,
		log:      opts.Logger,
		registry: prometheus.NewRegistry(),
		serveErr: make(chan error, 1),
	}
	builtins := agent.BuiltinFor(opts.MockAgent, cfg.Adapters)
	configured, err := loadAgentsFile(cfg.AgentsFile, builtins)
	if err != nil {
		return nil, err
	}
	s.profiles, s.builtinCount = append(builtins, configured...), len(builtins)
	s.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s.authLimit = newAuthLimiter(opts.Now, authFailureBurst, authFailureRefill, authMaxClients)
	s.tokenDigest = sha256.Sum256([]byte(cfg.Token))
	s.registry.MustRegister(s.authLimit.collectors()...)
	s.echo = s.routes()
	s.http = &http.Server{
		Handler:           s.echo,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	return s, nil
}

// Start listens, serves /healthz and a not-ready /readyz at once, runs the
// start-up work (database, migrations, profiles, demo seed) and then
// reports ready. It returns when the server is ready or start-up failed.
func (s *Server) Start(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.cfg.Addr, err)
	}
	s.ln = ln
	go func() {
		err := s.http.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.serveErr <- err
	}()
	s.log.Info("listening", "addr", ln.Addr().String(), "version", s.opts.Version)
	if err := s.startup(ctx); err != nil {
		shutdownCtx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
		defer cancel()
		_ = s.Shutdown(shutdownCtx)
		return err
	}
	s.ready.Store(true)
	s.log.Info("ready", "database", s.store.Dialect())
	return nil
}

// startup does everything that must finish before the server is ready.
func (s *Server) startup(ctx context.Context) error {
	st, err := store.Open(ctx, store.Config{URL: s.cfg.DatabaseURL, DataDir: s.cfg.DataDir, Logger: s.log})
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	s.store = st
	s.dbCheck = &databaseCheck{ping: st.Ping}
	for i, p := range s.profiles {
		err := st.UpsertAgentProfile(ctx, store.AgentProfile{
			ID: p.ID, Name: p.Name, Provider: p.Provider, Command: p.Command, Args: p.Args, Env: p.Env,
			Builtin: i < s.builtinCount,
		})
		if err != nil {
			return fmt.Errorf("register agent profile %s: %w", p.ID, err)
		}
	}
	metrics, err := coalescer.NewMetrics(s.registry)
	if err != nil {
		return fmt.Errorf("register stream metrics: %w", err)
	}
	devices, err := s.startPush(ctx, st)
	if err != nil {
		return err
	}
	att := attention.New(attention.Config{Store: st, Pusher: devices, Logger: s.log.With("component", "attention")})
	s.attention = att
	proj, err := projector.New(projector.Config{Store: st, Watch: att, Logger: s.log.With("component", "projector")})
	if err != nil {
		return fmt.Errorf("start projector: %w", err)
	}
	s.projector = proj
	// A read that finds a task without its summary row has it rebuilt.
	st.OnMissingSummary(proj.Mark)
	gitMetrics, err := gitwatch.NewMetrics(s.registry)
	if err != nil {
		return fmt.Errorf("register git metrics: %w", err)
	}
	git, err := taskgit.New(taskgit.Config{
		Store:        st,
		Summaries:    proj,
		WorktreeDir:  s.stateDir("worktrees"),
		SlowInterval: s.cfg.GitSlowInterval,
		FastInterval: s.cfg.GitFastInterval,
		Workers:      s.cfg.GitWorkers,
		Metrics:      gitMetrics,
		Logger:       s.log.With("component", "git"),
	})
	if err != nil {
		return fmt.Errorf("start git observation: %w", err)
	}
	s.git = git
	if s.cfg.Demo {
		if err := seedDemo(ctx, st, git, s.stateDir("demo-repo"), s.log); err != nil {
			return fmt.Errorf("seed demo workspace: %w", err)
		}
	}
	rev, err := review.New(review.Config{
		Store: st, Git: git, Summaries: proj,
		GitHubToken: s.cfg.GitHubToken, GitHubAPIURL: s.cfg.GitHubAPIURL,
		Logger: s.log.With("component", "review"),
	})
	if err != nil {
		return fmt.Errorf("start review: %w", err)
	}
	s.review = rev
	mgr, err := sessions.New(sessions.Config{
		Store:          st,
		Profile:        s.profileCatalog().Profile,
		Started:        s.auth.observe,
		DefaultProfile: agent.MockProfileID,
		ScratchDir:     s.stateDir("scratch"),
		Version:        s.opts.Version,
		Logger:         s.log.With("component", "sessions"),
		Metrics:        metrics,
		Projector:      proj,
		Handoff:        s.cfg.ClaudeBackgroundPromptHandoff,
		Git:            git,
		Requests:       att,
		Turns:          rev,
		AgentNice:      s.cfg.AgentNice,
		Registerer:     s.registry,
	})
	if err != nil {
		return fmt.Errorf("start sessions: %w", err)
	}
	s.sessions = mgr
	var features []string
	if s.cfg.ClaudeBackgroundPromptHandoff {
		features = append(features, FeatureClaudeBackgroundPromptHandoff)
	}
	gw, err := gateway.New(gateway.Config{
		Store:          st,
		Profiles:       s.profileCatalog(),
		Sessions:       mgr,
		Summaries:      proj,
		Tasks:          git,
		Git:            git,
		Attention:      devices,
		Review:         rev,
		Logger:         s.log.With("component", "gateway"),
		Registerer:     s.registry,
		Version:        s.opts.Version,
		Features:       features,
		AllowedOrigins: s.cfg.AllowedOrigins,
	})
	if err != nil {
		return fmt.Errorf("start gateway: %w", err)
	}
	att.Start(gw)
	proj.Start(gw)
	git.Start(gw)
	if err := mgr.Start(ctx, gw); err != nil {
		return fmt.Errorf("recover sessions: %w", err)
	}
	// Every summary the recovery changed, and any stale or missing one, is
	// repaired and published before the server reports ready.
	if err := proj.Rebuild(ctx); err != nil {
		return fmt.Errorf("rebuild status summaries: %w", err)
	}
	if s.opts.BeforeReady != nil {
		if err := s.opts.BeforeReady(ctx); err != nil {
			return err
		}
	}
	if err := s.startGitHub(st, proj); err != nil {
		return err
	}
	s.devices.Store(devices)
	s.gateway.Store(gw)
	return nil
}

// startPush makes sure the VAPID key pair exists, removes the devices of
// another token and starts the sender.
func (s *Server) startPush(ctx context.Context, st *store.Store) (*attention.Service, error) {
	public, private, err := st.VAPIDKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("load push keys: %w", err)
	}
	digest := attention.TokenDigest(s.cfg.Token)
	if n, err := st.PruneStalePushDevices(ctx, digest); err != nil {
		return nil, fmt.Errorf("prune push devices: %w", err)
	} else if n > 0 {
		s.log.Info("removed push devices of another token", "devices", n)
	}
	metrics, err := push.NewMetrics(s.registry)
	if err != nil {
		return nil, fmt.Errorf("register push metrics: %w", err)
	}
	sender, err := push.New(push.Config{
		Devices: st, VAPIDPublicKey: public, VAPIDPrivateKey: private, Subscriber: s.cfg.PushSubject,
		Metrics: metrics, Logger: s.log.With("component", "push"), OnResult: s.opts.PushResult,
	})
	if err != nil {
		return nil, fmt.Errorf("start push: %w", err)
	}
	s.push = sender
	return attention.NewService(st, sender, digest, s.opts.PushLoopbackHTTP, s.log.With("component", "push")), nil
}

// startGitHub mounts the webhook when a secret is configured and starts
// the poller when a token is.
func (s *Server) startGitHub(st *store.Store, proj *projector.Projector) error {
	log := s.log.With("component", "github")
	if s.cfg.GitHubWebhookSecret != "" {
		wh, err := github.NewWebhook(github.WebhookConfig{Secret: s.cfg.GitHubWebhookSecret, Store: st, Marker: proj, Logger: log})
		if err != nil {
			return fmt.Errorf("start github webhook: %w", err)
		}
		s.webhook.Store(wh)
	}
	if s.cfg.GitHubToken == "" {
		return nil
	}
	poller, err := github.NewPoller(github.PollerConfig{
		Token: s.cfg.GitHubToken, BaseURL: s.cfg.GitHubAPIURL, Interval: s.cfg.GitHubPollInterval,
		Store: st, Marker: proj, Logger: log,
	})
	if err != nil {
		return fmt.Errorf("start github poller: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stopBackground = cancel
	s.background.Go(func() { poller.Run(ctx) })
	return nil
}

// Addr returns the address the server listens on (useful with port 0).
func (s *Server) Addr() string {
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Run starts the server and serves until ctx ends, then shuts down
// gracefully within the configured timeout.
func (s *Server) Run(ctx context.Context) error {
	if err := s.Start(ctx); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
	case err := <-s.serveErr:
		s.serveErr <- err
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	return s.Shutdown(shutdownCtx)
}

// Shutdown stops accepting work, closes every WebSocket with status 1001,
// drains HTTP requests and closes the database. It is safe to call twice.
func (s *Server) Shutdown(ctx context.Context) error {
	var errs []error
	s.shutdownOnce.Do(func() {
		s.ready.Store(false)
		s.log.Info("shutting down")
		if s.review != nil {
			// A commit or push still running ends now: the connections
			// that wait for it close next.
			s.review.Close()
		}
		if gw := s.gateway.Load(); gw != nil {
			if err := gw.Shutdown(ctx); err != nil {
				errs = append(errs, fmt.Errorf("close websockets: %w", err))
			}
		}
		if err := s.http.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("drain http: %w", err))
		}
		if s.stopBackground != nil {
			s.stopBackground()
			s.background.Wait()
		}
		if s.sessions != nil {
			s.sessions.Close()
		}
		if s.git != nil {
			s.git.Close()
		}
		if s.projector != nil {
			s.projector.Close()
		}
		if s.attention != nil {
			s.attention.Close(ctx)
		}
		if s.push != nil {
			// What waits to be pushed gets the rest of the shutdown's time.
			if err := s.push.Close(ctx); err != nil {
				s.log.Warn("push messages dropped at shutdown", "err", err)
			}
		}
		if s.ln != nil {
			if err := <-s.serveErr; err != nil {
				errs = append(errs, fmt.Errorf("serve: %w", err))
			}
		}
		if s.store != nil {
			if err := s.store.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close database: %w", err))
			}
		}
	})
	return errors.Join(errs...)
}

// BootSnapshot loads the web app's first screen (the oldest workspace and
// its first page of tasks) for rendering it on the server.
func (s *Server) BootSnapshot(ctx context.Context) (shared.BootResponse, error) {
	gw := s.gateway.Load()
	if gw == nil || !s.ready.Load() {
		return shared.BootResponse{}, shared.Errorf(shared.CodeUnavailable, "server is starting")
	}
	return gw.Boot(ctx, "", nil)
}

// stateDir is the directory name in the data directory, or in the
// system's temporary directory when there is none (PostgreSQL only).
func (s *Server) stateDir(name string) string {
	if s.cfg.DataDir != "" {
		return filepath.Join(s.cfg.DataDir, name)
	}
	return filepath.Join(os.TempDir(), "herd-"+name)
}
