// Package taskgit ties tasks to their git repositories. It makes a task's
// worktrees when the task is created and removes them, guarded, when it
// is archived; it keeps the repositories' observations current through a
// gitwatch.Watcher: every repository of a task with a running session on
// the slow cadence, those of a focused session on the fast one, one final
// observation when the task settles, and one on request
// (session.git.refresh). Each changed observation is stored, the task's
// summary is marked for the projector, and the task's sessions receive
// session.git.updated with every repository's latest observation.
//
// Goroutines: Start runs the watcher's scheduler and workers on one
// goroutine the Service owns; Close cancels it and waits for it. Record
// calls arrive on the watcher's workers.
package taskgit
