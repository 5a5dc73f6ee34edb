package shared

import "encoding/json"

// MessageMetadata holds a message's type-specific fields. Each message type
// uses the fields its comment names; the others are absent. A message
// without any has no metadata at all.
type MessageMetadata struct {
	// ToolCallID is the agent's id of the tool call (tool_call,
	// permission_request).
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Kind is the ACP tool kind (tool_call, permission_request): read,
	// edit, delete, move, search, execute, think, fetch, switch_mode or
	// other.
	Kind string `json:"kind,omitempty"`
	// Input summarises the call's raw input as compact JSON, at most 2 KiB
	// (tool_call).
	Input string `json:"input,omitempty"`
	// Output summarises the call's raw output as compact JSON, at most 2
	// KiB (tool_call); what it shows people is Content.
	Output string `json:"output,omitempty"`
	// Content is the call's content, each part bounded (tool_call; see
	// ToolContent).
	Content []ToolContent `json:"content,omitempty"`
	// Locations are the files and lines the call touches (tool_call).
	Locations []ToolLocation `json:"locations,omitempty"`
	// Paths lists the files the call touches (tool_call).
	Paths []string `json:"paths,omitempty"`
	// Provenance is the agent adapter's own account of where the call sits
	// in its background work, as the adapter sent it in the call's _meta
	// (tool_call); herd reads it only from adapters it trusts to attest it.
	Provenance json.RawMessage `json:"provenance,omitempty"`
	// Options are the choices a permission request offers
	// (permission_request).
	Options []PermissionOption `json:"options,omitempty"`
	// SelectedOptionID is the option the person chose (a resolved
	// permission_request).
	SelectedOptionID string `json:"selected_option_id,omitempty"`
	// Answer is the person's answer (a resolved clarification_request).
	Answer string `json:"answer,omitempty"`
	// Entries are the steps of the agent's plan, in order (plan).
	Entries []PlanEntry `json:"entries,omitempty"`
	// Attachments are the images and files sent with a prompt, as herd
	// sent them to the agent (user).
	Attachments []Attachment `json:"attachments,omitempty"`
	// Turn marks a status message as the end of a turn that did not end
	// normally (status); absent on every other message.
	Turn *TurnMark `json:"turn,omitempty"`
}

// TurnMark says that a turn ended other than normally: herd stores it, on
// a status message whose content says what happened in words for people,
// after everything the turn stored, so that a transcript read at any time
// shows the turn as cut short rather than complete. A turn has at most one
// mark. A turn that ended with end_turn has none, nor has a turn whose
// prompt never reached the agent, nor one that handed the session on to
// the next prompt (the background prompt handoff experiment).
type TurnMark struct {
	// Outcome says how the turn ended: TurnCancelled, TurnFailed,
	// TurnInterrupted, TurnMaxTokens, TurnMaxTurnRequests or TurnRefusal.
	Outcome TurnOutcome `json:"outcome"`
	// PromptMessageID is the id of the user message that started the turn
	// (the turn_id of its session.turn.started). Retrying the turn sends
	// that message's content as a new prompt.
	PromptMessageID string `json:"prompt_message_id"`
}

// More turn outcomes, beside those of payloads.go.
const (
	// TurnInterrupted is a turn that herd itself stopped while it ran:
	// herd shut down or crashed. Start-up recovery marks it; no
	// session.turn.settled says it.
	TurnInterrupted TurnOutcome = "interrupted"
	// TurnMaxTurnRequests is a turn the agent ended because it reached its
	// limit of model requests in one turn (ACP's max_turn_requests); both
	// session.turn.settled and a turn mark carry it.
	TurnMaxTurnRequests TurnOutcome = "max_turn_requests"
)

// PermissionOption is one choice of a permission request.
type PermissionOption struct {
	// OptionID is what permission.respond sends back.
	OptionID string `json:"option_id"`
	// Name is the label the agent gave the choice ("Allow once").
	Name string `json:"name"`
	// Kind is the ACP option kind: allow_once, allow_always, reject_once
	// or reject_always.
	Kind string `json:"kind"`
}

// PlanEntry is one step of an agent's plan.
type PlanEntry struct {
	Content string `json:"content"`
	// Priority is high, medium or low.
	Priority string `json:"priority"`
	// Status is pending, in_progress or completed.
	Status string `json:"status"`
}
