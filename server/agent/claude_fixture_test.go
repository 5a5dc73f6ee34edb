package agent

import (
	"context"
	"encoding/json"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/herd-dev/herd/server/agent/claudeframes"
)

// replayFixture plays the recorded prompt turn of the real adapter
// (package claudeframes) through the runtime's own path (normalize, turn
// attribution, the end of turn-bound work) with Claude's capabilities, and
// returns the events the Handler got.
func replayFixture(t *testing.T, name string) []Event {
	t.Helper()
	rec, err := claudeframes.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	updates, _, _, err := rec.Prompt()
	if err != nil {
		t.Fatal(err)
	}
	e := &Execution{caps: CapabilitiesOf("claude"), seq: newSequencer(), stop: make(chan struct{}), reader: &wireReader{}}
	h := newRecorder()
	go e.seq.run(h)
	defer e.seq.abort()
	turn := e.beginTurn()
	for i, raw := range updates {
		var note acp.SessionNotification
		if err := json.Unmarshal(raw, &note); err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
		if err := (client{e}).SessionUpdate(context.Background(), note); err != nil {
			t.Fatal(err)
		}
	}
	e.endTurn(context.Background(), turn, true, true)
	// endTurn waits for delivery only when the turn launched work.
	delivered, ok := e.seq.pushBarrier(nil)
	if !ok {
		t.Fatal("the delivery queue refused the barrier")
	}
	<-delivered
	return h.snapshot()
}

func TestClaudeFixtureSubagentLaunchYieldAndEnd(t *testing.T) {
	evs := replayFixture(t, "subagent")
	var launch, launchIdx, yield, childIdx, end = (*Provenance)(nil), -1, -1, -1, -1
	for i, ev := range evs {
		switch {
		case ev.Kind == EventUsage && ev.Usage.Origin == OriginHuman:
			yield = i
		case ev.Kind == EventBackgroundEnded:
			end = i
			if p := ev.Tool.Provenance; launch == nil || p.BackgroundTaskID != launch.BackgroundTaskID ||
				p.Lifecycle != LifecycleFinished || !p.Attested || ev.Tool.ID != "toolu_agent_1" {
				t.Fatalf("end %+v of launch %+v", p, launch)
			}
		case ev.Tool != nil && ev.Tool.Provenance != nil && ev.Tool.Provenance.Lifecycle == LifecycleStarted:
			launch, launchIdx = ev.Tool.Provenance, i
		case ev.Tool != nil && ev.Tool.Provenance != nil && ev.Tool.Provenance.ParentToolUseID == "toolu_agent_1":
			childIdx = i
		}
	}
	if launch == nil || launch.BackgroundKind != BackgroundSubagent || launch.BackgroundTaskID == "" || !launch.Attested || !launch.EndsWithTurn {
		t.Fatalf("launch = %+v", launch)
	}
	// Launch, then the yield of the human-origin cycle with the subagent
	// still running (its child's frames come after), and its end last.
	if !(launchIdx < yield && yield < end && childIdx > launchIdx && end == len(evs)-1) {
		t.Fatalf("order: launch %d, yield %d, child %d, end %d of %d events", launchIdx, yield, childIdx, end, len(evs))
	}
}

func TestClaudeFixtureBackgroundShellIsPresentationOnly(t *testing.T) {
	evs := replayFixture(t, "shell")
	var shell *Provenance
	for _, ev := range evs {
		if ev.Kind == EventBackgroundEnded {
			t.Fatal("a background shell's end was made up: nothing on the wire marks it")
		}
		if ev.Tool != nil && ev.Tool.Provenance != nil && ev.Tool.Provenance.BackgroundKind == BackgroundShell {
			shell = ev.Tool.Provenance
		}
	}
	if shell == nil || shell.BackgroundTaskID == "" || shell.Lifecycle != "" || shell.EndsWithTurn {
		t.Fatalf("shell = %+v, want its id without a lifecycle", shell)
	}
}

func TestClaudeIgnoresHerdsExplicitLifecycleFields(t *testing.T) {
	meta := map[string]any{"claudeCode": map[string]any{
		"toolName": "Task", "backgroundTaskId": "made-up", "backgroundKind": "subagent", "lifecycle": "started",
	}}
	if p := provenanceOf(meta, CapabilitiesOf("claude")); p.BackgroundKind != "" || p.Lifecycle != "" {
		t.Fatalf("claude provenance from herd's explicit fields = %+v; Claude never sends them", p)
	}
	if p := provenanceOf(meta, CapabilitiesOf("mock")); p.BackgroundKind != BackgroundSubagent || p.Lifecycle != LifecycleStarted {
		t.Fatalf("mock provenance = %+v", p)
	}
}

func TestClaudeLaunchOutsideAPromptRegistersNothing(t *testing.T) {
	e := &Execution{caps: CapabilitiesOf("claude")}
	ev := Event{Kind: EventToolCallUpdate, Tool: &ToolCall{ID: "toolu_1", Provenance: provenanceOf(map[string]any{"claudeCode": map[string]any{
		"toolName": "Agent", "toolResponse": map[string]any{"isAsync": true, "status": "async_launched", "agentId": "a1"},
	}}, e.caps)}}
	e.attribute(&ev)
	if ev.Tool.Provenance.Lifecycle != "" {
		t.Fatalf("lifecycle %q: a launch no prompt will end must not register", ev.Tool.Provenance.Lifecycle)
	}
}

// The recordings come from the adapter version herd pins: a new pin needs
// new recordings (go test ./server/agent -run TestRealClaude -args
// -record-claude).
func TestClaudeRecordingsAreOfThePinnedAdapter(t *testing.T) {
	for _, name := range []string{"stream", "subagent", "shell", "edit"} {
		rec, err := claudeframes.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		if want := ClaudeAdapter.Package + "@" + ClaudeAdapter.Version; rec.Header.Adapter != want || rec.Header.Scenario != name {
			t.Errorf("%s: recorded from %q (scenario %q), herd pins %q", name, rec.Header.Adapter, rec.Header.Scenario, want)
		}
	}
}
