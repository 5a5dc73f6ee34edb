package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/agent/adaptertest"
	"github.com/herd-dev/herd/server/agent/anthropictest"
	"github.com/herd-dev/herd/server/agent/claudetest"
)

// recordClaude rewrites the recordings in claudeframes from the real
// adapter: go test ./server/agent -run TestRealClaude -args -record-claude
var recordClaude = flag.Bool("record-claude", false, "record the real Claude adapter's frames into claudeframes")

// claudeScript answers Claude Code's requests for the scenario the prompt
// names ("stream", "subagent", "shell", "edit PATH"), and its side requests (title,
// suggestions) with a short text.
func claudeScript(req *anthropictest.Request) anthropictest.Reply {
	last := req.LastUserText()
	switch {
	case !req.IsMain() || strings.HasPrefix(last, "[SUGGESTION MODE"):
		return anthropictest.Say("Scripted title")
	case strings.HasPrefix(last, "CHILD") && req.Answered():
		return anthropictest.Reply{Blocks: []anthropictest.Block{anthropictest.Text("The child looked around.")}, Chunk: 8, Delay: 50 * time.Millisecond}
	case strings.HasPrefix(last, "CHILD"):
		return anthropictest.Reply{Blocks: []anthropictest.Block{anthropictest.ToolUse("toolu_child_ls", "Bash", map[string]any{"command": "ls", "description": "List files"})}}
	case strings.HasPrefix(last, "edit ") && !req.Answered():
		// Write a new file (a diff without old text), then edit it.
		return anthropictest.Reply{Blocks: []anthropictest.Block{anthropictest.ToolUse("toolu_write_1", "Write",
			map[string]any{"file_path": strings.TrimPrefix(last, "edit "), "content": "one\ntwo\nthree\n"})}}
	case strings.HasPrefix(last, "edit ") && !req.Contains("toolu_edit_1"):
		return anthropictest.Reply{Blocks: []anthropictest.Block{anthropictest.ToolUse("toolu_edit_1", "Edit",
			map[string]any{"file_path": strings.TrimPrefix(last, "edit "), "old_string": "two\n", "new_string": "2\nand a half\n"})}}
	case req.Notified():
		return anthropictest.Say("The background work finished.")
	case req.Answered():
		return anthropictest.Say("Done.")
	case last == "subagent":
		return anthropictest.Reply{Blocks: []anthropictest.Block{anthropictest.ToolUse("toolu_agent_1", "Agent",
			map[string]any{"description": "Look around", "prompt": "CHILD: list the files", "subagent_type": "general-purpose"})}}
	case last == "plan":
		return anthropictest.Reply{Blocks: []anthropictest.Block{anthropictest.ToolUse("toolu_todo_1", "TodoWrite",
			map[string]any{"todos": []map[string]any{
				{"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
				{"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
				{"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"},
			}})}}
	case last == "shell":
		return anthropictest.Reply{Blocks: []anthropictest.Block{anthropictest.ToolUse("toolu_shell_1", "Bash",
			map[string]any{"command": "sleep 1; echo finished", "description": "Wait a second", "run_in_background": true})}}
	}
	return anthropictest.Reply{Blocks: []anthropictest.Block{anthropictest.Thinking("The person wants a greeting."), anthropictest.Text("Hello from the scripted model.")}, Chunk: 6}
}

// claudeRun is one prompt to the real Claude adapter: what herd's runtime
// made of it and the frames the adapter sent.
type claudeRun struct {
	events []agent.Event
	frames [][]byte
	stop   agent.StopReason
	err    error
	// endedBeforeReturn counts EventBackgroundEnded delivered before
	// Prompt returned.
	endedBeforeReturn int
}

type claudeHandler struct {
	mu     sync.Mutex
	events []agent.Event
	wake   chan struct{}
}

func (h *claudeHandler) OnEvent(ev agent.Event) {
	h.mu.Lock()
	h.events = append(h.events, ev)
	h.mu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

func (h *claudeHandler) RequestPermission(context.Context, agent.PermissionRequest) (string, error) {
	return "allow-once", nil
}

func (h *claudeHandler) Clarify(context.Context, agent.ClarificationRequest) (string, error) {
	return "", fmt.Errorf("no clarifications here")
}

func (h *claudeHandler) snapshot() []agent.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]agent.Event(nil), h.events...)
}

// runClaude starts the real adapter in mode, sends prompt, and after the
// turn waits, if until is set, for the events to satisfy it (frames the
// agent sends on its own time, outside the turn), then closes the
// execution.
func runClaude(t *testing.T, prompt string, mode claudetest.Mode, until func([]agent.Event) bool) claudeRun {
	t.Helper()
	srv, err := anthropictest.Start(claudeScript)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	profile := claudetest.Profile(t, srv.URL, mode)
	var (
		mu     sync.Mutex
		frames [][]byte
	)
	h := &claudeHandler{wake: make(chan struct{}, 1)}
	ex, err := agent.Start(context.Background(), agent.Options{
		Profile: profile, Cwd: t.TempDir(), Handler: h, ClientVersion: "test",
		Trace: func(f []byte) {
			mu.Lock()
			frames = append(frames, f)
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatalf("start the real Claude adapter: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var run claudeRun
	run.stop, run.err = ex.Prompt(ctx, prompt)
	for _, ev := range h.snapshot() {
		if ev.Kind == agent.EventBackgroundEnded {
			run.endedBeforeReturn++
		}
	}
	for deadline := time.After(90 * time.Second); until != nil && !until(h.snapshot()); {
		select {
		case <-h.wake:
		case <-deadline:
			t.Fatal("the agent's frames after the turn did not come within 90 s")
		}
	}
	_ = ex.Close()
	run.events = h.snapshot()
	mu.Lock()
	run.frames = frames
	mu.Unlock()
	return run
}

// writeFixture stores a run's frames as claudeframes/NAME.jsonl, after
// a header naming the adapter and Claude Code versions they came from.
func writeFixture(t *testing.T, name string, frames [][]byte) {
	t.Helper()
	var b bytes.Buffer
	header, _ := json.Marshal(map[string]any{"fixture": map[string]any{
		"adapter": agent.ClaudeAdapter.Package + "@" + agent.ClaudeAdapter.Version, "claudeCode": claudeCodeVersion(t),
		"scenario": name, "recorded": time.Now().UTC().Format("2006-01-02"),
		"how": "go test ./server/agent -run TestRealClaude -record-claude (scripted model endpoint, plain ACP v1 client)",
	}})
	b.Write(header)
	b.WriteByte('\n')
	for _, f := range frames {
		b.Write(f)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join("claudeframes", name+".jsonl"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// claudeCodeVersion is the version of the Claude Code the installed
// adapter runs.
func claudeCodeVersion(t *testing.T) string {
	data, err := os.ReadFile(filepath.Join(adaptertest.Adapters(), "node_modules", "@anthropic-ai", "claude-agent-sdk", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Version       string `json:"version"`
		ClaudeVersion string `json:"claudeCodeVersion"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		t.Fatal(err)
	}
	if pkg.ClaudeVersion != "" {
		return pkg.ClaudeVersion
	}
	return "claude-agent-sdk " + pkg.Version
}

func kinds(evs []agent.Event, kind agent.EventKind) []agent.Event {
	var out []agent.Event
	for _, ev := range evs {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

func TestRealClaudeStreamsTextAndReasoning(t *testing.T) {
	run := runClaude(t, "stream", claudetest.ModeAsk, nil)
	if run.err != nil || run.stop != agent.StopEndTurn {
		t.Fatalf("prompt = %q, %v", run.stop, run.err)
	}
	var text, thought strings.Builder
	for _, ev := range run.events {
		switch ev.Kind {
		case agent.EventText:
			if ev.MessageID != "" {
				text.WriteString(ev.Text)
			}
		case agent.EventThought:
			thought.WriteString(ev.Text)
		}
	}
	if text.String() != "Hello from the scripted model." || thought.String() != "The person wants a greeting." {
		t.Fatalf("text %q, reasoning %q", text.String(), thought.String())
	}
	if len(kinds(run.events, agent.EventUsage)) == 0 {
		t.Fatal("no usage_update")
	}
	if *recordClaude {
		writeFixture(t, "stream", run.frames)
	}
}

func TestRealClaudeSubagentIsAttestedUntilItsTurnEnds(t *testing.T) {
	run := runClaude(t, "subagent", claudetest.ModeBypass, nil)
	if run.err != nil || run.stop != agent.StopEndTurn {
		t.Fatalf("prompt = %q, %v", run.stop, run.err)
	}
	var launch *agent.Provenance
	yielded, child := false, false
	for _, ev := range run.events {
		switch {
		case ev.Kind == agent.EventUsage && ev.Usage.Origin == agent.OriginHuman:
			yielded = true
		case ev.Tool != nil && ev.Tool.Provenance != nil && ev.Tool.Provenance.Lifecycle == agent.LifecycleStarted:
			launch = ev.Tool.Provenance
		case ev.Tool != nil && ev.Tool.ID == "toolu_child_ls":
			child = ev.Tool.Provenance != nil && ev.Tool.Provenance.ParentToolUseID == "toolu_agent_1"
		}
	}
	if launch == nil || launch.BackgroundKind != agent.BackgroundSubagent || launch.BackgroundTaskID == "" || !launch.Attested {
		t.Fatalf("subagent launch = %+v", launch)
	}
	if !yielded || !child {
		t.Fatalf("foreground yield seen %v, child call under the launch %v", yielded, child)
	}
	ended := kinds(run.events, agent.EventBackgroundEnded)
	if len(ended) != 1 || run.endedBeforeReturn != 1 || ended[0].Tool.Provenance.BackgroundTaskID != launch.BackgroundTaskID {
		t.Fatalf("ends %+v (%d before the prompt returned), want the launched subagent's, before", ended, run.endedBeforeReturn)
	}
	if *recordClaude {
		writeFixture(t, "subagent", run.frames)
	}
}

func TestRealClaudeBackgroundShellIsNotRegistered(t *testing.T) {
	run := runClaude(t, "shell", claudetest.ModeBypass, func(evs []agent.Event) bool {
		// The shell's end shows only as the model cycle its notice starts.
		for _, ev := range evs {
			if ev.Kind == agent.EventUsage && ev.Usage.Origin == agent.OriginTaskNotification {
				return true
			}
		}
		return false
	})
	if run.err != nil || run.stop != agent.StopEndTurn {
		t.Fatalf("prompt = %q, %v", run.stop, run.err)
	}
	var shell *agent.Provenance
	notified := false
	for _, ev := range run.events {
		if ev.Tool != nil && ev.Tool.Provenance != nil && ev.Tool.Provenance.BackgroundKind == agent.BackgroundShell {
			shell = ev.Tool.Provenance
		}
		if ev.Kind == agent.EventUsage && ev.Usage.Origin == agent.OriginTaskNotification {
			notified = true
		}
	}
	if shell == nil || shell.BackgroundTaskID == "" || shell.Lifecycle != "" {
		t.Fatalf("shell provenance = %+v, want its id and no lifecycle (its end is not on the wire)", shell)
	}
	if !notified {
		t.Fatal("no task-notification cycle after the shell ended")
	}
	if len(kinds(run.events, agent.EventBackgroundEnded)) != 0 {
		t.Fatal("a shell's end was reported")
	}
	if *recordClaude {
		writeFixture(t, "shell", run.frames)
	}
}

func TestRealClaudeEditsReportDiffs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.txt")
	run := runClaude(t, "edit "+path, claudetest.ModeBypass, nil)
	if run.err != nil || run.stop != agent.StopEndTurn {
		t.Fatalf("prompt = %q, %v", run.stop, run.err)
	}
	data, err := os.ReadFile(path)
	if err != nil || string(data) != "one\n2\nand a half\nthree\n" {
		t.Fatalf("the file reads %q (%v) after the write and the edit", data, err)
	}
	if *recordClaude {
		writeFixture(t, "edit", run.frames)
	}
}

// firstText is a Handler that notes when the first text event arrives.
type firstText struct {
	claudeHandler
	mu    sync.Mutex
	first time.Time
}

func (h *firstText) OnEvent(ev agent.Event) {
	h.claudeHandler.OnEvent(ev)
	h.mu.Lock()
	if ev.Kind == agent.EventText && ev.MessageID != "" && h.first.IsZero() {
		h.first = time.Now()
	}
	h.mu.Unlock()
}

// BenchmarkRealClaudeFirstChunkToEvent measures, per turn of the real
// Claude Code, the time from the scripted endpoint writing the answer's
// first delta to herd's runtime delivering the first text event: Claude
// Code's and its adapter's share of the first-chunk latency (the server's
// benchmark BenchmarkRealClaudeFirstChunkToWebSocket adds herd's).
func BenchmarkRealClaudeFirstChunkToEvent(b *testing.B) {
	srv, err := anthropictest.Start(claudeScript)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	h := &firstText{claudeHandler: claudeHandler{wake: make(chan struct{}, 1)}}
	ex, err := agent.Start(context.Background(), agent.Options{
		Profile: claudetest.Profile(b, srv.URL, claudetest.ModeAsk), Cwd: b.TempDir(), Handler: h, ClientVersion: "test",
	})
	if err != nil {
		b.Fatal(err)
	}
	defer ex.Close()
	var took []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.mu.Lock()
		h.first = time.Time{}
		h.mu.Unlock()
		if _, err := ex.Prompt(context.Background(), "stream"); err != nil {
			b.Fatal(err)
		}
		reqs := srv.Requests()
		var first time.Time
		for _, r := range reqs {
			if r.IsMain() && r.LastUserText() == "stream" {
				first, _ = srv.FirstByte(r.N)
			}
		}
		h.mu.Lock()
		took = append(took, float64(h.first.Sub(first).Microseconds())/1000)
		h.mu.Unlock()
	}
	b.StopTimer()
	sort.Float64s(took)
	b.ReportMetric(took[len(took)/2], "ms-median")
	b.ReportMetric(took[len(took)-1], "ms-max")
}

// Claude's todo list is its ACP plan: a TodoWrite becomes a plan update
// with the steps and their statuses, which herd shows as the checklist;
// the step in progress is named in its active form.
func TestRealClaudeTodoListIsItsPlan(t *testing.T) {
	run := runClaude(t, "plan", claudetest.ModeBypass, nil)
	if run.err != nil || run.stop != agent.StopEndTurn {
		t.Fatalf("prompt = %q, %v", run.stop, run.err)
	}
	var plan []agent.PlanEntry
	for _, ev := range run.events {
		if ev.Kind == agent.EventPlan {
			plan = ev.Plan
		}
	}
	var got []string
	for _, e := range plan {
		got = append(got, e.Status+":"+e.Content)
	}
	want := "completed:Read the code in_progress:Fixing the bug pending:Run the tests"
	if strings.Join(got, " ") != want {
		t.Fatalf("plan = %q, want %q", strings.Join(got, " "), want)
	}
}
