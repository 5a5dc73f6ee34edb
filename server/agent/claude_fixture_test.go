package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

// replayFixture plays the agent's frames recorded in testdata/claude/NAME
// through the runtime's own path (normalize, turn attribution, the end of
// turn-bound work) with Claude's capabilities, as an execution whose one
// prompt was request 3, and returns the events the Handler got.
func replayFixture(t *testing.T, name string) []Event {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "claude", name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	e := &Execution{caps: CapabilitiesOf("claude"), seq: newSequencer(), stop: make(chan struct{})}
	rec := newRecorder()
	go e.seq.run(rec)
	defer e.seq.abort()
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	var turn uint64
	for n := 0; sc.Scan(); n++ {
		var f struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			t.Fatalf("line %d: %v", n+1, err)
		}
		switch {
		case f.ID != nil && *f.ID == 2 && f.Result != nil: // session/new answered: the prompt is sent
			turn = e.beginTurn()
		case f.ID != nil && *f.ID == 3 && f.Result != nil: // the prompt's result
			e.endTurn(turn)
		case f.Method == "session/update":
			var note acp.SessionNotification
			if err := json.Unmarshal(f.Params, &note); err != nil {
				t.Fatalf("line %d: decode session/update: %v", n+1, err)
			}
			if err := (client{e}).SessionUpdate(context.Background(), note); err != nil {
				t.Fatal(err)
			}
		}
	}
	if turn == 0 {
		t.Fatal("the fixture has no session/new result")
	}
	rec.waitFor(t, "the replayed events", func(evs []Event) bool { return len(evs) > 0 })
	return rec.snapshot()
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
