// Package worktree gives each task its own git working tree: Create adds a
// linked worktree of a repository on a new branch, and Remove takes it
// away again without ever losing work. Check tells ahead of time whether
// Remove would refuse, ResolveBase checks a repository an agent works in
// in place, and DeleteBranch undoes the branch of a task never made.
//
// A worktree lives in a directory the caller chooses under herd's data
// directory and is checked out on a new branch named by BranchName
// ("herd/<short-id>-<slug>"), started from a base branch: the one the
// caller names, or the branch the repository's HEAD is on. The agent works
// there, so several tasks can change one repository at once without
// touching each other's files or the person's own checkout.
//
// # Errors
//
// Everything a person can fix comes back as an error that wraps one of the
// sentinels below and names the path or branch involved, so the caller can
// map it to a protocol code with errors.Is and show the message as it is:
//
//   - ErrNotRepository: the repository path is missing or not a git
//     repository (git's own reason, such as an unsafe owner, is included).
//   - ErrNoCommits: the repository has no commit to branch from yet.
//   - ErrBaseBranchMissing: the base branch does not exist, or none was
//     named while HEAD is detached.
//   - ErrInvalidBranch: the new branch's name is not a valid git branch
//     name.
//   - ErrBranchExists: the new branch already exists.
//   - ErrDirExists: the target directory exists and is not empty.
//   - ErrDirty: the worktree has uncommitted changes or untracked files.
//   - ErrLocked: the worktree is locked (git worktree lock).
//   - ErrNotWorktree: the directory is not a linked worktree of the
//     repository.
//   - ErrUnmerged: the branch to delete holds commits no other branch or
//     tag has.
//
// Any other failure (git missing, a timeout, a full disk) is returned as
// git reported it, wrapped with what was being done.
//
// # Never losing work
//
// Remove refuses a worktree with uncommitted changes or untracked files
// (ErrDirty) or a locked one (ErrLocked) unless forced, and it never
// deletes the branch: whatever was committed stays reachable from
// herd/<short-id>-<slug> after the worktree is gone. DeleteBranch deletes
// a branch only when its commits are all on another branch or tag. Removing a worktree
// whose directory has already vanished only clears git's record of it,
// and removing one that is already gone is not an error.
//
// Every git command is bounded in time and output by package gitcli.
//
// # Goroutines
//
// None.
package worktree
