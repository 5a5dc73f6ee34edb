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
// message as a duplicate and dispatches nothing new. A prompt to a
// promptable session (WAITING_FOR_INPUT, COMPLETED, IDLE) whose queue was
// empty starts a turn at once; otherwise it waits in the queue, the
// session's undispatched user messages in order. A RUNNING session always
// queues (the coarse policy of spec 001). The gate is the activity
// tracker's prompt claim (package tracker): exactly one turn holds it, and
// the turn gives it back when it settles, or releases it when its prompt
// never reached the agent. A turn also claims its prompt in the store under
// a fresh token before handing it to the agent, so a prompt is dispatched
// once per claim; claims that a crash left unsent return to the queue at
// start-up and run then. Once the prompt is stored as sent, and before the
// agent is handed it, the turn tells Config.Turns of its start and waits
// for it (review records the worktree the turn starts from there).
//
// # Activity
//
// Every agent frame also goes to the tracker, which keeps the execution's
// foreground and background work; each execution attaches when its agent
// starts and detaches when the agent ends. A session's activity
// (foreground_activity, active_subagent_count) is stored with its state and
// its state_revision: transitions store the activity the tracker's policy
// gives for the new state, and the tracker's own changes arrive through its
// per-task publication queue (publishActivity), stored by a compare-and-set
// on the state, then published as session.activity_changed. Start-up
// recovery clears every stored activity, since no execution survived to
// vouch for it. Every change a task's status summary derives from marks the
// task in the projector.
//
// # Continuity
//
// A session keeps its agent's own ACP session id. Every execution after
// the first (herd restarted, so the next prompt starts the agent again)
// asks the agent to continue that session; when it cannot, the session's
// ContextLost and a status message in the transcript say so
// (continuity.go).
//
// # Turn marks
//
// A turn that ends other than normally leaves a mark in its transcript
// (turnmark.go): one status message carrying shared.TurnMark, the
// outcome and the prompt that started the turn, stored after everything
// the turn stored. The turn writes it when the agent ended the turn
// itself (cancelled, an error, max_tokens, max_turn_requests, refusal) or
// herd stopped the agent for an archived task; the watch of an agent that
// died under a turn writes it before the session fails; start-up
// recovery writes it, as interrupted, for the turn of a session it finds
// RUNNING whose prompt was sent. Every writer names the mark after the
// prompt, so a turn has one mark whoever writes it and however often a
// crash makes recovery repeat. A turn that ended with end_turn, one that
// never sent its prompt and one that handed the foreground on get none.
// When the turn's end settles or fails the session, the mark is stored
// first, so a crash in between leaves the session RUNNING with the mark
// stored, which recovery keeps; a mark that cannot be stored is logged
// and the turn settles without it.
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
// A task row's preview (shared.TaskStatusSummary.Preview) derives from
// the session's latest complete agent message and sent prompt, which the
// store records when a message finishes and a prompt is sent. Streamed
// chunks mark nothing: the task is marked when a prompt has been sent,
// when a barrier finished an agent message complete, and once more when
// a turn has settled (which covers the answer its end finished), so a
// stream of any length costs the summary no projection, and a turn's
// answer and its settled state reach the row as one summary.
//
// # Goroutines
//
// All are started through Manager.goTracked and waited for by Close:
//   - per new session, the start-up of its agent (run.begin);
//   - per turn, run.turn: claim, prompt, settle, then the next queued prompt;
//   - per execution, its coalescer's Run and run.watch, which ends when the
//     agent process ends and fails the session if it died on its own.
package sessions
