// Package projector keeps each task's status summary, the bounded read
// model a task row shows (shared.TaskStatusSummary), equal to what the
// task's authoritative rows say. It is the only writer of summaries.
//
// Whoever changes a source row of a task (a session's state or activity, a
// message, a queued prompt, a git observation, a pull request, the task's
// primary session or error dismissal) commits the change and then calls
// Mark with the task's id. The projector later reads the task's sources
// afresh, derives the summary and, when it changed, stores it under the
// next revision and publishes task.status_summary.updated on the task's
// workspace feed with the complete summary. A mark carries no data, so
// marks can be lost to nothing but a crash, and any number of them for one
// task cost one projection.
//
// # Derivation rules
//
// Derive is a pure function of store.SummarySource:
//
//   - primary_session is the id and state of the task's primary session;
//     absent while the task has none.
//   - foreground_activity is generating when any session of the task is
//     generating, else background when any is busy in the background, else
//     absent. active_subagent_count sums the sessions' live subagents.
//   - pending_action is permission when any session of the task has a
//     pending permission request, else clarification when any has a
//     pending clarification request, else absent: permission outranks
//     clarification. It depends on the pending request rows alone, so it
//     clears only when the request that armed it is resolved (or deleted),
//     never because another message of the session completed.
//   - active_error is the task's newest agent error that is neither
//     dismissed (created after tasks.error_dismissed_at) nor answered (an
//     agent message with a greater seq exists in its session). Its stamp is
//     the error message's id, occurred_at its creation time, and its
//     preview the start of its content as valid UTF-8 of at most
//     shared.MaxErrorPreviewBytes bytes cut on a rune boundary (see
//     Preview).
//   - preview says what the primary session is doing, in one line: the
//     title of its oldest open permission request, else its oldest open
//     clarification question, else the first line of its newest complete
//     agent message that is not blank, else "You: " and the first line of
//     its newest sent prompt, else absent; a source with nothing to show
//     gives way to the next. The line is cleaned and bounded as previewLine says (control
//     characters removed, white space collapsed, light Markdown markers
//     dropped, at most shared.MaxPreviewBytes bytes cut on a character
//     boundary with "…"). The messages come from the store as one
//     bounded excerpt each (the session row's last_agent_line and
//     last_prompt_line, the start of a pending request), never from the
//     transcript, and an agent message counts only once it is complete:
//     a streaming chunk changes no source of the summary, so a stream of
//     any length costs no projection.
//   - queued_prompt_count counts the prompts waiting for dispatch in all
//     the task's sessions.
//   - last_activity_at is the newest updated_at of the task's sessions;
//     absent while it has none.
//   - git totals additions, deletions and changed files over the
//     repositories with a successful observation, each repository counted
//     by its latest one; ahead and behind only over those whose comparison
//     is available. A failed observation never replaces a repository's
//     latest success, and git is absent until some repository has one: a
//     summary never claims a clean tree from missing data, and an update of
//     one repository never forgets another.
//   - pull_request is absent without pull requests. count counts them and
//     open_count those open and not merged. Each has a status: merged;
//     closed; draft (open); failure (checks failed); blocked (changes
//     requested); pending (checks running); awaiting_review; ready
//     (approved, checks passed or none); passing (checks passed); else
//     neutral, the first that applies. aggregate_state is the most
//     attention-worthy status among the open pull requests when there are
//     any, else among the others, in the order failure, blocked, pending,
//     awaiting_review, ready, passing, draft, merged, closed, neutral;
//     number and url name the pull request that gave it (the highest
//     number among ties).
//
// # Revisions
//
// A summary that Derive leaves semantically unchanged (equal but for
// revision and updated_at) is neither written nor published, and keeps its
// revision. Otherwise the projector stores it as revision+1 with
// store.WriteSummary, a compare-and-update against the revision it read:
// revisions of a task rise by one per change and are never reused, and a
// published summary has been committed first. Every field belongs to the
// revision: nothing else writes a summary.
//
// store.SummarySources reads a task's summary row before its source rows.
// A writer that read newer sources therefore read the revision no earlier,
// and if it stored first, the revision the slower writer expects is gone:
// the slower write fails instead of replacing a newer value with a staler
// one. The loser never retries its derivation; it marks the task again, so
// the task is projected from fresh reads.
//
// # Several writers
//
// Several projectors may share a database (replicas on PostgreSQL). The
// compare-and-update alone does not protect a no-op: projector A reads
// revision r and sources S2 and finds nothing to change, while projector
// B, which read revision r and the older S1 before the change to S2, then
// stores S1's summary as r+1. The mark that followed S2 was spent on A's
// no-op. So a projector that wrote a summary marks the task once more and
// re-derives it from sources read after its write: a stale write is
// corrected by its own writer, and a fresh one costs one read. With one
// projector this pass always finds nothing to change; Stats counts it as
// Unchanged.
//
// # Batches, debounce and flushing
//
// Marks are dirty flags: a set of task ids plus a queue in marking order,
// both bounded by the number of tasks, since marking a dirty task changes
// nothing. Mark takes a mutex for a map lookup and an append and signals a
// capacity-one wake channel without blocking; it never touches the
// database.
//
// The writer goroutine sleeps until woken, waits Config.Debounce so that a
// burst of events gathers, then takes up to Config.BatchSize dirty tasks
// (oldest marks first), loads all their sources with one
// store.SummarySources call (a constant number of queries) and projects
// them one by one, publishing each change right after storing it. It
// repeats until no task is dirty, waiting the debounce again before each
// batch that would not be full: a task is projected at most once per
// debounce however often it is marked, and the database is not kept busy
// with batches of one while events trickle in. A task marked while it is
// being projected is dirty again and projected again.
//
// Every mark gets a sequence number. Flush waits until every mark made
// before it has been projected (including the re-projections above);
// Dismiss waits for its own task only; Rebuild marks all tasks, one batch
// at a time, and waits for each batch. While anyone waits, the writer skips
// the debounce.
//
// # Failures
//
// When loading a batch or storing a summary fails, the stored summary
// stays as it was (the last valid one is still what clients see), the
// failure is logged once with the task ids, the tasks are marked dirty
// again, and the writer waits before its next batch, doubling the wait
// from 100 ms up to 10 s while failures continue. The next mark or Rebuild
// repairs the summary once the database answers. A waiter whose context
// ends gets the last failure with its context's error. A stored payload the
// store cannot decode counts as missing and is replaced.
//
// # Goroutines
//
//   - The writer, started by Start and owned by the Projector. It is the
//     only goroutine that writes summaries and calls the Publisher. Close
//     stops it: it projects what is marked once more (failures are logged,
//     not retried), releases every waiter and ends; Close returns after it
//     has ended.
//
// The package starts no other goroutine.
package projector
