package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// MockAgentProfile is mocktest.Profile, set by TestMain (testmain_test.go):
// the mock agent imports this package, so only the external test package
// can import mocktest.
var MockAgentProfile func(args ...string) Profile

// recorder is a Handler that keeps every event and logs the order in which
// events and requests arrived.
type recorder struct {
	mu     sync.Mutex
	events []Event
	// configs are the EventConfig events, kept apart from events: every
	// mock session reports its settings when it opens.
	configs []ConfigState
	order   []string // "event:KIND:TOOLID" and "permission:TOOLID", in call order
	wake    chan struct{}

	// slow delays OnEvent for tool calls, to tempt requests to overtake.
	slow time.Duration
	// permit and clarify answer requests; nil permits "allow" and answers
	// "main".
	permit  func(context.Context, PermissionRequest) (string, error)
	clarify func(context.Context, ClarificationRequest) (string, error)
}

func newRecorder() *recorder { return &recorder{wake: make(chan struct{}, 1)} }

func (r *recorder) OnEvent(ev Event) {
	if r.slow > 0 && ev.Kind == EventToolCall {
		time.Sleep(r.slow)
	}
	r.mu.Lock()
	if ev.Kind == EventConfig {
		r.configs = append(r.configs, *ev.Config)
		r.mu.Unlock()
		return
	}
	r.events = append(r.events, ev)
	if ev.Tool != nil {
		r.order = append(r.order, "event:"+ev.Kind.String()+":"+ev.Tool.ID)
	}
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *recorder) RequestPermission(ctx context.Context, req PermissionRequest) (string, error) {
	r.mu.Lock()
	r.order = append(r.order, "permission:"+req.ToolCall.ID)
	r.mu.Unlock()
	if r.permit != nil {
		return r.permit(ctx, req)
	}
	return "allow", nil
}

func (r *recorder) Clarify(ctx context.Context, req ClarificationRequest) (string, error) {
	if r.clarify != nil {
		return r.clarify(ctx, req)
	}
	return "main", nil
}

// snapshot returns a copy of the events so far.
func (r *recorder) snapshot() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// text joins the chunks of one kind.
func (r *recorder) text(kind EventKind) string {
	var b strings.Builder
	for _, ev := range r.snapshot() {
		if ev.Kind == kind {
			b.WriteString(ev.Text)
		}
	}
	return b.String()
}

// waitFor waits until cond holds for the events so far.
func (r *recorder) waitFor(tb testing.TB, what string, cond func([]Event) bool) {
	tb.Helper()
	deadline := time.After(10 * time.Second)
	for !cond(r.snapshot()) {
		select {
		case <-r.wake:
		case <-deadline:
			tb.Fatalf("timed out waiting for %s", what)
		}
	}
}

// mockProfile runs the test binary as the mock agent with args.
func mockProfile(args ...string) Profile { return MockAgentProfile(args...) }

// MustStart starts an execution of p in a fresh directory, closed at the
// end of the test.
func MustStart(tb testing.TB, p Profile, h Handler) *Execution {
	tb.Helper()
	e, err := Start(context.Background(), Options{
		Profile: p, Cwd: tb.TempDir(), Handler: h,
		StartTimeout: 10 * time.Second, KillGrace: time.Second,
	})
	if err != nil {
		tb.Fatalf("Start: %v", err)
	}
	tb.Cleanup(func() { e.Close() })
	return e
}

// MustPrompt sends a prompt that must end its turn normally.
func MustPrompt(tb testing.TB, e *Execution, text string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stop, err := e.Prompt(ctx, text)
	if err != nil {
		tb.Fatalf("Prompt(%q): %v", text, err)
	}
	if stop != StopEndTurn {
		tb.Fatalf("Prompt(%q) stop reason = %s, want end_turn", text, stop)
	}
}

// numbers is the text of `stream n`: "0 1 … n-1 ".
func numbers(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%d ", i)
	}
	return b.String()
}

// processGone reports whether pid no longer runs: it does not exist, or it
// is a zombie waiting for a reaper that is not the test.
func processGone(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(stat, ')')
	return i > 0 && len(stat) > i+2 && stat[i+2] == 'Z'
}

// waitGone waits until pid no longer runs.
func waitGone(tb testing.TB, pid int) {
	tb.Helper()
	for deadline := time.Now().Add(5 * time.Second); !processGone(pid); {
		if time.Now().After(deadline) {
			tb.Fatalf("process %d still runs", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
