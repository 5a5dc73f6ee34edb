package review

import (
	"context"
	"fmt"
	"strings"

	"github.com/herd-dev/herd/server/gitfinish"
	"github.com/herd-dev/herd/server/github"
	"github.com/herd-dev/herd/shared"
)

// Commit commits everything in a repository's worktree with the request's
// message and answers the repository as it then is.
func (s *Service) Commit(ctx context.Context, req shared.ReviewCommitRequest) (shared.ReviewCommitResponse, error) {
	task, r, err := s.repository(ctx, req.TaskID, req.RepositoryID)
	if err != nil {
		return shared.ReviewCommitResponse{}, err
	}
	lasting, stop := s.lasting(ctx)
	commit, err := gitfinish.Commit(lasting, workDir(r), req.Message)
	stop()
	if err != nil {
		return shared.ReviewCommitResponse{}, err
	}
	return shared.ReviewCommitResponse{Commit: commit, Repository: s.finished(ctx, task, r)}, nil
}

// Push pushes a repository's branch to its remote and answers git's
// summary and the repository as it then is.
func (s *Service) Push(ctx context.Context, req shared.ReviewPushRequest) (shared.ReviewPushResponse, error) {
	task, r, err := s.repository(ctx, req.TaskID, req.RepositoryID)
	if err != nil {
		return shared.ReviewPushResponse{}, err
	}
	lasting, stop := s.lasting(ctx)
	output, err := gitfinish.Push(lasting, workDir(r))
	stop()
	if err != nil {
		return shared.ReviewPushResponse{}, err
	}
	return shared.ReviewPushResponse{Output: output, Repository: s.finished(ctx, task, r)}, nil
}

// lasting returns a context for a git write that the end of its request
// does not cut (see the package documentation), only Close; stop
// releases it.
func (s *Service) lasting(ctx context.Context) (context.Context, func()) {
	lasting, cancel := context.WithCancel(context.WithoutCancel(ctx))
	unhook := context.AfterFunc(s.ctx, cancel)
	return lasting, func() {
		unhook()
		cancel()
	}
}

// finished has a repository observed again after a commit or a push, so
// the row's totals follow, and reads it as review shows it. The commit or
// push is done whatever this meets: what cannot be read is the
// repository's Error.
func (s *Service) finished(ctx context.Context, task shared.Task, r shared.TaskRepository) shared.ReviewRepository {
	// The row follows the change even when the client that asked for it
	// has gone.
	if err := s.cfg.Git.RefreshTask(context.WithoutCancel(ctx), task.ID); err != nil {
		s.log.Warn("observe a task's repositories after finishing", "task", task.ID, "err", err)
	}
	repos, err := s.describe(ctx, task, []shared.TaskRepository{r})
	if err != nil {
		return shared.ReviewRepository{RepositoryID: r.ID, Path: r.Path, Dir: workDir(r), BaseBranch: r.BaseBranch, Error: err.Error()}
	}
	return repos[0]
}

// CreatePullRequest opens a pull request on GitHub from a repository's
// pushed branch into its base branch, stores it as the poller and the
// webhook store pull requests, links it to the task and marks the
// summaries that change.
func (s *Service) CreatePullRequest(ctx context.Context, req shared.ReviewPullRequestCreateRequest) (shared.ReviewPullRequestCreateResponse, error) {
	if s.pulls == nil {
		return shared.ReviewPullRequestCreateResponse{}, shared.Errorf(shared.CodeConflict, "herd holds no GitHub token (--github-token), so it cannot open pull requests")
	}
	task, r, err := s.repository(ctx, req.TaskID, req.RepositoryID)
	if err != nil {
		return shared.ReviewPullRequestCreateResponse{}, err
	}
	st, err := gitfinish.Read(ctx, workDir(r), r.BaseBranch)
	if err != nil {
		return shared.ReviewPullRequestCreateResponse{}, err
	}
	repository, ok := github.RepositoryOf(st.RemoteURL, s.cfg.GitHubAPIURL)
	switch {
	case st.Remote == "":
		return shared.ReviewPullRequestCreateResponse{}, shared.Errorf(shared.CodeConflict, "the repository has no remote to open a pull request on")
	case !ok:
		return shared.ReviewPullRequestCreateResponse{}, shared.Errorf(shared.CodeConflict, "the remote %s (%s) is not a repository on the GitHub herd talks to", st.Remote, st.RemoteURL)
	case st.Branch == "":
		return shared.ReviewPullRequestCreateResponse{}, shared.Errorf(shared.CodeConflict, "HEAD is detached; a pull request needs a branch")
	case st.Upstream == "":
		return shared.ReviewPullRequestCreateResponse{}, shared.Errorf(shared.CodeConflict, "push the branch first: %s has no upstream on %s", st.Branch, st.Remote)
	case st.UpstreamAhead != nil && *st.UpstreamAhead > 0:
		return shared.ReviewPullRequestCreateResponse{}, shared.Errorf(shared.CodeConflict, "push the branch first: %d of its commits are not on %s", *st.UpstreamAhead, st.Remote)
	}
	// The pull request's head is the branch as the remote names it.
	head := strings.TrimPrefix(st.Upstream, st.Remote+"/")
	created, err := s.pulls.Create(ctx, github.NewPullRequest{
		Repository: repository, Title: req.Title, Body: req.Body, Head: head, Base: r.BaseBranch, Draft: req.Draft,
	})
	if err != nil {
		return shared.ReviewPullRequestCreateResponse{}, err
	}
	if err := s.link(ctx, task.ID, created); err != nil {
		return shared.ReviewPullRequestCreateResponse{}, fmt.Errorf("pull request %s was opened but not stored: %w", created.URL, err)
	}
	return shared.ReviewPullRequestCreateResponse{URL: created.URL, Number: created.Number}, nil
}

// link links a pull request just opened to its task and stores it as a
// poll of it would be (github.CreatedPullRequest.Apply), which finds the
// task by that link, then marks every task whose pull requests changed.
func (s *Service) link(ctx context.Context, taskID string, created github.CreatedPullRequest) error {
	link := created.URL
	if _, err := s.cfg.Store.UpdateTask(ctx, shared.TaskUpdateRequest{TaskID: taskID, PullRequestURL: &link}); err != nil {
		return err
	}
	changed, err := s.cfg.Store.UpdatePullRequests(ctx, created.Apply)
	if err != nil {
		return err
	}
	// The link moves stored pull requests between tasks, as task.update's
	// does.
	losers, err := s.cfg.Store.RelinkPullRequests(ctx, taskID)
	if err != nil {
		return err
	}
	for _, id := range append(append([]string{taskID}, changed...), losers...) {
		s.cfg.Summaries.Mark(id)
	}
	return nil
}
