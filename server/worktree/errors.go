package worktree

import "errors"

// Errors a person can act on; see the package documentation. Returned
// errors wrap them with the path or branch involved.
var (
	// ErrNotRepository means the repository path is missing or not a git
	// repository.
	ErrNotRepository = errors.New("not a git repository")
	// ErrNoCommits means the repository has no commit to start a branch
	// from.
	ErrNoCommits = errors.New("repository has no commits")
	// ErrBaseBranchMissing means the base branch does not exist, or none
	// was named while the repository's HEAD is detached.
	ErrBaseBranchMissing = errors.New("base branch missing")
	// ErrInvalidBranch means the new branch's name is not valid in git.
	ErrInvalidBranch = errors.New("invalid branch name")
	// ErrBranchExists means the new branch already exists.
	ErrBranchExists = errors.New("branch already exists")
	// ErrDirExists means the worktree's directory exists and is not empty.
	ErrDirExists = errors.New("directory exists and is not empty")
	// ErrDirty means the worktree has uncommitted changes or untracked
	// files.
	ErrDirty = errors.New("worktree has uncommitted changes or untracked files")
	// ErrLocked means the worktree is locked.
	ErrLocked = errors.New("worktree is locked")
	// ErrUnmerged means a branch holds commits that no other branch or
	// tag has.
	ErrUnmerged = errors.New("branch holds commits found on no other branch or tag")
	// ErrNotWorktree means the directory is not a linked worktree of the
	// repository.
	ErrNotWorktree = errors.New("not a linked worktree of the repository")
)
