package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestPermissionRequestNeverOvertakesItsToolCall(t *testing.T) {
	rec := newRecorder()
	// A slow OnEvent for tool calls gives the SDK every chance to run the
	// permission request first.
	rec.slow = 2 * time.Millisecond
	e := MustStart(t, mockProfile(), rec)
	const rounds = 200
	for range rounds {
		MustPrompt(t, e, "/scenario permission")
	}
	rec.mu.Lock()
	order := append([]string(nil), rec.order...)
	rec.mu.Unlock()
	seen := map[string]bool{}
	asked := 0
	for _, step := range order {
		if id, ok := strings.CutPrefix(step, "event:tool_call:"); ok {
			seen[id] = true
		}
		if id, ok := strings.CutPrefix(step, "permission:"); ok {
			asked++
			if !seen[id] {
				t.Fatalf("permission request for %s arrived before its tool_call event; order: %v", id, order)
			}
		}
	}
	if asked != rounds {
		t.Fatalf("%d permission requests, want %d", asked, rounds)
	}
}

func TestSlowHandlerSlowsTheAgentWithoutLosingEvents(t *testing.T) {
	rec := newRecorder()
	h := &slowHandler{recorder: rec, delay: 100 * time.Microsecond}
	e := MustStart(t, mockProfile(), h)
	MustPrompt(t, e, "/scenario reasoning-burst 5000")
	if got := rec.text(EventThought); got != numbers(5000) {
		t.Fatalf("thought text differs: %d bytes", len(got))
	}
	st := e.Stats()
	if st.Stalls == 0 {
		t.Fatalf("stats = %+v, want the reader to have waited for the handler", st)
	}
	t.Logf("slow handler: %+v", st)
}

// slowHandler spends delay in every OnEvent.
type slowHandler struct {
	*recorder
	delay time.Duration
}

func (h *slowHandler) OnEvent(ev Event) {
	time.Sleep(h.delay)
	h.recorder.OnEvent(ev)
}

func TestBackgroundWorkOutlivesTheTurnWithAttestedLifecycle(t *testing.T) {
	rec := newRecorder()
	e := MustStart(t, mockProfile(), rec)
	MustPrompt(t, e, "/scenario background 2 300")
	atTurnEnd := rec.snapshot()
	started := lifecycles(t, atTurnEnd, LifecycleStarted)
	if len(started) != 4 {
		t.Fatalf("started workloads at turn end = %v, want 2 subagents, a shell, a monitor", started)
	}
	if f := lifecycles(t, atTurnEnd, LifecycleFinished); len(f) != 0 {
		t.Fatalf("finished before the turn ended: %v", f)
	}
	if last := atTurnEnd[len(atTurnEnd)-1]; last.Kind != EventUsage || last.Usage.Origin != OriginHuman {
		t.Fatalf("turn's last event = %+v, want the human-origin usage update", last)
	}
	shellPid := launchedPid(t, atTurnEnd)

	rec.waitFor(t, "background completion", func(ev []Event) bool {
		return len(ev) > 1 && ev[len(ev)-2].Kind == EventText && ev[len(ev)-2].Text == "Background work finished." &&
			ev[len(ev)-1].Kind == EventUsage && ev[len(ev)-1].Usage.Origin == OriginTaskNotification
	})
	all := rec.snapshot()
	finished := lifecycles(t, all, LifecycleFinished)
	if strings.Join(finished, " ") != strings.Join(started, " ") {
		t.Fatalf("finished %v, want the started %v", finished, started)
	}
	children := 0
	for _, ev := range all[len(atTurnEnd):] {
		if ev.Kind == EventToolCall && ev.Tool.Provenance != nil && ev.Tool.Provenance.ParentToolUseID != "" {
			children++
		}
		if ev.Kind == EventUsage && ev.Usage.Origin != OriginTaskNotification {
			t.Fatalf("usage after the turn = %+v", ev.Usage)
		}
	}
	if children != 2 {
		t.Fatalf("%d child tool calls, want one per subagent", children)
	}
	waitGone(t, shellPid)
}

// lifecycles lists "KIND:TASKID" for the tool frames carrying lifecycle l,
// and checks that each is attested.
func lifecycles(tb testing.TB, events []Event, l Lifecycle) []string {
	tb.Helper()
	var out []string
	for _, ev := range events {
		if ev.Tool == nil || ev.Tool.Provenance == nil || ev.Tool.Provenance.Lifecycle != l {
			continue
		}
		p := ev.Tool.Provenance
		if !p.Attested {
			tb.Fatalf("mock provenance not attested: %+v", p)
		}
		out = append(out, string(p.BackgroundKind)+":"+p.BackgroundTaskID)
	}
	return out
}

// launchedPid returns the pid of the background shell the mock started.
func launchedPid(tb testing.TB, events []Event) int {
	tb.Helper()
	for _, ev := range events {
		if ev.Kind != EventToolCallUpdate || ev.Tool.Provenance == nil || ev.Tool.Provenance.BackgroundKind != BackgroundShell {
			continue
		}
		var out struct{ Pid int }
		if json.Unmarshal([]byte(ev.Tool.Output), &out) == nil && out.Pid > 0 {
			return out.Pid
		}
	}
	tb.Fatal("no background shell pid")
	return 0
}

func TestCloseKillsTheWholeProcessGroup(t *testing.T) {
	rec := newRecorder()
	e := MustStart(t, mockProfile(), rec)
	MustPrompt(t, e, "/scenario background 1 60000")
	agentPid, shellPid := e.Pid(), launchedPid(t, rec.snapshot())
	if processGone(agentPid) || processGone(shellPid) {
		t.Fatal("agent or its shell not running before Close")
	}
	start := time.Now()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("Close took %v", time.Since(start))
	if !errors.Is(e.Err(), ErrClosed) {
		t.Fatalf("Err = %v, want ErrClosed", e.Err())
	}
	waitGone(t, agentPid)
	waitGone(t, shellPid)
	if err := e.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestCrashEndsTheExecutionWithStatusAndStderr(t *testing.T) {
	rec := newRecorder()
	e := MustStart(t, mockProfile(), rec)
	_, err := e.Prompt(context.Background(), "/scenario crash")
	if err == nil {
		t.Fatal("Prompt succeeded on a crash")
	}
	select {
	case <-e.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed after the crash")
	}
	var exit *ExitError
	if !errors.As(e.Err(), &exit) || exit.Code != 3 {
		t.Fatalf("Err = %v, want ExitError with status 3", e.Err())
	}
	for _, want := range []string{"exit status 3", "crashing on purpose"} {
		if !strings.Contains(e.Err().Error(), want) || !strings.Contains(err.Error(), want) {
			t.Fatalf("errors %q / %q do not mention %q", e.Err(), err, want)
		}
	}
	if got := rec.text(EventText); got != numbers(3) {
		t.Fatalf("text before the crash = %q", got)
	}
	if !strings.Contains(e.Stderr(), "crashing on purpose") {
		t.Fatalf("Stderr = %q", e.Stderr())
	}
}

func TestStartFailsClearly(t *testing.T) {
	for _, tc := range []struct {
		name    string
		profile Profile
		want    string
	}{
		{"missing command", Profile{ID: "x", Command: "herd-no-such-agent"}, `"herd-no-such-agent": executable file not found`},
		{"missing path", Profile{ID: "x", Command: "/nonexistent/agent"}, "no such file or directory"},
		{"agent exits", Profile{ID: "x", Command: "/bin/sh", Args: []string{"-c", "echo no acp here >&2; exit 7"}},
			"agent exited: exit status 7; stderr: no acp here"},
		{"malformed frame", Profile{ID: "x", Command: "/bin/sh", Args: []string{"-c", "echo 'not json'; sleep 30"}},
			`malformed frame`},
		{"neither request nor notification", Profile{ID: "x", Command: "/bin/sh", Args: []string{"-c", `echo '{"jsonrpc":"2.0"}'; sleep 30`}},
			`neither id nor method`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := Start(context.Background(), Options{
				Profile: tc.profile, Cwd: t.TempDir(), Handler: newRecorder(),
				StartTimeout: 5 * time.Second, KillGrace: time.Second,
			})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Fatalf("failing took %v", d)
			}
		})
	}
	if _, err := Start(context.Background(), Options{Profile: mockProfile(), Cwd: "relative", Handler: newRecorder()}); err == nil {
		t.Fatal("relative cwd accepted")
	}
}

func TestMalformedFrameMidSessionEndsTheExecution(t *testing.T) {
	// A hand-written agent: it answers initialize and session/new (the
	// SDK numbers them 1 and 2), then breaks the framing.
	script := `read l; echo '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"authMethods":[]}}'
read l; echo '{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}'
read l; echo '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}'
echo '{"jsonrpc":"2.0","method":"session/update",'; sleep 30`
	rec := newRecorder()
	e := MustStart(t, Profile{ID: "script", Command: "/bin/sh", Args: []string{"-c", script}}, rec)
	_, err := e.Prompt(context.Background(), "hello")
	if !errors.Is(err, ErrProtocol) || !errors.Is(e.Err(), ErrProtocol) || !strings.Contains(err.Error(), "malformed frame") {
		t.Fatalf("Prompt err = %v, Err = %v; want a protocol error", err, e.Err())
	}
	if got := rec.text(EventText); got != "hi" {
		t.Fatalf("text before the bad frame = %q", got)
	}
	waitGone(t, e.Pid())
}

func TestAnAgentWhoseEscapedChildHoldsItsOutputStillEnds(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid not installed")
	}
	// The child leaves the process group, keeps stdout open for 3s, and
	// cannot be killed with the group.
	start := time.Now()
	_, err := Start(context.Background(), Options{
		Profile: Profile{ID: "x", Command: "/bin/sh", Args: []string{"-c", "setsid sleep 3 & exit 5"}},
		Cwd:     t.TempDir(), Handler: newRecorder(), StartTimeout: 5 * time.Second, KillGrace: 200 * time.Millisecond,
	})
	if err == nil || !strings.Contains(err.Error(), "agent exited: exit status 5") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("ending took %v, want the pipe closed after KillGrace", d)
	}
}

func TestTwentyParallelExecutionsAreIndependent(t *testing.T) {
	for i := range 20 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			rec := newRecorder()
			e := MustStart(t, mockProfile(), rec)
			if i == 0 {
				// One crashing agent must not disturb the others.
				_, _ = e.Prompt(context.Background(), "/scenario crash")
				<-e.Done()
				return
			}
			chunks := 100 + i
			MustPrompt(t, e, fmt.Sprintf("/scenario stream %d", chunks))
			if got := rec.text(EventText); got != numbers(chunks) {
				t.Fatalf("text differs (%d bytes)", len(got))
			}
			MustPrompt(t, e, "/scenario permission")
			if err := e.Err(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestPromptWhileATurnRunsIsRefused(t *testing.T) {
	rec := newRecorder()
	coarse := mockProfile()
	coarse.Provider = "acp" // a provider without the handoff
	e := MustStart(t, coarse, rec)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = e.Prompt(context.Background(), "/scenario stream 100 10")
	}()
	rec.waitFor(t, "the first chunk", func(ev []Event) bool { return len(ev) > 0 })
	if _, err := e.Prompt(context.Background(), "again"); !errors.Is(err, ErrTurnInProgress) {
		t.Fatalf("err = %v, want ErrTurnInProgress", err)
	}
	_ = e.Cancel(context.Background())
	<-done
}

// An adapter that attests the handoff takes a person's next prompt while a
// held-open turn waits for its background work: the successor answers
// first, and the held turn ends when the work has finished.
func TestHandoffPromptRunsWhileAHeldTurnIsOpen(t *testing.T) {
	rec := newRecorder()
	e := MustStart(t, mockProfile(), rec)
	held := make(chan StopReason, 1)
	go func() {
		stop, _ := e.Prompt(context.Background(), "/scenario background-held 1 1500")
		held <- stop
	}()
	rec.waitFor(t, "the foreground's yield", func(ev []Event) bool {
		for _, e := range ev {
			if e.Kind == EventUsage && e.Usage.Origin == OriginHuman {
				return true
			}
		}
		return false
	})
	stop, err := e.Prompt(context.Background(), "successor")
	if err != nil || stop != StopEndTurn {
		t.Fatalf("successor: %v, %v", stop, err)
	}
	select {
	case <-held:
		t.Fatal("the held turn ended before its background work")
	default:
	}
	if stop := <-held; stop != StopEndTurn {
		t.Fatalf("held turn ended with %q", stop)
	}
	if !strings.Contains(rec.text(EventText), "successor") {
		t.Fatalf("no answer to the successor in %q", rec.text(EventText))
	}
}

// niceness reads the nice value of every thread of pid from /proc.
func niceness(t *testing.T, pid int) []int {
	t.Helper()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, task := range tasks {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, task.Name()))
		if err != nil {
			continue // the thread ended meanwhile
		}
		// Fields after the command's closing parenthesis; nice is the 19th
		// field of the line, the 17th after it.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		n, err := strconv.Atoi(fields[16])
		if err != nil {
			t.Fatalf("nice of %d/%s: %v", pid, task.Name(), err)
		}
		out = append(out, n)
	}
	return out
}

func TestNiceLowersThePriorityOfTheAgentAndWhatItStarts(t *testing.T) {
	rec := newRecorder()
	e, err := Start(context.Background(), Options{
		Profile: mockProfile(), Cwd: t.TempDir(), Handler: rec, Nice: 7,
		StartTimeout: 10 * time.Second, KillGrace: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	MustPrompt(t, e, "/scenario background 1 60000")
	for _, pid := range []int{e.Pid(), launchedPid(t, rec.snapshot())} {
		for _, n := range niceness(t, pid) {
			if n != 7 {
				t.Fatalf("process %d has a thread at nice %d, want 7: %v", pid, n, niceness(t, pid))
			}
		}
	}
	if _, err := Start(context.Background(), Options{Profile: mockProfile(), Cwd: t.TempDir(), Handler: rec, Nice: 20}); err == nil {
		t.Fatal("Start accepted nice 20")
	}
}
