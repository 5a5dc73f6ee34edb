// Package sessions runs agent sessions: the lifecycle state machine
// (CREATED → STARTING → WAITING_FOR_INPUT ⇄ RUNNING, FAILED, CANCELLED,
// with COMPLETED and IDLE accepting prompts like WAITING_FOR_INPUT), prompt
// admission and the prompt queue, the agent executions behind the
// sessions, and start-up recovery. Every state change is persisted first
// (a compare-and-set in the store), then published.
//
// # Admission
//
// A prompt is owned by its client_message_id: a retry returns the stored
// message as a duplicate and dispatches nothing new. Each live session has
// a run with an admission gate (busy): a prompt to an idle, promptable
// session starts a turn for the head of the queue; otherwise it waits in
// the queue, which is the session's undispatched user messages in order. A
// turn claims its prompt in the store under a fresh token before handing
// it to the agent, so a prompt is dispatched once per claim; claims that a
// crash left unsent return to the queue at start-up and run then.
//
// # Streams
//
// Agent events reach the run (agent.Handler) in wire order. Text and
// reasoning chunks go through the execution's coalescer; tool calls,
// plans, permission and clarification requests, and the end of a turn are
// coalescer barriers, so the transcript's order is the agent's. The sink,
// on the coalescer's goroutine, persists and publishes: a message's first
// bytes at once (session.message.added), later bytes at most once per
// window (replaceable session.message.updated with the full text so far),
// and its final state as a semantic frame.
//
// # Goroutines
//
// All are started through Manager.goTracked and waited for by Close:
//   - per new session, the start-up of its agent (run.begin);
//   - per turn, run.turn: claim, prompt, settle, then the next queued prompt;
//   - per execution, its coalescer's Run and run.watch, which ends when the
//     agent process ends and fails the session if it died on its own.
package sessions
