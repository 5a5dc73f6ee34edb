package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/herd-dev/herd/shared"
)

// SetPromptCapabilities stores what the session's agent takes in a prompt
// beyond text, as its latest start advertised it. It changes no revision:
// the capabilities travel with the session's next state event (the start's
// move to WAITING_FOR_INPUT) and with every session the server lists.
func (s *Store) SetPromptCapabilities(ctx context.Context, id string, caps shared.PromptCapabilities) (shared.Session, error) {
	b, err := json.Marshal(caps)
	if err != nil {
		return shared.Session{}, fmt.Errorf("encode prompt capabilities: %w", err)
	}
	res := s.write.WithContext(ctx).Model(&sessionRow{}).Where("id = ?", id).
		Updates(map[string]any{"prompt_capabilities": string(b), "updated_at": now()})
	if res.Error != nil {
		return shared.Session{}, fmt.Errorf("store prompt capabilities of session %s: %w", id, res.Error)
	}
	row, err := s.loadSession(ctx, id)
	if err != nil {
		return shared.Session{}, err
	}
	return row.toSession(), nil
}

// decodePromptCapabilities reads a stored prompt_capabilities column; an
// empty or unreadable one is unknown (nil), which clients treat as text
// only.
func decodePromptCapabilities(raw string) *shared.PromptCapabilities {
	if raw == "" {
		return nil
	}
	var caps shared.PromptCapabilities
	if json.Unmarshal([]byte(raw), &caps) != nil {
		return nil
	}
	return &caps
}

// userMetadata is the stored metadata of a prompt: its attachments, or
// none.
func userMetadata(attachments []shared.Attachment) (string, error) {
	if len(attachments) == 0 {
		return "{}", nil
	}
	return encodeMetadata(&shared.MessageMetadata{Attachments: attachments})
}
