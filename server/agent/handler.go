package agent

import (
	"context"
	"encoding/json"
	"errors"

	acp "github.com/coder/acp-go-sdk"
)

// Handler receives what an execution's agent sends. Calls follow wire
// order: a request method is called only after OnEvent has returned for
// every update the agent sent before the request. Updates sent after it
// keep flowing while the request waits for a person.
type Handler interface {
	// OnEvent receives one update. It is called from a single goroutine,
	// in wire order, and must return quickly and never wait for the
	// execution (a Prompt's result waits for OnEvent): while it lags a
	// window behind, herd stops reading the agent's output and the agent
	// blocks.
	OnEvent(Event)
	// RequestPermission asks the person to choose one of req.Options and
	// returns the chosen option's ID. It blocks until then or until ctx
	// ends (Cancel, teardown, the agent withdrawing the request), and must
	// return when it does: Done waits for it. An error, an ID that is not
	// among the options, or any answer once ctx has ended answers the
	// agent with a cancelled outcome.
	RequestPermission(ctx context.Context, req PermissionRequest) (optionID string, err error)
	// Clarify asks the person req.Question and returns the answer, blocking
	// like RequestPermission. An error answers the agent with a cancelled
	// outcome (see ClarifyMethod).
	Clarify(ctx context.Context, req ClarificationRequest) (answer string, err error)
}

// PermissionRequest is an agent asking to run a tool call.
type PermissionRequest struct {
	// ToolCall is the call in question, as the request describes it; the
	// agent usually announced it earlier with a tool_call event.
	ToolCall ToolCall
	// Options are the choices, in the agent's order.
	Options []PermissionOption
}

// PermissionOption is one answer to a permission request.
type PermissionOption struct {
	// ID is what RequestPermission returns to choose this option.
	ID string
	// Name is the option's label.
	Name string
	// Kind is allow_once, allow_always, reject_once or reject_always.
	Kind string
}

// ClarificationRequest is an agent asking the person a question.
type ClarificationRequest struct {
	// Question is the text to show.
	Question string
	// PendingID is the agent's id for the question; empty when absent.
	PendingID string
}

// client is the execution's side of the ACP connection. The SDK calls
// SessionUpdate and the mark notifications from its single notification
// goroutine and every request on a goroutine of its own.
type client struct{ e *Execution }

// SessionUpdate normalises the update and queues it without blocking. The
// updates a session/load replays are dropped (see continueSession).
func (c client) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	if c.e.reader.replay.Load() {
		c.e.replayed.Add(1)
		return nil
	}
	ev, ok := normalize(n.Update, c.e.caps)
	if !ok {
		c.e.ignored.Add(1)
		return nil
	}
	if ev.Kind == EventConfig || ev.Kind == EventMode {
		c.e.applyConfigUpdate(ev)
		return nil
	}
	c.e.attribute(&ev)
	if !c.e.seq.push(ev) {
		c.e.fail(errors.New("agent event queue overflow"))
	}
	return nil
}

// RequestPermission asks the Handler and translates its answer.
func (c client) RequestPermission(ctx context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	cancelled := acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeCancelled()}
	ctx, release, ok := c.e.track(ctx)
	defer release()
	if !ok {
		return cancelled, nil
	}
	req := PermissionRequest{ToolCall: toolOfRequest(p.ToolCall, c.e.caps)}
	for _, o := range p.Options {
		req.Options = append(req.Options, PermissionOption{ID: string(o.OptionId), Name: o.Name, Kind: string(o.Kind)})
	}
	id, err := c.e.opts.Handler.RequestPermission(ctx, req)
	if err != nil || ctx.Err() != nil {
		// A request withdrawn meanwhile (Cancel, teardown, the agent's own
		// cancellation) is answered cancelled, whatever the Handler said:
		// ACP has every request open at session/cancel answered so, and
		// an answer that raced the withdrawal must not allow anything.
		return cancelled, nil
	}
	for _, o := range req.Options {
		if o.ID == id {
			return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeSelected(acp.PermissionOptionId(id))}, nil
		}
	}
	return cancelled, nil
}

// HandleExtensionMethod serves ClarifyMethod and the reader's marks.
func (c client) HandleExtensionMethod(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case markMethod:
		var m struct{ Mark uint64 }
		if json.Unmarshal(params, &m) == nil && !c.e.seq.pushMark(m.Mark) {
			c.e.fail(errors.New("agent event queue overflow"))
		}
		return nil, nil
	case ClarifyMethod:
		var p ClarifyParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, acp.NewInvalidParams(map[string]any{"error": err.Error()})
		}
		if p.SessionID == "" || p.Question == "" {
			return nil, acp.NewInvalidParams(map[string]any{"error": "sessionId and question are required"})
		}
		ctx, release, ok := c.e.track(ctx)
		defer release()
		if !ok {
			return ClarifyResult{Cancelled: true}, nil
		}
		answer, err := c.e.opts.Handler.Clarify(ctx, ClarificationRequest{Question: p.Question, PendingID: p.PendingID})
		if err != nil || ctx.Err() != nil {
			return ClarifyResult{Cancelled: true}, nil // withdrawn meanwhile, like a permission
		}
		return ClarifyResult{Answer: answer}, nil
	}
	return nil, acp.NewMethodNotFound(method)
}

// toolOfRequest describes the tool call a permission request is about.
func toolOfRequest(t acp.ToolCallUpdate, caps Capabilities) ToolCall {
	ev, _ := normalize(acp.SessionUpdate{ToolCallUpdate: &acp.SessionToolCallUpdate{
		SessionUpdate: "tool_call_update", ToolCallId: t.ToolCallId, Title: t.Title, Kind: t.Kind,
		Status: t.Status, RawInput: t.RawInput, RawOutput: t.RawOutput, Content: t.Content,
		Locations: t.Locations, Meta: t.Meta,
	}}, caps)
	return *ev.Tool
}

// The file system and terminal methods are not offered (their capabilities
// are off in initialize), so an agent calling them gets method-not-found.

// ReadTextFile is not offered.
func (client) ReadTextFile(context.Context, acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	return acp.ReadTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsReadTextFile)
}

// WriteTextFile is not offered.
func (client) WriteTextFile(context.Context, acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	return acp.WriteTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsWriteTextFile)
}

// CreateTerminal is not offered.
func (client) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalCreate)
}

// KillTerminal is not offered.
func (client) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalKill)
}

// TerminalOutput is not offered.
func (client) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalOutput)
}

// ReleaseTerminal is not offered.
func (client) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalRelease)
}

// WaitForTerminalExit is not offered.
func (client) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalWaitForExit)
}
