package worktree

import (
	"bufio"
	"context"
	"fmt"

	"github.com/herd-dev/herd/server/gitcli"
)

// DeleteBranch deletes a branch of repoPath that holds no commit of its
// own: its tip must be on another branch, a remote-tracking branch or a
// tag, or the branch is kept and the error wraps ErrUnmerged. A branch
// checked out in a worktree is kept too (git refuses), and a missing
// branch is not an error. It is meant for undoing a Create whose task was
// never made.
func DeleteBranch(ctx context.Context, repoPath, branch string) error {
	if err := checkRepository(ctx, repoPath); err != nil {
		return err
	}
	ref := "refs/heads/" + branch
	tip, found, err := resolveCommit(ctx, repoPath, ref)
	if err != nil || !found {
		return err
	}
	elsewhere := false
	git := gitcli.Runner{Dir: repoPath}
	err = git.Stream(ctx, bufio.ScanLines, func(other []byte) bool {
		elsewhere = string(other) != ref
		return !elsewhere
	}, "for-each-ref", "--format=%(refname)", "--contains", tip, "refs/heads", "refs/remotes", "refs/tags")
	switch {
	case err != nil:
		return fmt.Errorf("find branches containing %s in %s: %w", branch, repoPath, err)
	case !elsewhere:
		return fmt.Errorf("branch %q in %s: %w", branch, repoPath, ErrUnmerged)
	}
	// git branch refuses a checked-out branch, the only kind agents
	// commit on, so an agent's commit cannot slip in between the check
	// and the deletion.
	if _, err := gitcli.Run(ctx, repoPath, "branch", "--delete", "--force", branch); err != nil {
		return fmt.Errorf("delete branch %q in %s: %w", branch, repoPath, err)
	}
	return nil
}
