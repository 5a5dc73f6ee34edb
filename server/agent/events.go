package agent

import (
	"encoding/json"

	acp "github.com/coder/acp-go-sdk"

	"github.com/herd-dev/herd/shared"
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
	// EventConfig carries the session's whole configuration whenever it
	// changes: when the agent opens the session, and after a
	// config_option_update, a current_mode_update or a SetConfig.
	EventConfig
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
	EventBackgroundEnded: "background_ended", EventConfig: "config",
}

// String returns the kind's short name, e.g. "tool_call".
func (k EventKind) String() string {
	if int(k) < len(eventKindNames) && eventKindNames[k] != "" {
		return eventKindNames[k]
	}
	return "unknown"
}

// Event is one normalised session/update. Only the fields of its Kind are
// set. One update is deliberately not an event: user_message_chunk (herd
// already holds the person's message; agents echo it only when replaying
// history, which herd does not ask for).
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
	// Config is the session's whole configuration for EventConfig.
	Config *ConfigState
	// configUpdate is what a config_option_update reported, before the
	// execution adopts it (applyConfigUpdate).
	configUpdate sessionConfig
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
// means unchanged (for Content and Locations: nil; an empty non-nil list
// clears them, since ACP replaces the collection an update carries).
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
	// Output summarises the raw output as compact JSON, at most
	// summaryLimit bytes; what the call shows people is in Content.
	Output string
	// Content is what the call produced or proposes, whole (see
	// ToolContent); the server bounds what it keeps and sends.
	Content []ToolContent
	// Locations are the files (and lines) the call touches.
	Locations []ToolLocation
	// Paths lists the files the call touches, the paths of Locations.
	Paths []string
	// Provenance is the `_meta.claudeCode` object when the agent sent one.
	Provenance *Provenance
}

// The ToolContent types.
const (
	// ToolText is a content block: its text, or a marker for a block that
	// is not text (see blockText). Agents send command output this way.
	ToolText = "text"
	// ToolDiff is a proposed or made change to a file.
	ToolDiff = "diff"
	// ToolTerminal is a terminal the client made for the agent; herd
	// offers no terminal methods, so it only carries the id.
	ToolTerminal = "terminal"
)

// ToolContent is one part of a tool call's content (ACP ToolCallContent).
type ToolContent struct {
	// Type is ToolText, ToolDiff or ToolTerminal.
	Type string
	// Text is a text part's text.
	Text string
	// Path is a diff's file.
	Path string
	// OldText is a diff's old text; nil for a new file.
	OldText *string
	// NewText is a diff's new text.
	NewText string
	// TerminalID names a terminal part's terminal.
	TerminalID string
}

// ToolLocation is a file a tool call touches.
type ToolLocation struct {
	Path string
	// Line is the 1-based line, 0 when the agent named none.
	Line int
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
			Input: summarize(c.RawInput), Output: summarize(c.RawOutput),
			Content: toolContent(c.Content, true), Locations: locations(c.Locations, true),
			Paths: paths(c.Locations), Provenance: provenanceOf(c.Meta, caps),
		}}, true
	case u.ToolCallUpdate != nil && u.ToolCallUpdate.SessionUpdate == "tool_call_update":
		c := u.ToolCallUpdate
		t := &ToolCall{
			ID: string(c.ToolCallId), Title: deref(c.Title),
			Input: summarize(c.RawInput), Output: summarize(c.RawOutput),
			Content: toolContent(c.Content, c.Content != nil), Locations: locations(c.Locations, c.Locations != nil),
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
	case u.ConfigOptionUpdate != nil && u.ConfigOptionUpdate.SessionUpdate == "config_option_update":
		return Event{Kind: EventConfig, configUpdate: configOf(u.ConfigOptionUpdate.ConfigOptions, nil, nil)}, true
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

// toolContent converts a tool call's content; present says the frame
// carried the field, so an empty list is kept as one (it clears the
// content) rather than read as unchanged.
func toolContent(content []acp.ToolCallContent, present bool) []ToolContent {
	if !present {
		return nil
	}
	out := make([]ToolContent, 0, len(content))
	for _, c := range content {
		switch {
		case c.Content != nil:
			out = append(out, ToolContent{Type: ToolText, Text: blockText(c.Content.Content)})
		case c.Diff != nil:
			out = append(out, ToolContent{Type: ToolDiff, Path: c.Diff.Path, OldText: c.Diff.OldText, NewText: c.Diff.NewText})
		case c.Terminal != nil:
			out = append(out, ToolContent{Type: ToolTerminal, TerminalID: c.Terminal.TerminalId})
		}
	}
	return out
}

// locations converts a tool call's locations; present as for toolContent.
func locations(locs []acp.ToolCallLocation, present bool) []ToolLocation {
	if !present {
		return nil
	}
	out := make([]ToolLocation, len(locs))
	for i, l := range locs {
		out[i] = ToolLocation{Path: l.Path}
		if l.Line != nil {
			out[i].Line = *l.Line
		}
	}
	return out
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
func truncate(s string) string { return shared.Clip(s, summaryLimit) }

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
