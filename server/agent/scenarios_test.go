package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMockEchoesAPlainPrompt(t *testing.T) {
	rec := newRecorder()
	e := MustStart(t, mockProfile(), rec)
	MustPrompt(t, e, "hello herd\nsecond line")
	if got := rec.text(EventText); got != "hello herd\nsecond line" {
		t.Fatalf("text = %q", got)
	}
	if e.SessionID() == "" {
		t.Fatal("no session id")
	}
}

func TestStreamSendsNChunksWithTheKnownText(t *testing.T) {
	rec := newRecorder()
	e := MustStart(t, mockProfile(), rec)
	MustPrompt(t, e, "/scenario stream 200 1")
	events := rec.snapshot()
	if len(events) != 200 {
		t.Fatalf("%d events, want 200", len(events))
	}
	for i, ev := range events {
		if ev.Kind != EventText || ev.MessageID == "" || ev.MessageID != events[0].MessageID {
			t.Fatalf("event %d = %+v, want a text chunk of one message", i, ev)
		}
	}
	if got := rec.text(EventText); got != numbers(200) {
		t.Fatalf("text = %q", got)
	}
}

func TestReasoningBurstOf30000ChunksIsByteExact(t *testing.T) {
	rec := newRecorder()
	e := MustStart(t, mockProfile(), rec)
	start := time.Now()
	MustPrompt(t, e, "/scenario reasoning-burst 30000")
	elapsed := time.Since(start)
	if got, want := rec.text(EventThought), numbers(30000); got != want {
		t.Fatalf("thought text differs: %d bytes, want %d", len(got), len(want))
	}
	if got := rec.text(EventText); got != "done" {
		t.Fatalf("answer = %q, want done", got)
	}
	st := e.Stats()
	// The chunks, the answer and the session's settings.
	if st.Events != 30002 || st.Dropped != 0 {
		t.Fatalf("stats = %+v", st)
	}
	t.Logf("30000 thought chunks in %v: %.0f events/s end to end (%d window stalls)",
		elapsed, 30001/elapsed.Seconds(), st.Stalls)
}

func TestToolScenarioEmitsPlanCallUpdatesAndAnswerInOrder(t *testing.T) {
	rec := newRecorder()
	e := MustStart(t, mockProfile(), rec)
	MustPrompt(t, e, "/scenario tool")
	var got []string
	for _, ev := range rec.snapshot() {
		s := ev.Kind.String()
		if ev.Tool != nil {
			s += ":" + string(ev.Tool.Status)
		}
		got = append(got, s)
	}
	want := "plan tool_call:pending tool_call_update:in_progress tool_call_update:completed plan text"
	if strings.Join(got, " ") != want {
		t.Fatalf("events = %s\nwant     %s", strings.Join(got, " "), want)
	}
	events := rec.snapshot()
	call, result := events[1].Tool, events[3].Tool
	if call.Title != "Read README.md" || call.Kind != "read" || call.Input != `{"path":"README.md"}` ||
		len(call.Paths) != 1 || filepath.Base(call.Paths[0]) != "README.md" {
		t.Fatalf("tool call = %+v", call)
	}
	if result.ID != call.ID || len(result.Content) != 1 || result.Content[0].Type != ToolText ||
		!strings.Contains(result.Content[0].Text, "42 lines") {
		t.Fatalf("result = %+v", result)
	}
	if p := events[0].Plan; len(p) != 2 || p[0].Status != "in_progress" || p[1].Priority != "medium" {
		t.Fatalf("plan = %+v", p)
	}
}

func TestPermissionAnswerDecidesTheText(t *testing.T) {
	for _, tc := range []struct{ option, text, status string }{
		{"allow", "allowed", "completed"},
		{"reject", "denied", "failed"},
	} {
		t.Run(tc.option, func(t *testing.T) {
			rec := newRecorder()
			var asked PermissionRequest
			rec.permit = func(_ context.Context, req PermissionRequest) (string, error) {
				asked = req
				return tc.option, nil
			}
			e := MustStart(t, mockProfile(), rec)
			MustPrompt(t, e, "/scenario permission")
			if rec.text(EventText) != tc.text {
				t.Fatalf("text = %q, want %q", rec.text(EventText), tc.text)
			}
			if asked.ToolCall.Title != "Edit notes.txt" || asked.ToolCall.Kind != "edit" || len(asked.Options) != 2 ||
				asked.Options[0].ID != "allow" || asked.Options[1].Kind != "reject_once" {
				t.Fatalf("request = %+v", asked)
			}
			events := rec.snapshot()
			if last := events[len(events)-2]; last.Tool == nil || string(last.Tool.Status) != tc.status {
				t.Fatalf("tool update = %+v, want status %s", last, tc.status)
			}
		})
	}
}

func TestClarifyRoundTrip(t *testing.T) {
	rec := newRecorder()
	var asked ClarificationRequest
	rec.clarify = func(_ context.Context, req ClarificationRequest) (string, error) {
		asked = req
		return "release-2", nil
	}
	e := MustStart(t, mockProfile(), rec)
	MustPrompt(t, e, "/scenario clarify")
	if asked.Question != "Which branch should I use?" || asked.PendingID == "" {
		t.Fatalf("request = %+v", asked)
	}
	if got := rec.text(EventText); got != "answer: release-2" {
		t.Fatalf("text = %q", got)
	}
}

func TestCancelWithdrawsAPendingClarification(t *testing.T) {
	rec := newRecorder()
	asked := make(chan struct{})
	rec.clarify = func(ctx context.Context, _ ClarificationRequest) (string, error) {
		close(asked)
		<-ctx.Done()
		return "", ctx.Err()
	}
	e := MustStart(t, mockProfile(), rec)
	result := make(chan StopReason, 1)
	go func() {
		stop, err := e.Prompt(context.Background(), "/scenario clarify")
		if err != nil {
			t.Errorf("Prompt: %v", err)
		}
		result <- stop
	}()
	<-asked
	if err := e.Cancel(context.Background()); err != nil {
		t.Fatal(err)
	}
	if stop := <-result; stop != StopCancelled {
		t.Fatalf("stop reason = %s, want cancelled", stop)
	}
}

func TestWriteCreatesTheFileInTheSessionCwd(t *testing.T) {
	rec := newRecorder()
	dir := t.TempDir()
	e, err := Start(context.Background(), Options{Profile: mockProfile(), Cwd: dir, Handler: rec})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	MustPrompt(t, e, "/scenario write notes/today.md hello  world")
	b, err := os.ReadFile(filepath.Join(dir, "notes", "today.md"))
	if err != nil || string(b) != "hello  world" {
		t.Fatalf("file = %q, %v", b, err)
	}
	if got := rec.text(EventText); got != "wrote 12 bytes to notes/today.md" {
		t.Fatalf("text = %q", got)
	}
	_, err = e.Prompt(context.Background(), "/scenario write ../escape.md x")
	var ae *AgentError
	if !errors.As(err, &ae) {
		t.Fatalf("writing outside cwd: err = %v, want an AgentError", err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "escape.md")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("file outside cwd exists: %v", err)
	}
}

func TestErrorScenarioIsARecoverableAgentError(t *testing.T) {
	rec := newRecorder()
	e := MustStart(t, mockProfile(), rec)
	_, err := e.Prompt(context.Background(), "/scenario error")
	var ae *AgentError
	if !errors.As(err, &ae) || ae.Code != -32603 {
		t.Fatalf("err = %v, want AgentError -32603", err)
	}
	if want := "agent error -32603: Internal error: mock agent: scripted recoverable error"; ae.Error() != want {
		t.Fatalf("error reads %q, want %q", ae.Error(), want)
	}
	if got := rec.text(EventText); got != "Something went wrong; you can retry." {
		t.Fatalf("text = %q", got)
	}
	MustPrompt(t, e, "still there?")
	if e.Err() != nil {
		t.Fatalf("Err = %v after a recoverable error", e.Err())
	}
}

func TestSleepHoldsTheTurnUntilCancel(t *testing.T) {
	rec := newRecorder()
	e := MustStart(t, mockProfile(), rec)
	result := make(chan StopReason, 1)
	start := time.Now()
	go func() {
		stop, err := e.Prompt(context.Background(), "/scenario sleep 60000")
		if err != nil {
			t.Errorf("Prompt: %v", err)
		}
		result <- stop
	}()
	// session/cancel is a notification; repeat it until the turn it
	// targets has reached the agent.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case stop := <-result:
			if stop != StopCancelled {
				t.Fatalf("stop reason = %s, want cancelled", stop)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("cancel took %v", d)
			}
			t.Logf("sleep cancelled after %v", time.Since(start))
			return
		case <-tick.C:
			if err := e.Cancel(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestStreamStopsAtCancel(t *testing.T) {
	rec := newRecorder()
	e := MustStart(t, mockProfile(), rec)
	result := make(chan StopReason, 1)
	go func() {
		stop, _ := e.Prompt(context.Background(), "/scenario stream 1000 10")
		result <- stop
	}()
	rec.waitFor(t, "three chunks", func(ev []Event) bool { return len(ev) >= 3 })
	if err := e.Cancel(context.Background()); err != nil {
		t.Fatal(err)
	}
	if stop := <-result; stop != StopCancelled {
		t.Fatalf("stop reason = %s", stop)
	}
	if n := len(rec.snapshot()); n >= 1000 {
		t.Fatalf("%d chunks after cancel", n)
	}
}

func TestSlowStartDelaysInitialize(t *testing.T) {
	for _, tc := range []struct {
		name    string
		profile Profile
	}{
		{"flag", mockProfile("--slow-start", "300")},
		{"env", func() Profile {
			p := mockProfile()
			p.Env["HERD_MOCK_SLOW_START_MS"] = "300"
			return p
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			e := MustStart(t, tc.profile, newRecorder())
			if d := time.Since(start); d < 300*time.Millisecond {
				t.Fatalf("started after %v, want at least 300ms", d)
			}
			MustPrompt(t, e, "ok")
		})
	}
	t.Run("timeout", func(t *testing.T) {
		_, err := Start(context.Background(), Options{
			Profile: mockProfile("--slow-start", "5000"), Cwd: t.TempDir(), Handler: newRecorder(),
			StartTimeout: 200 * time.Millisecond, KillGrace: time.Second,
		})
		if err == nil || !strings.Contains(err.Error(), "initialize: no answer within 200ms") {
			t.Fatalf("err = %v", err)
		}
	})
}
