package adaptertest

import (
	"context"
	"errors"
	"sync"

	"github.com/herd-dev/herd/server/agent"
)

// Events is an agent.Handler for a turn of plain text: it keeps every
// event and refuses every permission request and question, since such a
// turn asks for nothing. Its zero value is ready.
type Events struct {
	mu sync.Mutex
	// all holds every event in arrival order; guarded by mu.
	all []agent.Event
}

// OnEvent keeps ev.
func (h *Events) OnEvent(ev agent.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.all = append(h.all, ev)
}

// RequestPermission refuses: a text turn asks for no permission.
func (h *Events) RequestPermission(context.Context, agent.PermissionRequest) (string, error) {
	return "", errors.New("no permission expected in a text turn")
}

// Clarify refuses: a text turn asks no question.
func (h *Events) Clarify(context.Context, agent.ClarificationRequest) (string, error) {
	return "", errors.New("no question expected in a text turn")
}

// Of returns the events of kind received so far, in order.
func (h *Events) Of(kind agent.EventKind) []agent.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []agent.Event
	for _, ev := range h.all {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}
