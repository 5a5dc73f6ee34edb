package taskgit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/server/worktree"
	"github.com/herd-dev/herd/shared"
)

// CreateTask creates a task with a worktree of each of its repositories,
// except those run in place, on the task's branch. Every repository is
// checked before the task exists, so a task that fails to be created
// leaves nothing behind: no row, no worktree, no branch. Each repository
// is then observed once, so the row shows its totals from the start. It
// implements gateway.Tasks.
func (s *Service) CreateTask(ctx context.Context, in shared.TaskCreateRequest) (shared.Task, error) {
	id := store.NewTaskID()
	branch := worktree.BranchName(id, in.Title)
	checkouts := make([]store.RepositoryCheckout, len(in.Repositories))
	// made are the worktrees made so far, by repository path.
	type madeWorktree struct {
		repo string
		wt   worktree.Worktree
	}
	var made []madeWorktree
	undo := func() {
		ctx := context.WithoutCancel(ctx)
		for _, m := range made {
			if err := worktree.Remove(ctx, m.repo, m.wt.Path, true); err != nil {
				s.log.Warn("remove worktree of a task not created", "worktree", m.wt.Path, "err", err)
				continue
			}
			// The branch is new and holds no commit of its own.
			if err := worktree.DeleteBranch(ctx, m.repo, m.wt.Branch); err != nil {
				s.log.Warn("delete branch of a task not created", "branch", m.wt.Branch, "err", err)
			}
		}
		_ = os.Remove(filepath.Join(s.cfg.WorktreeDir, id))
	}
	for i, r := range in.Repositories {
		if r.RunInPlace {
			base, err := worktree.ResolveBase(ctx, r.Path, r.BaseBranch)
			if err != nil {
				undo()
				return shared.Task{}, repositoryError(i, err)
			}
			checkouts[i] = store.RepositoryCheckout{BaseBranch: base}
			continue
		}
		wt, err := worktree.Create(ctx, worktree.Spec{
			RepoPath:   r.Path,
			BaseBranch: r.BaseBranch,
			Branch:     branch,
			Dir:        filepath.Join(s.cfg.WorktreeDir, id, strconv.Itoa(i)+"-"+filepath.Base(r.Path)),
		})
		if err != nil {
			undo()
			return shared.Task{}, repositoryError(i, err)
		}
		made = append(made, madeWorktree{repo: r.Path, wt: wt})
		checkouts[i] = store.RepositoryCheckout{Branch: wt.Branch, WorktreePath: wt.Path, BaseBranch: wt.BaseBranch}
	}
	task, err := s.cfg.Store.CreateTaskAs(ctx, id, in, checkouts)
	if err != nil {
		undo()
		return shared.Task{}, err
	}
	s.refresh(s.remember(task))
	return task, nil
}

// ArchiveTask removes a task's worktrees, then archives it. Unless forced
// it refuses, removing nothing, while a session of the task runs or a
// worktree holds uncommitted work or is locked. Branches stay: no commit
// is lost. It implements gateway.Tasks.
func (s *Service) ArchiveTask(ctx context.Context, in shared.TaskArchiveRequest) (shared.Task, error) {
	task, err := s.cfg.Store.GetTask(ctx, in.TaskID)
	if err != nil || task.Archived {
		return task, err
	}
	if !in.Force {
		if s.isRunning(task.ID) {
			return shared.Task{}, shared.Errorf(shared.CodeConflict, "task %q has a running session; cancel it first, or force", task.ID)
		}
		for i, r := range task.Repositories {
			if r.WorktreePath == "" {
				continue
			}
			if err := worktree.Check(ctx, r.Path, r.WorktreePath); err != nil {
				return shared.Task{}, repositoryError(i, err)
			}
		}
	}
	for i, r := range task.Repositories {
		if r.WorktreePath == "" {
			continue
		}
		if err := worktree.Remove(ctx, r.Path, r.WorktreePath, in.Force); err != nil {
			return shared.Task{}, repositoryError(i, err)
		}
	}
	_ = os.Remove(filepath.Join(s.cfg.WorktreeDir, task.ID)) // empty by now
	s.forget(task.ID)
	return s.cfg.Store.ArchiveTask(ctx, task.ID)
}

// isRunning reports whether a session of the task is RUNNING.
func (s *Service) isRunning(taskID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tasks[taskID]
	return ok && len(t.running) > 0
}

// repositoryError maps a worktree error of the task's i-th repository to
// the protocol's codes, naming the repository.
func repositoryError(i int, err error) error {
	code := shared.CodeInternal
	switch {
	case errors.Is(err, worktree.ErrNotRepository), errors.Is(err, worktree.ErrNoCommits),
		errors.Is(err, worktree.ErrBaseBranchMissing), errors.Is(err, worktree.ErrInvalidBranch):
		code = shared.CodeBadRequest
	case errors.Is(err, worktree.ErrBranchExists), errors.Is(err, worktree.ErrDirExists),
		errors.Is(err, worktree.ErrDirty), errors.Is(err, worktree.ErrLocked), errors.Is(err, worktree.ErrNotWorktree):
		code = shared.CodeConflict
	}
	if code == shared.CodeInternal {
		return fmt.Errorf("repositories[%d]: %w", i, err)
	}
	return shared.Errorf(code, "repositories[%d]: %v", i, err)
}
