package taskgit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/herd-dev/herd/server/gitwatch"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// Marker is told which tasks' status summaries may have changed; the
// projector implements it.
type Marker interface {
	Mark(taskID string)
}

// Publisher sends session notifications; the gateway implements it.
type Publisher interface {
	PublishSession(sessionID, action string, payload any, replaceable bool)
}

// Config configures a Service. Store, Summaries and WorktreeDir are
// required.
type Config struct {
	Store     *store.Store
	Summaries Marker
	// WorktreeDir holds the worktrees: <WorktreeDir>/<task id>/<n>-<name>.
	WorktreeDir string
	// SlowInterval, FastInterval and Workers configure the watcher; zero
	// values take gitwatch's defaults.
	SlowInterval, FastInterval time.Duration
	Workers                    int
	// Metrics receives the watcher's counts; nil keeps none.
	Metrics *gitwatch.Metrics
	Logger  *slog.Logger
}

// Service makes and removes task worktrees and observes task
// repositories; see the package documentation.
type Service struct {
	cfg   Config
	log   *slog.Logger
	watch *gitwatch.Watcher

	mu    sync.Mutex            // guards tasks, repos and pub
	tasks map[string]*taskState // by task id: the tasks seen since start
	repos map[string]string     // task id by repository id, for Record
	pub   Publisher             // set by Start

	cancel context.CancelFunc
	done   chan struct{}
}

// taskState is what the Service keeps of a task.
type taskState struct {
	// targets are the task's repositories to observe, in task order.
	targets []target
	// running holds the task's sessions that are RUNNING.
	running map[string]struct{}
}

// target is a repository to observe.
type target struct {
	id string
	gitwatch.Target
}

// New returns a Service; Start makes it observe.
func New(cfg Config) (*Service, error) {
	switch {
	case cfg.Store == nil || cfg.Summaries == nil:
		return nil, errors.New("taskgit: Config.Store and Config.Summaries are required")
	case cfg.WorktreeDir == "":
		return nil, errors.New("taskgit: Config.WorktreeDir is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{
		cfg:   cfg,
		log:   cfg.Logger,
		tasks: make(map[string]*taskState),
		repos: make(map[string]string),
	}
	w, err := gitwatch.New(gitwatch.Config{
		SlowInterval: cfg.SlowInterval,
		FastInterval: cfg.FastInterval,
		Workers:      cfg.Workers,
		Record:       s.record,
		Metrics:      cfg.Metrics,
	})
	if err != nil {
		return nil, fmt.Errorf("taskgit: %w", err)
	}
	s.watch = w
	return s, nil
}

// Start runs the watcher until Close; observations are published to pub.
func (s *Service) Start(pub Publisher) {
	s.mu.Lock()
	s.pub = pub
	s.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan struct{})
	go func() {
		defer close(s.done)
		if err := s.watch.Run(ctx); err != nil {
			s.log.Error("git watcher stopped", "err", err)
		}
	}()
}

// Close stops observing and waits for observations in progress.
func (s *Service) Close() {
	if s.cancel == nil {
		return
	}
	s.cancel()
	<-s.done
}

// SessionState follows the stored state of a session: the task's
// repositories are watched while one of its sessions is RUNNING, and
// observed once more when the last one stops, so a settled task keeps a
// snapshot of how its run left the tree. It implements sessions.GitWatch.
func (s *Service) SessionState(taskID, sessionID string, state shared.SessionState) {
	t, err := s.task(context.Background(), taskID)
	if err != nil {
		s.log.Warn("load task repositories", "task", taskID, "err", err)
		return
	}
	s.mu.Lock()
	_, was := t.running[sessionID]
	running := state == shared.SessionRunning
	if running {
		t.running[sessionID] = struct{}{}
	} else {
		delete(t.running, sessionID)
	}
	first := running && !was && len(t.running) == 1
	last := !running && was && len(t.running) == 0
	s.mu.Unlock()
	for _, r := range t.targets {
		switch {
		case first:
			s.watch.Watch(r.id, r.Target)
		case last:
			s.watch.Unwatch(r.id)
			s.watch.Refresh(r.id, r.Target)
		}
	}
}

// Focus gives the repositories of the session's task the fast cadence
// until release is called. It implements gateway.Git.
func (s *Service) Focus(ctx context.Context, sessionID string) (release func(), err error) {
	t, err := s.taskOfSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(t.targets))
	for i, r := range t.targets {
		ids[i] = r.id
	}
	s.watch.Focus(ids)
	var once sync.Once
	return func() { once.Do(func() { s.watch.Unfocus(ids) }) }, nil
}

// Refresh schedules one observation of every repository of the session's
// task. It implements gateway.Git.
func (s *Service) Refresh(ctx context.Context, sessionID string) error {
	t, err := s.taskOfSession(ctx, sessionID)
	if err != nil {
		return err
	}
	s.refresh(t)
	return nil
}

// RefreshTask schedules one observation of every repository of a task:
// review calls it after a commit or a push, so the row's totals follow.
func (s *Service) RefreshTask(ctx context.Context, taskID string) error {
	t, err := s.task(ctx, taskID)
	if err != nil {
		return err
	}
	s.refresh(t)
	return nil
}

// refresh schedules one observation of every repository of a task.
func (s *Service) refresh(t *taskState) {
	for _, r := range t.targets {
		s.watch.Refresh(r.id, r.Target)
	}
}

// taskOfSession returns the state of the session's task.
func (s *Service) taskOfSession(ctx context.Context, sessionID string) (*taskState, error) {
	session, err := s.cfg.Store.GetSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	return s.task(ctx, session.TaskID)
}

// task returns what the Service keeps of a task, loading its
// repositories on first use; they do not change after creation.
func (s *Service) task(ctx context.Context, taskID string) (*taskState, error) {
	s.mu.Lock()
	t, ok := s.tasks[taskID]
	s.mu.Unlock()
	if ok {
		return t, nil
	}
	task, err := s.cfg.Store.GetTask(ctx, taskID)
	if err != nil {
		return nil, err
	}
	return s.remember(task), nil
}

// remember keeps a task's repositories, unless another caller did first.
func (s *Service) remember(task shared.Task) *taskState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.tasks[task.ID]; ok {
		return t
	}
	t := &taskState{running: make(map[string]struct{})}
	for _, r := range task.Repositories {
		dir := r.WorktreePath
		if dir == "" {
			dir = r.Path
		}
		t.targets = append(t.targets, target{id: r.ID, Target: gitwatch.Target{Dir: dir, BaseBranch: r.BaseBranch}})
		s.repos[r.ID] = task.ID
	}
	s.tasks[task.ID] = t
	return t
}

// forget drops a task: it is archived, its repositories are gone.
func (s *Service) forget(taskID string) {
	s.mu.Lock()
	t, ok := s.tasks[taskID]
	delete(s.tasks, taskID)
	if ok {
		for _, r := range t.targets {
			delete(s.repos, r.id)
		}
	}
	s.mu.Unlock()
	if ok {
		for _, r := range t.targets {
			s.watch.Unwatch(r.id)
		}
	}
}

// record stores an observation that changed, marks the task's summary
// and sends the task's sessions every repository's latest observation.
func (s *Service) record(ctx context.Context, repositoryID string, o gitwatch.Observation, failure error) error {
	s.mu.Lock()
	taskID, pub := s.repos[repositoryID], s.pub
	s.mu.Unlock()
	if taskID == "" {
		return nil // archived meanwhile
	}
	obs := store.GitObservation{ObservedAt: o.ObservedAt}
	if failure != nil {
		obs.Error = failure.Error()
	} else {
		obs.Additions, obs.Deletions, obs.ChangedFiles = o.Additions, o.Deletions, o.ChangedFiles
		obs.Ahead, obs.Behind, obs.ComparisonUnavailable = o.Ahead, o.Behind, o.ComparisonUnavailable
		if o.HasUpstream {
			ahead, behind := o.UpstreamAhead, o.UpstreamBehind
			obs.UpstreamAhead, obs.UpstreamBehind = &ahead, &behind
		}
	}
	if err := s.cfg.Store.RecordGitObservation(ctx, repositoryID, obs); err != nil {
		if shared.ErrorCode(err) == shared.CodeNotFound {
			return nil // the task is gone
		}
		return err
	}
	s.cfg.Summaries.Mark(taskID)
	if pub != nil {
		s.publish(ctx, pub, taskID)
	}
	return nil
}

// publish sends every session of a task the latest observation of each of
// its repositories.
func (s *Service) publish(ctx context.Context, pub Publisher, taskID string) {
	sessions, err := s.cfg.Store.ListSessions(ctx, taskID)
	if err != nil || len(sessions) == 0 {
		if err != nil {
			s.log.Warn("list sessions for git update", "task", taskID, "err", err)
		}
		return
	}
	gits, err := s.cfg.Store.RepositoryGits(ctx, taskID)
	if err != nil {
		s.log.Warn("load git observations", "task", taskID, "err", err)
		return
	}
	for _, session := range sessions {
		pub.PublishSession(session.ID, shared.NotifySessionGitUpdated, shared.SessionGitEvent{
			SessionID: session.ID, TaskID: taskID, Repositories: gits,
		}, false)
	}
}
