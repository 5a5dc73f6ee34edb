package agent

// This file defines the parts of the wire that herd adds to ACP v1: the
// clarification extension method and the `_meta` objects herd reads. The
// mock agent builds its frames from these same types, so there is one
// definition of each shape.

// ClarifyMethod is the ACP extension method an agent calls to ask the
// person a free-text question and wait for the answer. It is a JSON-RPC
// request from agent to client over the same newline-delimited stdio
// stream as every ACP message:
//
//	→ {"jsonrpc":"2.0","id":7,"method":"_herd/clarify",
//	   "params":{"sessionId":"mock-1","question":"Which branch?","pendingId":"q-1"}}
//	← {"jsonrpc":"2.0","id":7,"result":{"answer":"main"}}
//
// params.sessionId and params.question are required; params.pendingId is
// an optional agent-chosen id for the question. If the turn is cancelled
// (session/cancel) or the execution ends before the person answers, herd
// replies with a cancelled outcome instead of an answer:
//
//	← {"jsonrpc":"2.0","id":7,"result":{"answer":"","cancelled":true}}
//
// Missing sessionId or question yields JSON-RPC error -32602 (invalid
// params). herd announces the method in its initialize request as
// clientCapabilities._meta.herd.clarify = true; an agent must not call it
// when that flag is absent.
const ClarifyMethod = "_herd/clarify"

// ClarifyParams are the params of a ClarifyMethod request.
type ClarifyParams struct {
	// SessionID is the ACP session the question belongs to.
	SessionID string `json:"sessionId"`
	// Question is the text shown to the person.
	Question string `json:"question"`
	// PendingID is the agent's own id for the question; empty when absent.
	PendingID string `json:"pendingId,omitempty"`
}

// ClarifyResult is the result of a ClarifyMethod request.
type ClarifyResult struct {
	// Answer is the person's answer; empty when Cancelled.
	Answer string `json:"answer"`
	// Cancelled is true when the question was withdrawn unanswered.
	Cancelled bool `json:"cancelled,omitempty"`
}

// clientMeta is the clientCapabilities._meta herd sends in initialize.
var clientMeta = map[string]any{"herd": map[string]any{"clarify": true}}

// BackgroundKind names a kind of background workload.
type BackgroundKind string

// The background workloads spec 000 recognises.
const (
	// BackgroundSubagent is a Task subagent; it counts towards a session's
	// active subagents.
	BackgroundSubagent BackgroundKind = "subagent"
	// BackgroundShell is a Bash command run with run_in_background.
	BackgroundShell BackgroundKind = "shell"
	// BackgroundMonitor is a Monitor watch.
	BackgroundMonitor BackgroundKind = "monitor"
)

// Lifecycle marks a frame that starts or ends a background workload.
type Lifecycle string

// The lifecycle marks.
const (
	// LifecycleStarted is on the launch frame: the workload is live. The
	// launch tool call itself may complete at once (an asynchronous launch
	// is terminal for the card, not for the workload).
	LifecycleStarted Lifecycle = "started"
	// LifecycleFinished is the workload's accountable terminal frame.
	LifecycleFinished Lifecycle = "finished"
)

// Provenance is the `_meta.claudeCode` object of a tool call or tool call
// update: which Claude tool made it and how it relates to background work.
// On the wire:
//
//	"_meta": {"claudeCode": {
//	  "toolName": "Task",              // Claude's tool name (Task, Bash, Monitor, Read, …)
//	  "parentToolUseId": "toolu_…",    // set on frames of a child of another tool call
//	  "backgroundTaskId": "agent_1",   // the workload's provider-owned id
//	  "backgroundKind": "subagent",    // subagent | shell | monitor
//	  "lifecycle": "started"           // started | finished; absent on progress frames
//	}}
//
// toolName and parentToolUseId are what Claude's ACP adapter sends; the
// three background fields are herd's own explicit lifecycle, which only
// the mock speaks (Capabilities.ExplicitLifecycle). For Claude the runtime
// fills them from the tool result the adapter sends in
// `_meta.claudeCode.toolResponse` (see claude.go). Every field is
// optional. Attested and EndsWithTurn never come from the wire.
type Provenance struct {
	ToolName         string         `json:"toolName,omitempty"`
	ParentToolUseID  string         `json:"parentToolUseId,omitempty"`
	BackgroundTaskID string         `json:"backgroundTaskId,omitempty"`
	BackgroundKind   BackgroundKind `json:"backgroundKind,omitempty"`
	Lifecycle        Lifecycle      `json:"lifecycle,omitempty"`
	// EndsWithTurn is set by the runtime for a launch read from Claude's
	// own tool result (see claude.go): the work ends when the prompt that
	// launched it returns, reported as EventBackgroundEnded.
	EndsWithTurn bool `json:"-"`
	// Attested is set by the runtime, never by the agent: true when the
	// execution's adapter has Capabilities.AttestsBackground, so the
	// background fields above may drive activity tracking. When false they
	// are presentation data only.
	Attested bool `json:"-"`
}

// Meta returns p as a tool call's `_meta` value.
func (p Provenance) Meta() map[string]any {
	return map[string]any{"claudeCode": p}
}

// The origins of a Claude model cycle, as sent in a usage_update's
// `_meta["_claude/origin"].kind`.
const (
	// OriginHuman closes the cycle that answered the person's prompt: the
	// foreground has yielded even if the prompt request is still open.
	OriginHuman = "human"
	// OriginTaskNotification closes a cycle started by a background
	// workload's completion notice.
	OriginTaskNotification = "task-notification"
)

// OriginMeta returns a usage_update's `_meta` naming the cycle's origin.
func OriginMeta(origin string) map[string]any {
	return map[string]any{"_claude/origin": map[string]any{"kind": origin}}
}

// provenanceOf reads `_meta.claudeCode`, or returns nil when it is absent
// or not an object. Fields of the wrong type are left empty.
func provenanceOf(meta map[string]any, caps Capabilities) *Provenance {
	cc, ok := meta["claudeCode"].(map[string]any)
	if !ok {
		return nil
	}
	str := func(k string) string { s, _ := cc[k].(string); return s }
	p := &Provenance{
		ToolName:         str("toolName"),
		ParentToolUseID:  str("parentToolUseId"),
		BackgroundTaskID: str("backgroundTaskId"),
		BackgroundKind:   BackgroundKind(str("backgroundKind")),
		Lifecycle:        Lifecycle(str("lifecycle")),
		Attested:         caps.AttestsBackground,
	}
	if !caps.ExplicitLifecycle {
		p.BackgroundTaskID, p.BackgroundKind, p.Lifecycle = "", "", ""
	}
	if p.BackgroundKind == "" {
		resp, _ := cc["toolResponse"].(map[string]any)
		if kind, id := claudeLaunch(p.ToolName, resp); kind != "" {
			p.BackgroundKind, p.BackgroundTaskID = kind, id
			// Only a subagent's end is accountable (its prompt's result).
			if kind == BackgroundSubagent {
				p.Lifecycle, p.EndsWithTurn = LifecycleStarted, true
			}
		}
	}
	return p
}

// originOf reads `_meta["_claude/origin"].kind`.
func originOf(meta map[string]any) string {
	o, _ := meta["_claude/origin"].(map[string]any)
	kind, _ := o["kind"].(string)
	return kind
}
