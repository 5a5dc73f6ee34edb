// Package state is the browser's client store: every task of the selected
// workspace with its status summary, plus the workspaces, the agent profiles
// and the connection status the UI renders.
//
// It is plain Go with no browser or UI imports, so its rules are unit tested
// on the host. A Store is not safe for concurrent use: the UI owns it and
// reads and writes it only on its UI goroutine (in go-app, inside
// ctx.Dispatch), which also orders writes exactly as they were dispatched.
//
// # One write path
//
// Every change to a task or to a summary is a Write applied by Store.Apply;
// nothing else mutates tasks. The rules Apply enforces:
//
//   - Newest wins: a task write is ignored when the stored copy has a newer
//     UpdatedAt; an equal UpdatedAt is accepted (a repeat is harmless).
//   - A response does not undo a live event: a ResponseWrite (boot,
//     task.list, task.create) carries the Mark taken when its request was
//     sent. When a live TaskWrite has written the task since that Mark, the
//     response's task fields are applied only if its UpdatedAt is strictly
//     newer, since coarse fields such as ForegroundActivity change without
//     a new UpdatedAt. Its summary passes the revision gate regardless.
//   - Revision gate: a summary is ignored unless its Revision is greater than
//     the stored one. A task write that carries a StatusSummary passes its
//     summary through the same gate, independently of the task's own fields.
//     A task write without a summary (workspace feed events omit it) keeps the
//     stored summary: absent means "not carried", never "cleared".
//   - A summary for a task the store does not hold is dropped; the next
//     listing carries it with its task.
//   - A deletion removes the task and leaves a tombstone at the deletion's
//     UpdatedAt, so a listing that was in flight cannot bring it back; only
//     a write newer than the deletion can.
//   - Archived tasks stay stored (so an older write cannot revive them as
//     unarchived) but leave the visible list.
//
// # Rows
//
// RowOf is the one row model of both task switchers (desktop sidebar and
// phone sheet). Its state icon follows the task-row precedence:
// permission, clarification, foreground activity (generating, background),
// lifecycle state. Without a summary it falls back to the task's coarse
// ForegroundActivity, else to unknown for a task with a session; it never
// subscribes to a session to learn more. The error dot, git totals, pull
// request badge and queued count come only from the summary.
//
// # The view
//
// Rows returns the visible tasks of the selected workspace as row models,
// newest created first with the id (descending) breaking ties. Each task's
// row is derived once per accepted write. The order is re-sorted only when
// membership, visibility or a creation time changed; any other write copies
// the previous slice and patches the changed rows in. A render that follows
// no write gets the cached slice back, so a 1,000-row switcher costs nothing
// to re-render when idle. A returned slice is never mutated afterwards, so
// a UI may keep and compare it.
//
// Triage orders those rows for the switcher in sections: needs you (a
// permission or a question), running, finished since the person last
// looked (Seen, kept in a KV), the rest; it also filters by title.
//
// # The page around it
//
// Route is what the address selects (/tasks/{id}, /tasks/{id}/sessions/{id},
// /tasks/{id}/review with the review's choices in its query).
// Follow decides whether a transcript follows new output; Drafts keeps each
// task's composer text; OpenRequests and Headline say what an open session
// waits on, so its header never says "generating" while the agent waits on
// the person. CurrentPlan is the newest plan message of a transcript and
// PlanFold remembers a folded plan per session; ChosenOption says which of
// the agent's options answered a permission request. Attachments holds
// what the next prompt carries within message.add's bounds, MentionAt and
// Completions drive @file completion (the newest listing wins), and
// PromptFits refuses a prompt that would not fit one frame.
//
// # The inbox
//
// Inbox holds every unanswered permission and clarification request of
// the workspace by pending id, from inbox.list and the workspace feed's
// inbox.request.opened / inbox.request.closed, so the inbox never
// subscribes to a session. A close is final: its id is remembered (a
// bounded FIFO), so an open that arrives after it, or a listing read
// before it, does not bring the request back. A listing is applied with
// the InboxMark taken before it was sent and replaces what the inbox
// holds, except requests a live open wrote after the mark. One answer per
// request is in flight at a time; a refusal keeps the request with the
// answer for a retry, and the server's confirmation closes it.
//
// Attention decides the page's title ("(3) herd"), the count for the app
// icon's badge, and, for a request that opens while the tab is hidden, one
// sound per burst and a title that flashes until the tab is visible (the
// count steadily with reduced motion), with an off switch kept in a KV. It
// takes the time as an argument, so its timing is tested with fixed
// clocks.
//
// # Authoritative listings
//
// A boot or list response is the full set of a workspace's live tasks. A
// Mark taken before the request is sent and Retain called after the last
// page drops the tasks the listing no longer holds (deleted or archived while
// the client was offline), except those a live event wrote after the Mark.
//
// # An opened session
//
// SessionDetail holds the one session the UI shows: the session, its
// messages by id in seq order, its queue, its task's repository git
// observations (replaced whole by each session.git.updated, kept across
// Reset), and the seq of the last semantic notification. The snapshot of
// session.subscribe is applied first (it carries the newest messages;
// Earlier adds older pages, and HasEarlier says whether there are more);
// the notifications that arrived
// before it (seq ≥ 1) are buffered and applied after it. A semantic
// notification whose seq is not last+1 means frames were missed: the
// detail stops applying and reports Resync, and the UI subscribes again. A
// session.message.updated of a still-streaming message may repeat the last
// seq (an intermediate update) or take the next one.
//
// A session's state, foreground activity and subagent count move with its
// StateRevision, newest wins: session.state_changed and
// session.activity_changed apply only with a greater revision, and a
// session record (snapshot, session.list, session.create) replaces them
// when its revision is at least the held one, an omitted activity clearing
// a stale background. Reset keeps the record, because the server's
// revisions persist and keep rising across reconnects; a settled session
// never shows an activity (SessionIndicator).
//
// Per-frame batching: session.message.updated payloads are kept newest per
// message and applied by Flush, which the UI calls once per animation
// frame, so a streaming message costs one transcript write per frame.
// Every other notification (message added or deleted, turn settled, …) is
// an ordered barrier that flushes the batch before it is applied. Messages
// are written by one function under newest-wins: the later updated_at
// wins, and at equal times a terminal status beats streaming, so a late
// intermediate update never overwrites a final state.
//
// # Review
//
// ReviewFiles and ReviewDiff hold what review paged in of a comparison's
// changed files and of one file's diff. Each request has a Ticket and
// only the newest one's answer is taken, so a refresh or another file
// opened meanwhile is never overwritten by an older answer; a later page
// is appended only when it continues the list (the first page's trees,
// the offset where it ends). A diff's hunks flatten into rows numbered on
// each side, a hunk continued on the next page keeping its header.
// LineSelection is the rows chosen to comment on, within one hunk (Click
// with shift, Tap's second tap on a phone); Comment quotes them with their
// marks, on the new side unless every row was removed. ReviewComments
// keeps a task's comments in the KV until the prompt that carries them
// (shared.ReviewPrompt, sent through the session's Outbox) is confirmed.
//
// # Sending prompts
//
// Outbox keeps a session's prompts until the server confirms them, each
// with its own client_message_id, in a KV (localStorage in the browser).
// A lost answer (timeout, dropped connection) leaves a prompt unconfirmed;
// after the reconnect it is sent again with the same id, which message.add
// answers as a duplicate when the first send arrived. Only after
// MaxSendAttempts uncertain sends is its outcome shown as unknown. A
// server error is a definitive refusal and is shown as such.
package state
