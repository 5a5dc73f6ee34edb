// Package gitwatch observes the git working trees of task repositories —
// lines added and deleted, files changed, commits ahead of and behind the
// base branch and the upstream — and hands every change to a callback
// that persists it, so a task row can show a task's git totals without
// anyone opening its session.
//
// # Observations
//
// Observe looks at one working tree, usually with four git commands:
// rev-list counts the commits ahead of and behind the base branch, and
// those of the upstream; diff --numstat --merge-base totals commits,
// staged and unstaged changes, from the merge base with the base branch
// to the working tree; ls-files --others --exclude-standard lists the
// untracked files that are not ignored, each of which counts as a changed
// file whose lines are additions. Binary files count as changed files
// without lines, renames as a deletion and an addition (--no-renames, so
// that the totals do not depend on git's rename detection). When the base
// cannot be compared with (none named, unknown, or no common history),
// the observation says so (ComparisonUnavailable) and counts only what is
// not committed.
//
// Nothing is held whole in memory: git's output is read token by token
// and only summed, and untracked files are read through one buffer, at
// most 16 MiB of each. Every git command runs through package gitcli,
// bounded in time and output, without the optional locks that would
// contend with an agent's own git.
//
// # Scheduling
//
// A Watcher decides when to observe which repository:
//
//   - Watch: a running execution's repository is observed at once, then
//     SlowInterval after each observation ends, whoever is looking.
//   - Focus and Unfocus: while a watched repository has a positive focus
//     count (a browser has its session open), FastInterval replaces
//     SlowInterval. Counts let several browsers focus one repository.
//   - Refresh: one observation as soon as a worker is free, ahead of
//     scheduled ones, watched or not, changing nothing else.
//   - Unwatch: a settled task's repository is no longer observed; what
//     was last recorded stays.
//
// At most Workers observations run at once, so five hundred watched
// repositories never start five hundred gits together, and one repository
// is never observed twice at once. Each repository is queued at most once:
// a repository due again while queued or being observed waits for that
// observation to end, and Refresh requests coalesce into the observation
// already queued or, while one runs, into exactly one that follows it. The
// queue is therefore bounded by the number of repositories; that
// coalescing is its overflow policy, and Metrics counts the refreshes it
// absorbs. Each observation is bounded by Timeout.
//
// # Recording
//
// Record receives an outcome only when it differs from the last one
// recorded for that repository, so an idle tree costs git commands but no
// writes. A failed observation is recorded with its error, once per
// distinct message, and never as totals: the caller keeps the last
// successful observation visible and does not claim a clean tree from
// missing data. A success after a failure is always recorded. A
// repository that is neither watched nor being observed is forgotten,
// including what was last recorded for it.
//
// # Goroutines
//
// Run starts them all and returns when they have ended, after its context
// ends:
//
//   - the scheduler (Run's own goroutine) queues watched repositories as
//     they fall due, sleeping on one timer until the next is due or a
//     method changes the schedule;
//   - Workers workers take repositories from the queue, observe them with
//     Config.Observe and call Config.Record. The end of Run's context
//     cuts their observations short, kills their git processes, and ends
//     them.
//
// The methods only change the schedule under a mutex and signal the
// scheduler or the workers through capacity-bounded channels without
// blocking.
package gitwatch
