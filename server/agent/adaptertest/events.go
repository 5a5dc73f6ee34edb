package adaptertest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

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

// Turn starts p in a scratch directory, sends prompt as one turn and
// returns its stop reason and the text events it streamed; it fails the
// test, with the agent's stderr, when the agent cannot start or the turn
// fails. The execution is closed when the test ends.
func Turn(tb testing.TB, p agent.Profile, prompt string) (agent.StopReason, []agent.Event) {
	tb.Helper()
	h := &Events{}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	exec, err := agent.Start(ctx, agent.Options{Profile: p, Cwd: tb.TempDir(), Handler: h, StartTimeout: time.Minute})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = exec.Close() })
	stop, err := exec.Prompt(ctx, prompt)
	if err != nil {
		tb.Fatalf("prompt: %v; stderr: %s", err, exec.Stderr())
	}
	return stop, h.Of(agent.EventText)
}

// Joined is the text of events, in order.
func Joined(events []agent.Event) string {
	var b strings.Builder
	for _, ev := range events {
		b.WriteString(ev.Text)
	}
	return b.String()
}
