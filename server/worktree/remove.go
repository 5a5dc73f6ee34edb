package worktree

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/herd-dev/herd/server/gitcli"
)

// Remove removes the worktree of repoPath in dir. Unless force is set, it
// refuses a worktree with uncommitted changes or untracked files (ErrDirty)
// and a locked one (ErrLocked). It never deletes the worktree's branch. A
// worktree whose directory has vanished loses only git's record of it, and
// a directory that is gone without a record is not an error: Remove can be
// retried.
func Remove(ctx context.Context, repoPath, dir string, force bool) error {
	wt, dir, err := inspect(ctx, repoPath, dir, !force)
	if err != nil {
		return err
	}
	if wt == nil {
		// Already removed; clear any record git kept of it.
		if _, err := gitcli.Run(ctx, repoPath, "worktree", "prune"); err != nil {
			return fmt.Errorf("prune worktrees of %s: %w", repoPath, err)
		}
		return nil
	}
	args := []string{"worktree", "remove"}
	if force {
		args = append(args, "--force", "--force") // twice: also when locked
	}
	if _, err := gitcli.Run(ctx, repoPath, append(args, wt.path)...); err != nil {
		return fmt.Errorf("remove worktree %s: %w", dir, err)
	}
	return nil
}

// Check returns the error Remove would return without force, removing
// nothing: nil if the worktree could be removed (or is gone already),
// else an error wrapping ErrNotRepository, ErrNotWorktree, ErrLocked or
// ErrDirty. A caller removing several worktrees checks them all first,
// so that a refusal leaves every one in place.
func Check(ctx context.Context, repoPath, dir string) error {
	_, _, err := inspect(ctx, repoPath, dir, true)
	return err
}

// inspect returns git's record of the worktree of repo in dir, nil if
// the worktree is gone, and dir made absolute. It fails if dir holds
// something else than a linked worktree of repo and, when guarded, if
// the worktree is locked or has changes.
func inspect(ctx context.Context, repo, dir string, guarded bool) (*listedWorktree, string, error) {
	if err := checkRepository(ctx, repo); err != nil {
		return nil, "", err
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, "", fmt.Errorf("worktree directory %s: %w", dir, err)
	}
	wt, err := findWorktree(ctx, repo, dir)
	if err != nil {
		return nil, "", err
	}
	_, statErr := os.Lstat(dir)
	missing := errors.Is(statErr, fs.ErrNotExist)
	switch {
	case wt == nil && missing:
		return nil, dir, nil
	case wt == nil:
		return nil, "", fmt.Errorf("directory %s in %s: %w", dir, repo, ErrNotWorktree)
	case wt.main:
		return nil, "", fmt.Errorf("directory %s is the main working tree of %s: %w", dir, repo, ErrNotWorktree)
	case !guarded:
		return wt, dir, nil
	case wt.locked:
		reason := ""
		if wt.lockReason != "" {
			reason = " (" + wt.lockReason + ")"
		}
		return nil, "", fmt.Errorf("worktree %s: %w%s; unlock it with git worktree unlock, or force", dir, ErrLocked, reason)
	case !missing:
		if err := checkClean(ctx, dir); err != nil {
			return nil, "", err
		}
	}
	return wt, dir, nil
}

// listedWorktree is one entry of git worktree list --porcelain.
type listedWorktree struct {
	path       string
	main       bool // the repository's main working tree, always listed first
	locked     bool
	lockReason string
}

// findWorktree returns the worktree of repo in dir, or nil if repo has
// none there. It reads git's list line by line, so that a repository with
// thousands of worktrees costs no more memory than one.
func findWorktree(ctx context.Context, repo, dir string) (*listedWorktree, error) {
	var found, current *listedWorktree
	first := true
	want := realPath(dir)
	git := gitcli.Runner{Dir: repo}
	err := git.Stream(ctx, bufio.ScanLines, func(line []byte) bool {
		attr, value, _ := strings.Cut(string(line), " ")
		switch {
		case attr == "worktree":
			if found != nil {
				return false // the entry found is complete
			}
			current = &listedWorktree{path: value, main: first}
			first = false
			if p := filepath.Clean(value); p == dir || p == want {
				found = current
			}
		case attr == "locked" && current != nil:
			current.locked, current.lockReason = true, value
		}
		return true
	}, "worktree", "list", "--porcelain")
	if err != nil {
		return nil, fmt.Errorf("list worktrees of %s: %w", repo, err)
	}
	return found, nil
}

// realPath returns dir with every symbolic link in its existing part
// resolved, as git records a worktree's path.
func realPath(dir string) string {
	if resolved, err := filepath.EvalSymlinks(dir); err == nil {
		return resolved
	}
	parent := filepath.Dir(dir)
	if parent == dir {
		return dir
	}
	return filepath.Join(realPath(parent), filepath.Base(dir))
}

// checkClean returns ErrDirty if the worktree in dir has uncommitted
// changes or untracked files, naming the first one. Ignored files do not
// count: git worktree remove deletes them too.
func checkClean(ctx context.Context, dir string) error {
	var first string
	git := gitcli.Runner{Dir: dir}
	err := git.Stream(ctx, gitcli.ScanNUL, func(entry []byte) bool {
		first = string(entry)
		return false
	}, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=none")
	switch {
	case err != nil:
		return fmt.Errorf("check worktree %s for changes: %w", dir, err)
	case first != "":
		return fmt.Errorf("worktree %s: %w (first: %s); commit or discard them, or force", dir, ErrDirty, first)
	}
	return nil
}
