package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/herd-dev/herd/server/gitcli"
)

// addTimeout bounds git worktree add, which writes every file of the
// checkout; other commands get gitcli.DefaultTimeout.
const addTimeout = 2 * time.Minute

// Spec says which worktree Create adds.
type Spec struct {
	// RepoPath is the repository the worktree belongs to: its working
	// tree (or a directory in it) or a bare repository.
	RepoPath string
	// BaseBranch is where the new branch starts: a branch, or any name
	// git resolves to a commit (a remote-tracking branch, a tag). Empty
	// means the branch the repository's HEAD is on.
	BaseBranch string
	// Branch is the new branch, which must not exist yet; see BranchName.
	Branch string
	// Dir is the worktree's directory, which must not exist or be empty;
	// missing parents are created. A relative path is taken from the
	// process's working directory.
	Dir string
}

// Worktree is a worktree Create added.
type Worktree struct {
	// Path is the worktree's directory, absolute.
	Path string
	// Branch is the branch checked out in it.
	Branch string
	// BaseBranch is the branch it started from: Spec.BaseBranch, or the
	// branch HEAD was on when that was empty.
	BaseBranch string
}

// Create adds a worktree of s.RepoPath in s.Dir, checked out on the new
// branch s.Branch started from s.BaseBranch. The new branch tracks
// nothing. Errors a person can fix wrap the package's sentinels.
func Create(ctx context.Context, s Spec) (Worktree, error) {
	switch {
	case s.RepoPath == "":
		return Worktree{}, errors.New("create worktree: Spec.RepoPath is empty")
	case s.Branch == "":
		return Worktree{}, errors.New("create worktree: Spec.Branch is empty")
	case s.Dir == "":
		return Worktree{}, errors.New("create worktree: Spec.Dir is empty")
	}
	if err := checkRepository(ctx, s.RepoPath); err != nil {
		return Worktree{}, err
	}
	base, start, err := resolveBase(ctx, s.RepoPath, s.BaseBranch)
	if err != nil {
		return Worktree{}, err
	}
	if err := checkNewBranch(ctx, s.RepoPath, s.Branch); err != nil {
		return Worktree{}, err
	}
	dir, err := filepath.Abs(s.Dir)
	if err != nil {
		return Worktree{}, fmt.Errorf("create worktree: %w", err)
	}
	if err := checkFreeDir(dir); err != nil {
		return Worktree{}, err
	}
	git := gitcli.Runner{Dir: s.RepoPath, Timeout: addTimeout}
	if _, err := git.Run(ctx, "worktree", "add", "--quiet", "-b", s.Branch, dir, start); err != nil {
		return Worktree{}, fmt.Errorf("create worktree %s on branch %s: %w", dir, s.Branch, err)
	}
	return Worktree{Path: dir, Branch: s.Branch, BaseBranch: base}, nil
}

// ResolveBase returns the base branch a worktree of repoPath would start
// from, checking that it names a commit: baseBranch, or the branch HEAD
// is on when baseBranch is empty. Errors a person can fix wrap
// ErrNotRepository, ErrNoCommits or ErrBaseBranchMissing.
func ResolveBase(ctx context.Context, repoPath, baseBranch string) (string, error) {
	if err := checkRepository(ctx, repoPath); err != nil {
		return "", err
	}
	base, _, err := resolveBase(ctx, repoPath, baseBranch)
	return base, err
}

// checkRepository returns nil if path is a git repository.
func checkRepository(ctx context.Context, path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("repository %s does not exist: %w", path, ErrNotRepository)
	case err != nil:
		return fmt.Errorf("repository %s: %w: %w", path, ErrNotRepository, err)
	case !fi.IsDir():
		return fmt.Errorf("repository %s is not a directory: %w", path, ErrNotRepository)
	}
	_, err = gitcli.Run(ctx, path, "rev-parse", "--git-dir")
	switch {
	case gitcli.ExitCode(err) == 128:
		return fmt.Errorf("repository %s: %w: %w", path, ErrNotRepository, err)
	case err != nil:
		return fmt.Errorf("check repository %s: %w", path, err)
	}
	return nil
}

// resolveBase returns the name of the base branch, name or else HEAD's
// branch, and the commit it points to.
func resolveBase(ctx context.Context, repo, name string) (base, commit string, err error) {
	base = name
	if base == "" {
		out, err := gitcli.Run(ctx, repo, "symbolic-ref", "--quiet", "--short", "HEAD")
		switch {
		case gitcli.ExitCode(err) == 1:
			return "", "", fmt.Errorf("HEAD of %s is detached, so there is no branch to start from; name a base branch: %w",
				repo, ErrBaseBranchMissing)
		case err != nil:
			return "", "", fmt.Errorf("read HEAD of %s: %w", repo, err)
		}
		base = strings.TrimSpace(string(out))
	}
	commit, found, err := resolveCommit(ctx, repo, base)
	switch {
	case err != nil:
		return "", "", err
	case found:
		return base, commit, nil
	}
	if name != "" {
		// When HEAD has no commit either, the repository most likely
		// has none, which is what the person must fix.
		_, hasCommits, err := resolveCommit(ctx, repo, "HEAD")
		switch {
		case err != nil:
			return "", "", err
		case hasCommits:
			return "", "", fmt.Errorf("base branch %q not found in %s: %w", name, repo, ErrBaseBranchMissing)
		}
	}
	return "", "", fmt.Errorf("repository %s: %w; commit once before starting a task", repo, ErrNoCommits)
}

// resolveCommit returns the commit rev names in repo, and false if it
// names none.
func resolveCommit(ctx context.Context, repo, rev string) (commit string, found bool, err error) {
	out, err := gitcli.Run(ctx, repo, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	switch {
	case gitcli.ExitCode(err) == 1:
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("resolve %q in %s: %w", rev, repo, err)
	}
	return strings.TrimSpace(string(out)), true, nil
}

// checkNewBranch returns nil if branch is a valid name that no branch of
// repo has yet.
func checkNewBranch(ctx context.Context, repo, branch string) error {
	out, err := gitcli.Run(ctx, repo, "check-ref-format", "--branch", branch)
	switch {
	case gitcli.ExitCode(err) == 128 || err == nil && strings.TrimSpace(string(out)) != branch:
		// A different answer means git expanded a shorthand such as
		// @{-1}, which is not a name.
		return fmt.Errorf("branch %q: %w", branch, ErrInvalidBranch)
	case err != nil:
		return fmt.Errorf("check branch name %q: %w", branch, err)
	}
	_, found, err := resolveCommit(ctx, repo, "refs/heads/"+branch)
	switch {
	case err != nil:
		return err
	case found:
		return fmt.Errorf("branch %q in %s: %w", branch, repo, ErrBranchExists)
	}
	return nil
}

// checkFreeDir returns nil if dir does not exist or is an empty directory.
func checkFreeDir(dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("check worktree directory %s: %w", dir, err)
	case !fi.IsDir():
		return fmt.Errorf("worktree directory %s: %w", dir, ErrDirExists)
	}
	entries, err := os.ReadDir(dir)
	switch {
	case err != nil:
		return fmt.Errorf("check worktree directory %s: %w", dir, err)
	case len(entries) > 0:
		return fmt.Errorf("worktree directory %s: %w", dir, ErrDirExists)
	}
	return nil
}
