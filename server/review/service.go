package review

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/herd-dev/herd/server/gitfinish"
	"github.com/herd-dev/herd/server/github"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// DefaultTurnTimeout bounds the snapshot of one repository at a turn's
// start when Config.TurnTimeout is zero: long enough for a large worktree
// on a busy machine, short enough that a prompt never waits long for it.
const DefaultTurnTimeout = 5 * time.Second

// draftScan bounds the newest messages of a session searched for its last
// agent message, the draft commit message.
const draftScan = 50

// Refresher observes a task's repositories again; taskgit implements it.
type Refresher interface {
	RefreshTask(ctx context.Context, taskID string) error
}

// Marker is told which tasks' status summaries may have changed; the
// projector implements it.
type Marker interface {
	Mark(taskID string)
}

// Config configures a Service. Store, Git and Summaries are required.
type Config struct {
	Store     *store.Store
	Git       Refresher
	Summaries Marker
	// GitHubToken, when set, lets review open pull requests through the
	// REST API at GitHubAPIURL (empty means github.DefaultBaseURL).
	GitHubToken  string
	GitHubAPIURL string
	// TurnTimeout bounds each repository's snapshot at a turn's start;
	// zero means DefaultTurnTimeout.
	TurnTimeout time.Duration
	Logger      *slog.Logger
}

// Service serves review; see the package documentation.
type Service struct {
	cfg Config
	log *slog.Logger
	// pulls opens pull requests; nil without a GitHub token.
	pulls *github.PullRequestClient

	// ctx ends at Close; the git writes that outlive their request end
	// with it.
	ctx    context.Context
	cancel context.CancelFunc
}

// New returns a Service.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil || cfg.Git == nil || cfg.Summaries == nil {
		return nil, errors.New("review: Config.Store, Config.Git and Config.Summaries are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.GitHubAPIURL == "" {
		cfg.GitHubAPIURL = github.DefaultBaseURL
	}
	if cfg.TurnTimeout <= 0 {
		cfg.TurnTimeout = DefaultTurnTimeout
	}
	s := &Service{cfg: cfg, log: cfg.Logger}
	if cfg.GitHubToken != "" {
		s.pulls = &github.PullRequestClient{Token: cfg.GitHubToken, BaseURL: cfg.GitHubAPIURL}
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// Close ends the commits and pushes still running; the server calls it as
// it shuts down.
func (s *Service) Close() { s.cancel() }

// Get returns a task's review state. A repository that cannot be read
// carries its Error; the others are answered all the same.
func (s *Service) Get(ctx context.Context, req shared.ReviewGetRequest) (shared.ReviewGetResponse, error) {
	task, err := s.openTask(ctx, req.TaskID)
	if err != nil {
		return shared.ReviewGetResponse{}, err
	}
	repos, err := s.describe(ctx, task, task.Repositories)
	if err != nil {
		return shared.ReviewGetResponse{}, err
	}
	turns, err := s.cfg.Store.ReviewTurns(ctx, task.ID, shared.MaxReviewTurns)
	if err != nil {
		return shared.ReviewGetResponse{}, err
	}
	out := shared.ReviewGetResponse{TaskID: task.ID, Repositories: repos, Turns: turns, PullRequests: s.pulls != nil}
	sessions, err := s.cfg.Store.ListSessions(ctx, task.ID)
	if err != nil {
		return shared.ReviewGetResponse{}, err
	}
	if len(sessions) > 0 {
		newest := sessions[len(sessions)-1]
		out.SessionID = newest.ID
		if out.DraftMessage, err = s.draft(ctx, newest.ID); err != nil {
			return shared.ReviewGetResponse{}, err
		}
	}
	return out, nil
}

// draft returns the text of a session's last complete agent message among
// its newest, at most shared.MaxCommitMessageBytes of it.
func (s *Service) draft(ctx context.Context, sessionID string) (string, error) {
	msgs, _, err := s.cfg.Store.ListMessages(ctx, sessionID, 0, draftScan)
	if err != nil {
		return "", err
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Type == shared.MessageAgent && m.Status == shared.MessageComplete {
			if text := strings.TrimSpace(m.Content); text != "" {
				return shared.Clip(text, shared.MaxCommitMessageBytes), nil
			}
		}
	}
	return "", nil
}

// openTask returns a task that review can work on: one that exists and is
// not archived (its worktrees are gone).
func (s *Service) openTask(ctx context.Context, taskID string) (shared.Task, error) {
	task, err := s.cfg.Store.GetTask(ctx, taskID)
	if err != nil {
		return shared.Task{}, err
	}
	if task.Archived {
		return shared.Task{}, shared.Errorf(shared.CodeConflict, "task %q is archived; its worktrees are gone", taskID)
	}
	return task, nil
}

// repository returns an open task and its repository named by a request.
func (s *Service) repository(ctx context.Context, taskID, repositoryID string) (shared.Task, shared.TaskRepository, error) {
	task, err := s.openTask(ctx, taskID)
	if err != nil {
		return shared.Task{}, shared.TaskRepository{}, err
	}
	for _, r := range task.Repositories {
		if r.ID == repositoryID {
			return task, r, nil
		}
	}
	return shared.Task{}, shared.TaskRepository{}, shared.Errorf(shared.CodeNotFound, "task %q has no repository %q", taskID, repositoryID)
}

// workDir is where a repository's work is: its worktree, or the
// repository itself when it runs in place.
func workDir(r shared.TaskRepository) string {
	if r.WorktreePath != "" {
		return r.WorktreePath
	}
	return r.Path
}

// describe reads repositories of task as review shows them, in parallel:
// each one's git state is a few bounded git commands.
func (s *Service) describe(ctx context.Context, task shared.Task, repos []shared.TaskRepository) ([]shared.ReviewRepository, error) {
	srcs, err := s.cfg.Store.SummarySources(ctx, []string{task.ID})
	if err != nil {
		return nil, err
	}
	var prs []store.PullRequest
	if len(srcs) > 0 {
		prs = srcs[0].PullRequests
	}
	out := make([]shared.ReviewRepository, len(repos))
	var wg sync.WaitGroup
	for i, r := range repos {
		wg.Go(func() { out[i] = s.describeOne(ctx, task, r, prs) })
	}
	wg.Wait()
	return out, nil
}

// describeOne reads one repository; a failure to read it is its Error.
func (s *Service) describeOne(ctx context.Context, task shared.Task, r shared.TaskRepository, prs []store.PullRequest) shared.ReviewRepository {
	out := shared.ReviewRepository{
		RepositoryID: r.ID, Path: r.Path, Dir: workDir(r), Branch: r.Branch, BaseBranch: r.BaseBranch,
	}
	st, err := gitfinish.Read(ctx, out.Dir, r.BaseBranch)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	out.Branch, out.Remote, out.Upstream, out.UpstreamAhead = st.Branch, st.Remote, st.Upstream, st.UpstreamAhead
	out.Uncommitted, out.Ahead = st.Uncommitted, st.Ahead
	if s.pulls != nil && st.RemoteURL != "" {
		out.GitHubRepository, _ = github.RepositoryOf(st.RemoteURL, s.cfg.GitHubAPIURL)
	}
	out.PullRequestURL = pullRequestURL(task, prs, out.GitHubRepository, out.Branch)
	return out
}

// pullRequestURL is the pull request of a task's repository: the stored
// one whose head is the branch (of the GitHub repository, when known),
// the open one first, then the newest; else the task's explicit link,
// when it names that repository or the task has no other.
func pullRequestURL(task shared.Task, prs []store.PullRequest, repository, branch string) string {
	var best *store.PullRequest
	for i, pr := range prs {
		if branch == "" || pr.HeadBranch != branch || (repository != "" && !strings.EqualFold(pr.Repository, repository)) {
			continue
		}
		open, bestOpen := pr.State == store.PullRequestOpen, best != nil && best.State == store.PullRequestOpen
		if best == nil || (open && !bestOpen) || (open == bestOpen && pr.Number > best.Number) {
			best = &prs[i]
		}
	}
	switch {
	case best != nil:
		return best.URL
	case task.PullRequestURL == "":
		return ""
	case len(task.Repositories) == 1, repository != "" && strings.EqualFold(linkedRepository(task.PullRequestURL), repository):
		return task.PullRequestURL
	}
	return ""
}

// linkedRepository returns OWNER/NAME of a pull request URL
// (https://HOST/OWNER/NAME/pull/NUMBER), or "".
func linkedRepository(link string) string {
	u, err := url.Parse(link)
	if err != nil {
		return ""
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) != 4 || parts[2] != "pull" {
		return ""
	}
	return parts[0] + "/" + parts[1]
}
