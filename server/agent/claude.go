package agent

import (
	"context"
)

// This file reads the background work of Claude's ACP adapter
// (@agentclientprotocol/claude-agent-acp) from the frames it really sends
// to a plain ACP v1 client; package claudeframes holds them, recorded from
// the real adapter against a scripted model endpoint, and
// claude_fixture_test.go replays them. What the adapter sends, by workload:
//
//   - A subagent (the Agent tool, Task in older versions) that runs in the
//     background: a tool_call_update of the launching call whose
//     `_meta.claudeCode.toolResponse` is {"isAsync": true, "status":
//     "async_launched", "agentId": …}. Its own tool calls carry
//     `_meta.claudeCode.parentToolUseId`, the launching call's id. Nothing
//     marks its end on the wire; the adapter instead holds the prompt
//     request that launched it open until the subagent has ended and the
//     model has taken its result (a model cycle of task-notification
//     origin), so the prompt's result is its accountable terminal frame.
//   - A Bash command run with run_in_background: a tool_call_update whose
//     toolResponse carries "backgroundTaskId". The prompt ends at once and
//     nothing on the wire marks the command's end (only a later model cycle
//     of task-notification origin, which names no task), so a shell is
//     presentation data only, never registered as live work.
//   - The foreground yields at the usage_update whose
//     `_meta["_claude/origin"].kind` is "human".
//
// A human prompt sent after the yield is accepted while the earlier prompt
// is still held (promptQueueing): the adapter then answers the earlier
// prompt at once, although its subagents go on with no frame that would
// end them. So the handoff is not attested for Claude (Capabilities).

// claudeLaunch reads a launch of background work from the tool result the
// adapter puts in `_meta.claudeCode.toolResponse`. It returns the kind and
// the provider's id of the workload, and "" when the result launched none.
func claudeLaunch(toolName string, resp map[string]any) (BackgroundKind, string) {
	if resp == nil {
		return "", ""
	}
	str := func(k string) string { s, _ := resp[k].(string); return s }
	switch toolName {
	case "Agent", "Task":
		if async, _ := resp["isAsync"].(bool); async && str("status") == "async_launched" && str("agentId") != "" {
			return BackgroundSubagent, str("agentId")
		}
	case "Bash":
		if id := str("backgroundTaskId"); id != "" {
			return BackgroundShell, id
		}
	}
	return "", ""
}

// turnWork is the background work each open prompt of an execution
// launched whose end is the prompt's result (Provenance.EndsWithTurn).
type turnWork struct {
	// open lists the prompts in flight, oldest first; launched holds each
	// one's launches. Guarded by Execution.mu.
	open     []uint64
	launched map[uint64][]ToolCall
	next     uint64
}

// beginTurn registers a prompt about to be sent and returns its number.
func (e *Execution) beginTurn() uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.work.next++
	e.work.open = append(e.work.open, e.work.next)
	return e.work.next
}

// attribute records a turn-bound launch on the newest open prompt, the one
// the agent is running. A launch while no prompt is open has no frame that
// would end it, so it loses its lifecycle and registers nothing.
func (e *Execution) attribute(ev *Event) {
	if ev.Tool == nil || ev.Tool.Provenance == nil {
		return
	}
	p := ev.Tool.Provenance
	if !p.EndsWithTurn || p.Lifecycle != LifecycleStarted {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.work.open) == 0 {
		p.Lifecycle = ""
		return
	}
	turn := e.work.open[len(e.work.open)-1]
	if e.work.launched == nil {
		e.work.launched = make(map[uint64][]ToolCall)
	}
	e.work.launched[turn] = append(e.work.launched[turn], ToolCall{ID: ev.Tool.ID, Provenance: p})
}

// endTurn closes the bookkeeping of the prompt numbered turn once its
// request returned. When the agent answered it (ended the turn) the prompt
// is no longer open; and when it answered with a result other than
// cancelled, the work the prompt launched has ended too, since the adapter
// held the answer until then: endTurn delivers that end after every event
// of the prompt and waits until the Handler has seen it (or ctx ends), so
// the prompt's caller never sees the turn end before its work does. After
// a cancel the work may go on; the session's cancel owns its cleanup, and
// teardown retires whatever is left. A prompt whose agent died stays open,
// so PromptOpen tells that the agent died mid-turn.
func (e *Execution) endTurn(ctx context.Context, turn uint64, workEnded, answered bool) {
	e.mu.Lock()
	launched := e.work.launched[turn]
	if answered {
		delete(e.work.launched, turn)
		for i, t := range e.work.open {
			if t == turn {
				e.work.open = append(e.work.open[:i], e.work.open[i+1:]...)
				break
			}
		}
	}
	e.mu.Unlock()
	if !answered || !workEnded || len(launched) == 0 {
		return
	}
	evs := make([]Event, len(launched))
	for i, t := range launched {
		p := *t.Provenance
		p.Lifecycle = LifecycleFinished
		evs[i] = Event{Kind: EventBackgroundEnded, Tool: &ToolCall{ID: t.ID, Provenance: &p}}
	}
	e.deliver(ctx, evs...)
}

// PromptOpen reports whether a prompt was in flight: sent, and not
// answered by the agent. Once the execution has ended it says whether the
// agent died in the middle of a turn.
func (e *Execution) PromptOpen() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.work.open) > 0
}
