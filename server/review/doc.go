// Package review lets a person review what a task's agents changed and
// finish the work: the task's repositories as finishing needs them
// (branch, remote, upstream, pull request), one page of a repository's
// changed files, one page of one file's diff, a commit, a push and a pull
// request on GitHub. It implements gateway.Review; the git work is
// package gitdiff's (reading) and package gitfinish's (commit, push), the
// GitHub call package github's.
//
// # Turns
//
// What one turn changed is the difference between two tree objects: the
// worktree as the turn found it when it started and as the task's next
// turn found it (or the worktree now, for the newest turn). TurnStarting,
// which package sessions calls once a turn's prompt is stored as sent and
// before the agent is handed it, writes each repository's tree
// (gitdiff.Snapshot, which leaves the user's index and stash alone) and
// stores its id (store.RecordTurnTree). The turn waits for it, so each
// repository's snapshot is bounded (Config.TurnTimeout, 5 s by default)
// and the repositories are snapshotted in parallel: the turn waits for
// the slowest repository, not for their sum. A failure is logged and the
// turn goes on without its record; reviewing that turn is then not_found.
//
// Trees are compared as the first page of a files listing found them:
// later pages and file diffs name both trees, so one review reads one
// comparison however the worktree moves meanwhile.
//
// # Finishing
//
// A commit or a push, once started, runs to its own end (gitfinish
// bounds each) even when the client that asked goes away: killing git
// mid-commit could leave the index locked. Only Close, at shutdown, cuts
// them. After either, the task's repositories are observed again, so the
// row's totals follow. A pull request opened here is stored as the
// poller and the webhook store them and linked to the task
// (tasks.pull_request_url), and the task's summary is marked, so the row
// shows it as it shows any pull request.
//
// # Goroutines
//
// TurnStarting runs one goroutine per repository of the task and waits
// for them before it returns. Nothing else starts one.
package review
