package anthropictest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/herd-dev/herd/server/agent/endpointtest"
)

// Request is one Messages API request as the endpoint received it.
type Request struct {
	// N numbers the requests from 0 in arrival order.
	N int
	// Received is when the request arrived.
	Received time.Time
	// Beta is true when the URL asked for the beta API (?beta=true).
	Beta bool
	// Model, Stream and MaxTokens are the request's own fields.
	Model     string
	Stream    bool
	MaxTokens int
	// System is the system prompt's text.
	System string
	// Messages is the conversation, oldest first.
	Messages []Message
	// Tools names the tools the model was offered.
	Tools []string
	// Body is the request body as sent.
	Body []byte

	ctx context.Context
}

// Context ends when the client gives up on the request or the server
// closes; a script that blocks should stop waiting then.
func (r *Request) Context() context.Context { return r.ctx }

// Message is one turn of the conversation.
type Message struct {
	Role    string
	Content []ContentBlock
}

// ContentBlock is one block of a message. Only the fields of its Type are
// set.
type ContentBlock struct {
	Type string `json:"type"`
	// Text is a text block's text; Thinking a thinking block's.
	Text     string `json:"text,omitempty"`
	Thinking string `json:"thinking,omitempty"`
	// ID, Name and Input are a tool_use block's.
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// ToolUseID, Content and IsError are a tool_result block's; Content is
	// a string or a list of blocks.
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

// ResultText returns a tool_result block's text.
func (b ContentBlock) ResultText() string { return joinText(b.Content) }

func parseRequest(body []byte) (*Request, error) {
	var wire struct {
		Model     string          `json:"model"`
		Stream    bool            `json:"stream"`
		MaxTokens int             `json:"max_tokens"`
		System    json.RawMessage `json:"system"`
		Messages  []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &wire); err != nil {
		return nil, fmt.Errorf("decode request: %w", err)
	}
	req := &Request{
		Model: wire.Model, Stream: wire.Stream, MaxTokens: wire.MaxTokens,
		System: joinText(wire.System), Body: body,
	}
	for _, t := range wire.Tools {
		req.Tools = append(req.Tools, t.Name)
	}
	for _, m := range wire.Messages {
		msg := Message{Role: m.Role}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			msg.Content = []ContentBlock{{Type: "text", Text: s}}
		} else if err := json.Unmarshal(m.Content, &msg.Content); err != nil {
			return nil, fmt.Errorf("decode message content: %w", err)
		}
		req.Messages = append(req.Messages, msg)
	}
	return req, nil
}

// HasTool reports whether the model was offered the tool name.
func (r *Request) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t == name {
			return true
		}
	}
	return false
}

// IsMain reports whether the request comes from an agent's own loop (the
// session's or a subagent's), which offers tools, rather than a side query
// such as the session title or a quota probe.
func (r *Request) IsMain() bool { return len(r.Tools) > 0 }

// UserTexts returns the text a person (or a parent agent) wrote in each user
// turn, oldest first, leaving out tool results and the system reminders
// Claude Code adds.
func (r *Request) UserTexts() []string {
	return endpointtest.UserTexts(r.Messages, func(m Message) []string {
		if m.Role != "user" {
			return nil
		}
		var texts []string
		for _, b := range m.Content {
			if b.Type == "text" {
				texts = append(texts, b.Text)
			}
		}
		return texts
	}, func(text string) bool { return !strings.HasPrefix(strings.TrimSpace(text), "<system-reminder>") })
}

// LastUserText returns the newest user text (see UserTexts), or "".
func (r *Request) LastUserText() string { return endpointtest.Last(r.UserTexts()) }

// ToolResults returns every tool_result block of the conversation, oldest
// first.
func (r *Request) ToolResults() []ContentBlock {
	var out []ContentBlock
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if b.Type == "tool_result" {
				out = append(out, b)
			}
		}
	}
	return out
}

// Result returns the tool_result for the tool use id, and false when the
// conversation has none.
func (r *Request) Result(toolUseID string) (ContentBlock, bool) {
	for _, b := range r.ToolResults() {
		if b.ToolUseID == toolUseID {
			return b, true
		}
	}
	return ContentBlock{}, false
}

// Answered reports whether the newest message that is not the assistant's
// carries a tool result, that is, the model is asked to go on after a tool
// call. Claude Code may put system notes after the result; they are
// passed over.
func (r *Request) Answered() bool {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		switch m.Role {
		case "assistant":
			return false
		case "user":
			for _, b := range m.Content {
				if b.Type == "tool_result" {
					return true
				}
			}
			return false
		}
	}
	return false
}

// Notified reports whether the newest message is a notice that a background
// task changed (Claude Code's "[SYSTEM NOTIFICATION" messages), which starts
// a model cycle of task-notification origin.
func (r *Request) Notified() bool {
	if len(r.Messages) == 0 {
		return false
	}
	last := r.Messages[len(r.Messages)-1]
	for _, b := range last.Content {
		if b.Type == "text" && strings.Contains(b.Text, "[SYSTEM NOTIFICATION") {
			return true
		}
	}
	return false
}

// Contains reports whether any message or the system prompt contains s.
func (r *Request) Contains(s string) bool { return strings.Contains(string(r.Body), s) }
