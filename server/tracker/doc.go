// Package tracker keeps, in memory, what each session's agent is doing
// right now: whether its foreground owns the conversation (a claimed prompt
// or top-level output) and which background workloads it left running
// (subagents, background shells, Monitor watches). Sessions feed it agent
// frames and prompt admission; it answers whether a prompt may be
// dispatched and what activity a session shows, and it reports every
// change through one publication queue per task.
//
// # Records and identity
//
// A session's activity lives in a record, created by the first execution
// that attaches to it and retired when the last execution detaches with no
// prompt claim in flight, or at once when the session is removed. Each
// record has a unique identity number.
//
// Records are lock-coupled to the tracker's map: a lookup takes the
// record's mutex before it releases the map's, and retirement takes the
// map's mutex, then the record's, marks the record dead and deletes it.
// So a caller either holds the live record or, after retirement, gets a
// fresh one: it can never change a detached predecessor. Claims carry the
// identity of the record that issued them, and executions the identity of
// the record they attached to, so a claim or an execution that outlived its
// record is stale: whatever it reports later changes nothing.
//
// We chose a mutex per record over a goroutine per session (an actor). The
// guarantees are the same — every change of one session's state happens
// under one owner, in one order — but admission must answer synchronously,
// which an actor turns into a request and reply round trip, and a frame
// here costs a map lookup and a few field writes, well under a channel
// hand-off. Publication is where ordering across goroutines matters, and
// it has its own queue (below).
//
// # Foreground and background
//
// Foreground ownership and background registrations are tracked
// independently. Claim is check-and-claim: under the record's mutex it
// refuses (prompt_in_progress) while a claim is held or the foreground is
// producing output, and otherwise takes the next admission generation and
// marks the foreground generating. Dispatched, Complete and Release name
// the claim they act on; one whose generation or record is not current is
// stale and ignored, so a delayed completion can never release a newer
// claim. Release (the prompt never reached the agent) clears the foreground
// only if no foreground output arrived after the claim was taken.
//
// Background work is recognised only from adapter-attested provenance: a
// frame's typed lifecycle counts only when the execution's adapter attests
// background work (Capabilities.AttestsBackground) and the frame's
// provenance is marked attested by the agent runtime. A tool card's shape
// never counts. Registrations are keyed by workload kind and the
// provider's child id, owned by the execution that launched them, and
// retired by their accountable terminal frame or by that execution's
// teardown. Duplicate terminal frames are no-ops; a terminal frame that
// arrives before its launch leaves a tombstone so the late launch does not
// register a dead workload. The number of live subagents is counted from
// the registrations, never kept as a separate counter, and shells and
// Monitor watches never count.
//
// Tool ownership comes only from positive evidence. A tool call's first
// frame records whether it is foreground (top level, no lineage),
// background (an attested launch) or a child of background work (its
// attested parent is background or a child); later frames of that call
// inherit the ownership only within the execution that recorded it, since
// providers reuse tool call ids after an execution is replaced. Frames
// with unknown lineage or for unknown calls keep the current activity.
// Output and tool frames outside a claim count as foreground only for
// attesting executions, whose model cycles end with a usage frame naming
// their origin; other providers have no accountable end to such output.
//
// # Policy
//
// What a person sees follows spec 001. By default (coarse) a RUNNING
// session is generating and every other state shows no activity; the
// tracker's foreground and background distinction is accounting only. With
// the Claude background prompt handoff experiment on (Config.Handoff, read
// at start), a RUNNING session whose executions attest background work
// (Claude's adapter, and the mock agent replaying its frames) shows
// background while its foreground has yielded and background work is live;
// and, where the adapter also attests the handoff (Capabilities.Handoff),
// Handoff passes the held claim to one new human prompt. The foreground
// must have yielded at the end of the human-origin model cycle of exactly
// the claim's generation, so one yield admits one successor, and the
// earlier turn's late completion is stale. Every other provider stays
// coarse even with the experiment on.
//
// # Publication
//
// A change to a record is captured (foreground and subagent count
// together, under the record's mutex) and appended to its task's FIFO
// before the mutex is released. One goroutine per task with pending
// changes delivers them in order through Config.Publish, with its own
// bounded context; tasks publish concurrently. A publication that changes
// nothing since the last delivered one is skipped, and that baseline
// advances only when Publish succeeds. Publish may call back into the
// tracker: a change it causes is queued behind, never delivered
// re-entrantly. Removing a session drops its queued changes and baseline.
//
// # Goroutines
//
// One per task with queued changes (drain), started on demand and ended
// when the queue is empty; Close waits for them.
package tracker
