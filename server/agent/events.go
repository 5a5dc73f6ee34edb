package agent

import (
	"encoding/json"
	"unicode/utf8"

	acp "github.com/coder/acp-go-sdk"
)

// EventKind says which session/update an Event normalises.
type EventKind uint8

// The event kinds. Each names the ACP session/update it comes from.
const (
	// EventText is an assistant text chunk (agent_message_chunk).
	EventText EventKind = iota + 1
	// EventThought is a reasoning chunk (agent_thought_chunk).
	EventThought
	// EventToolCall starts a tool call (tool_call).
	EventToolCall
	// EventToolCallUpdate changes a tool call (tool_call_update).
	EventToolCallUpdate
	// EventPlan replaces the agent's plan (plan).
	EventPlan
	// EventUsage reports context usage and, for Claude, which model cycle
	// it closes (usage_update).
	EventUsage
	// EventMode says the session's mode changed (current_mode_update).
	EventMode
	// EventCommands lists the slash commands the agent offers
	// (available_commands_update).
	EventCommands
	// EventSessionInfo carries the session title the agent chose
	// (session_info_update).
	EventSessionInfo
	// EventBackgroundEnded ends background work whose end the wire does
	// not mark: the runtime sends it when the prompt that launched the
	// work returns (Provenance.EndsWithTurn; see claude.go). Tool holds the
	// launching call's id and its provenance, Lifecycle finished.
	EventBackgroundEnded
)

var eventKindNames = [...]string{
	EventText: "text", EventThought: "thought", EventToolCall: "tool_call",
	EventToolCallUpdate: "tool_call_update", EventPlan: "plan", EventUsage: "usage",
	EventMode: "mode", EventCommands: "commands", EventSessionInfo: "session_info",
	EventBackgroundEnded: "background_ended",
}

// String returns the kind's short name, e.g. "tool_call".
func (k EventKind) String() string {
	if int(k) < len(eventKindNames) && eventKindNames[k] != "" {
		return eventKindNames[k]
	}
	return "unknown"
}

// Event is one normalised session/update. Only the fields of its Kind are
// set. Two updates are deliberately not events: user_message_chunk (herd
// already holds the person's message; agents echo it only when replaying
// history, which herd does not ask for) and config_option_update (herd
// offers no session config options, so there is nothing to show).
type Event struct {
	Kind EventKind
	// MessageID is the ACP messageId of a text or thought chunk: chunks with
	// the same id belong to one message. Empty when the agent sends none.
	MessageID string
	// Text is the chunk's text for EventText and EventThought. A non-text
	// content block becomes a short marker ("[image]", "[audio]", a
	// resource's URI in brackets).
	Text string
	// Tool is the call for EventToolCall and the change for
	// EventToolCallUpdate.
	Tool *ToolCall
	// Plan is the complete plan for EventPlan; an empty plan clears it.
	Plan []PlanEntry
	// Usage is set for EventUsage.
	Usage *Usage
	// Mode is the new mode id for EventMode.
	Mode string
	// Commands is the complete command list for EventCommands.
	Commands []Command
	// Title is the session title for EventSessionInfo; empty means unchanged.
	Title string
}

// ToolStatus is a tool call's ACP status.
type ToolStatus string

// The tool call statuses of ACP v1.
const (
	ToolPending    ToolStatus = "pending"
	ToolInProgress ToolStatus = "in_progress"
	ToolCompleted  ToolStatus = "completed"
	ToolFailed     ToolStatus = "failed"
)

// ToolCall is a tool call or a change to one. In an update, an empty field
// means unchanged.
type ToolCall struct {
	// ID identifies the call within the session.
	ID string
	// Title describes the call for people ("Read README.md").
	Title string
	// Kind is the ACP tool kind: read, edit, delete, move, search, execute,
	// think, fetch, switch_mode or other.
	Kind string
	// Status is the call's status.
	Status ToolStatus
	// Input summarises the raw input as compact JSON, at most
	// summaryLimit bytes (longer input is cut and ends in "…").
	Input string
	// Output joins the text of the call's content (diffs appear as
	// "diff PATH") and summarises its raw output, at most summaryLimit
	// bytes.
	Output string
	// Paths lists the files the call touches.
	Paths []string
	// Provenance is the `_meta.claudeCode` object when the agent sent one.
	Provenance *Provenance
}

// PlanEntry is one step of an agent's plan.
type PlanEntry struct {
	// Content describes the step.
	Content string
	// Priority is high, medium or low.
	Priority string
	// Status is pending, in_progress or completed.
	Status string
}

// Usage is an agent's context usage.
type Usage struct {
	// Used and Size are tokens in context and the context window.
	Used, Size int
	// Cost is the session's cumulative cost when the update carries one
	// (Claude's does at the end of each model cycle); nil otherwise.
	Cost *Cost
	// Origin is the `_meta["_claude/origin"].kind` of the model cycle the
	// update closes ("human", "task-notification"); empty when absent. The
	// end of the human-origin cycle is Claude's foreground-yield boundary.
	Origin string
}

// Cost is an agent's cumulative session cost.
type Cost struct {
	// Amount is in Currency, an ISO 4217 code as the agent sent it.
	Amount   float64
	Currency string
}

// Command is a slash command an agent offers.
type Command struct {
	Name, Description string
	// Hint describes the command's unstructured input; empty when it
	// takes none.
	Hint string
}

// summaryLimit bounds ToolCall.Input and ToolCall.Output.
const summaryLimit = 2048

// normalize turns a session/update into an Event. It reports false for
// updates that are not events (see Event) and for kinds this SDK does not
// know: the SDK decodes an unknown kind into whichever variant's fields fit,
// so each variant's own discriminator is checked.
func normalize(u acp.SessionUpdate, caps Capabilities) (Event, bool) {
	switch {
	case u.AgentMessageChunk != nil && u.AgentMessageChunk.SessionUpdate == "agent_message_chunk":
		c := u.AgentMessageChunk
		return Event{Kind: EventText, MessageID: deref(c.MessageId), Text: blockText(c.Content)}, true
	case u.AgentThoughtChunk != nil && u.AgentThoughtChunk.SessionUpdate == "agent_thought_chunk":
		c := u.AgentThoughtChunk
		return Event{Kind: EventThought, MessageID: deref(c.MessageId), Text: blockText(c.Content)}, true
	case u.ToolCall != nil && u.ToolCall.SessionUpdate == "tool_call":
		c := u.ToolCall
		return Event{Kind: EventToolCall, Tool: &ToolCall{
			ID: string(c.ToolCallId), Title: c.Title, Kind: string(c.Kind), Status: ToolStatus(c.Status),
			Input: summarize(c.RawInput), Output: toolOutput(c.Content, c.RawOutput),
			Paths: paths(c.Locations), Provenance: provenanceOf(c.Meta, caps),
		}}, true
	case u.ToolCallUpdate != nil && u.ToolCallUpdate.SessionUpdate == "tool_call_update":
		c := u.ToolCallUpdate
		t := &ToolCall{
			ID: string(c.ToolCallId), Title: deref(c.Title),
			Input: summarize(c.RawInput), Output: toolOutput(c.Content, c.RawOutput),
			Paths: paths(c.Locations), Provenance: provenanceOf(c.Meta, caps),
		}
		if c.Kind != nil {
			t.Kind = string(*c.Kind)
		}
		if c.Status != nil {
			t.Status = ToolStatus(*c.Status)
		}
		return Event{Kind: EventToolCallUpdate, Tool: t}, true
	case u.Plan != nil && u.Plan.SessionUpdate == "plan":
		plan := make([]PlanEntry, len(u.Plan.Entries))
		for i, p := range u.Plan.Entries {
			plan[i] = PlanEntry{Content: p.Content, Priority: string(p.Priority), Status: string(p.Status)}
		}
		return Event{Kind: EventPlan, Plan: plan}, true
	case u.UsageUpdate != nil && u.UsageUpdate.SessionUpdate == "usage_update":
		c := u.UsageUpdate
		usage := &Usage{Used: c.Used, Size: c.Size, Origin: originOf(c.Meta)}
		if c.Cost != nil {
			usage.Cost = &Cost{Amount: c.Cost.Amount, Currency: c.Cost.Currency}
		}
		return Event{Kind: EventUsage, Usage: usage}, true
	case u.CurrentModeUpdate != nil && u.CurrentModeUpdate.SessionUpdate == "current_mode_update":
		return Event{Kind: EventMode, Mode: string(u.CurrentModeUpdate.CurrentModeId)}, true
	case u.AvailableCommandsUpdate != nil && u.AvailableCommandsUpdate.SessionUpdate == "available_commands_update":
		cmds := make([]Command, len(u.AvailableCommandsUpdate.AvailableCommands))
		for i, c := range u.AvailableCommandsUpdate.AvailableCommands {
			cmds[i] = Command{Name: c.Name, Description: c.Description}
			if c.Input != nil && c.Input.Unstructured != nil {
				cmds[i].Hint = c.Input.Unstructured.Hint
			}
		}
		return Event{Kind: EventCommands, Commands: cmds}, true
	case u.SessionInfoUpdate != nil && u.SessionInfoUpdate.SessionUpdate == "session_info_update":
		return Event{Kind: EventSessionInfo, Title: deref(u.SessionInfoUpdate.Title)}, true
	}
	return Event{}, false
}

// blockText returns a content block's text, or a marker for other blocks.
func blockText(b acp.ContentBlock) string {
	switch {
	case b.Text != nil:
		return b.Text.Text
	case b.Image != nil:
		return "[image]"
	case b.Audio != nil:
		return "[audio]"
	case b.ResourceLink != nil:
		return "[" + b.ResourceLink.Uri + "]"
	case b.Resource != nil:
		return "[resource]"
	}
	return ""
}

// toolOutput summarises a tool call's content and raw output.
func toolOutput(content []acp.ToolCallContent, raw any) string {
	var out []byte
	for _, c := range content {
		switch {
		case c.Content != nil:
			out = append(out, blockText(c.Content.Content)...)
		case c.Diff != nil:
			out = append(out, "diff "+c.Diff.Path...)
		case c.Terminal != nil:
			out = append(out, "terminal "+c.Terminal.TerminalId...)
		default:
			continue
		}
		out = append(out, '\n')
	}
	if s := summarize(raw); s != "" {
		out = append(out, s...)
	}
	return truncate(string(out))
}

// summarize renders a raw JSON value compactly within summaryLimit.
func summarize(v any) string {
	if v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return truncate(string(b))
}

// truncate cuts s to summaryLimit bytes on a rune boundary, marking the cut.
func truncate(s string) string {
	if len(s) <= summaryLimit {
		return s
	}
	cut := summaryLimit - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func paths(locs []acp.ToolCallLocation) []string {
	if len(locs) == 0 {
		return nil
	}
	out := make([]string, len(locs))
	for i, l := range locs {
		out[i] = l.Path
	}
	return out
}

func deref[T ~string](p *T) string {
	if p == nil {
		return ""
	}
	return string(*p)
}
