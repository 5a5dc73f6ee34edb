package sessions

import (
	"context"
	"encoding/json"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/server/toolcontent"
	"github.com/herd-dev/herd/shared"
)

// toolMessage is the message of one agent tool call, with the call's
// metadata as stored, so an update that leaves a field out keeps it (ACP:
// an absent field is unchanged; a present collection replaces the old).
type toolMessage struct {
	id string
	// done says the call has reached its final status.
	done bool
	meta shared.MessageMetadata
}

// tool stores a tool call or its update as one message per call: the
// content's bodies whole (bounded per call, see package toolcontent) in
// the same transaction as the metadata, which carries each part bounded.
// A call still running is published as an intermediate state; its start
// and its end are semantic.
func (s *sink) tool(t *agent.ToolCall) {
	if t == nil {
		return
	}
	call, known := s.tools[t.ID]
	if !known {
		call = &toolMessage{meta: shared.MessageMetadata{ToolCallID: t.ID}}
	}
	meta := call.meta
	if t.Kind != "" {
		meta.Kind = t.Kind
	}
	if t.Input != "" {
		meta.Input = storable(t.Input)
	}
	if t.Output != "" {
		meta.Output = storable(t.Output)
	}
	var bodies []string
	if t.Content != nil {
		content := make([]agent.ToolContent, len(t.Content))
		for i, c := range t.Content {
			c.Text, c.Path, c.NewText, c.TerminalID = storable(c.Text), storable(c.Path), storable(c.NewText), storable(c.TerminalID)
			if c.OldText != nil {
				old := storable(*c.OldText)
				c.OldText = &old
			}
			content[i] = c
		}
		parts := toolcontent.Build(content)
		bodies = toolcontent.Bodies(parts)
		meta.Content = make([]shared.ToolContent, len(parts))
		for i, p := range parts {
			meta.Content[i] = p.Wire()
		}
	}
	if t.Locations != nil {
		meta.Locations, meta.Paths = nil, nil
		for _, l := range t.Locations {
			meta.Locations = append(meta.Locations, shared.ToolLocation{Path: storable(l.Path), Line: l.Line})
			meta.Paths = append(meta.Paths, storable(l.Path))
		}
	}
	if t.Provenance != nil {
		if raw, err := json.Marshal(t.Provenance.Meta()); err == nil {
			meta.Provenance = raw
		} else {
			s.r.m.log.Error("encode tool call provenance", "session", s.r.id, "err", err)
		}
	}
	status, setStatus := toolStatus(t.Status), t.Status != ""
	title := storable(t.Title)
	action := shared.NotifySessionMessageUpdated
	if !known {
		// The call's first state is stored without its bodies, which the
		// update below adds in one transaction with their metadata.
		first := meta
		first.Content = nil
		msg, err := s.append("store tool call", store.NewMessage{SessionID: s.r.id, Type: shared.MessageToolCall, Content: title, Status: status, Metadata: &first})
		if err != nil {
			return
		}
		call.id, call.meta = msg.ID, first
		s.tools[t.ID] = call
		if bodies == nil {
			call.done = toolEnded(msg.Status)
			s.r.m.pub.PublishSession(s.r.id, shared.NotifySessionMessageAdded, msg, false)
			return
		}
		action, title, setStatus = shared.NotifySessionMessageAdded, "", false
	}
	u := store.MessageUpdate{Metadata: &meta, ReplaceMetadata: true, ToolBodies: bodies}
	if setStatus {
		u.Status = &status
	}
	if title != "" {
		u.Content = &title
	}
	msg, err := s.update("update tool call", call.id, u)
	if err != nil {
		return
	}
	call.meta = meta
	call.done = toolEnded(msg.Status)
	replaceable := action == shared.NotifySessionMessageUpdated && msg.Status == shared.MessageStreaming
	s.r.m.pub.PublishSession(s.r.id, action, msg, replaceable)
}

// ToolContentPage returns a page of a part of a tool call's content (see
// store.Store.ToolContentPage).
func (m *Manager) ToolContentPage(ctx context.Context, req shared.ToolContentGetRequest) (shared.ToolContentPage, error) {
	return m.cfg.Store.ToolContentPage(ctx, req)
}
