package gateway

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/herd-dev/herd/server/worktree"
	"github.com/herd-dev/herd/shared"
)

// resolveRepositories makes the repository paths of a task.create
// absolute, taking a relative one from the server process's working
// directory (as a newcomer's "./data/demo-repo" means), and checks, before
// anything is made, that each names a local git repository with a commit
// and the base branch it asks for: the same checks the task's worktrees
// make later (worktree.ResolveBase), done here so that a mistake comes
// back at once, for the repository it concerns. Such a mistake is a
// bad_request whose message names the path as resolved and whose details
// say the field at fault and that path: {"field":
// "repositories[i].path" (or ".base_branch"), "resolved": "/abs/path"}.
func resolveRepositories(ctx context.Context, repos []shared.RepositoryInput) error {
	if len(repos) > maxRepositories {
		return shared.Errorf(shared.CodeBadRequest, "a task may have at most %d repositories", maxRepositories)
	}
	for i := range repos {
		r := &repos[i]
		field := fmt.Sprintf("repositories[%d].path", i)
		if strings.TrimSpace(r.Path) == "" {
			e := shared.Errorf(shared.CodeBadRequest, "%s is required", field)
			e.Details = map[string]any{"field": field}
			return e
		}
		// Abs cleans the path it returns.
		resolved, err := filepath.Abs(r.Path)
		if err != nil {
			return fmt.Errorf("resolve %s: %w", field, err)
		}
		if _, err := worktree.ResolveBase(ctx, resolved, r.BaseBranch); err != nil {
			return repositoryError(i, r.Path, resolved, err)
		}
		r.Path = resolved
	}
	return nil
}

// repositoryError maps a failed check of the i-th repository, given as
// path and resolved to resolved, to a bad_request naming the field at
// fault; a failure of another kind (git missing, a timeout) is returned
// as it is.
func repositoryError(i int, path, resolved string, err error) error {
	field := fmt.Sprintf("repositories[%d].path", i)
	switch {
	case errors.Is(err, worktree.ErrBaseBranchMissing):
		field = fmt.Sprintf("repositories[%d].base_branch", i)
	case errors.Is(err, worktree.ErrNotRepository), errors.Is(err, worktree.ErrNoCommits):
	default:
		return fmt.Errorf("check %s: %w", field, err)
	}
	msg := fmt.Sprintf("%s: %v", field, err)
	if !filepath.IsAbs(path) {
		wd, _ := os.Getwd()
		msg += fmt.Sprintf(" (the relative path %q is taken from the server's working directory, %s)", path, wd)
	}
	return &shared.Error{
		Code: shared.CodeBadRequest, Message: msg,
		Details: map[string]any{"field": field, "resolved": resolved},
	}
}
