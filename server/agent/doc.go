// Package agent is herd's Agent Client Protocol runtime: the built-in agent
// profiles, the adapter capabilities of each provider, and Execution, one
// running agent process spoken to over ACP v1 on its stdio with
// github.com/coder/acp-go-sdk.
//
// # Executions
//
// Start spawns a profile's command in its own process group, in the
// session's working directory, and runs initialize and opens the ACP
// session under a timeout: Options.ResumeSessionID is continued with
// session/resume or session/load when the agent advertises them (load's
// replayed history is dropped in wire order, up to its answer), else a
// new session opens and Restore says why the context was lost (see
// continuity.go). A refused start says what to do (startup.go): an agent
// that needs authentication lists its own auth methods
// (AuthRequiredError). Prompt runs one turn; Cancel sends session/cancel; Close closes
// stdin, sends SIGTERM to the group, SIGKILL after a grace period, and
// waits. Whatever ends an execution (Close, the agent exiting, a malformed
// frame) ends it alone and is reported by Done and Err; the last 64 KiB of
// the agent's stderr are kept for error messages. Only processes that stay
// in the group are killed: a child that starts its own session escapes,
// and its hold on the output pipe is cut once nothing was read for a grace
// period.
//
// # Events and wire order
//
// Every session/update becomes an Event (events.go says which updates are
// deliberately not events). Permission requests and _herd/clarify requests
// (protocol.go) go to the Handler as blocking calls. The SDK gives two
// orderings that are not enough on their own: notifications are handled
// one at a time in wire order, but each request runs on a goroutine of its
// own as soon as it is read, so a permission request can reach the client
// before the tool_call the agent sent just ahead of it; and the SDK queues
// at most 1024 notifications, closing the connection (every pending call
// fails with "peer disconnected") when a slow handler lets the queue fill.
//
// herd therefore reads the agent's stdout itself (wireReader) and hands the
// SDK the same frames with marks in between: a private notification that
// passes through the SDK's ordered queue like any update. Updates and marks
// land in one bounded queue in wire order, drained by one dispatcher
// goroutine that calls Handler.OnEvent. A request or response from the
// agent is held back until the mark placed before it has been passed, so
// the Handler has seen every earlier update, and a prompt's result means
// its updates were delivered. A mark after every 64 notifications, with at
// most 4 outstanding, bounds how far reading runs ahead of delivery: when
// the Handler falls that far behind, herd stops reading the pipe and the
// agent blocks on its writes. The overflow policy is backpressure to the
// agent, never a drop and never the SDK's connection-closing overflow;
// Stats counts the stalls. The same reader parses each frame's envelope,
// which catches malformed frames the SDK would log and skip.
//
// # Provenance
//
// Tool calls keep `_meta.claudeCode` as a typed Provenance. It drives
// background-work accounting only when Provenance.Attested is set, which the
// runtime does from the provider's Capabilities, never from the frame: an
// agent cannot attest its own background work (spec 000). Claude's
// adapter attests background subagents, read from the frames it really
// sends (claude.go: launch from its tool result, end at the result of the
// prompt that launched them, reported as EventBackgroundEnded); the mock
// also speaks herd's explicit lifecycle fields and replays Claude's
// recorded frames (package claudeframes).
//
// # Goroutines
//
// Per execution, each ending before Done is closed:
//
//   - supervise owns teardown: it waits for a stop request, the process's
//     exit or the end of its output, then kills the group, waits for the
//     output to drain and for Handler requests to return, records Err and
//     closes Done.
//   - wait reaps the process (os/exec adds a goroutine copying stderr into
//     the ring, bounded by WaitDelay).
//   - the dispatcher (sequencer.run) calls Handler.OnEvent in wire order
//     until it passes the mark the reader issues when the output ends.
//   - the SDK's connection goroutines: its receive loop (the only caller of
//     wireReader.Read), its notification loop (SessionUpdate and marks),
//     and one goroutine per request from the agent, which calls the
//     Handler's RequestPermission or Clarify under a context that Cancel
//     and teardown end.
package agent
