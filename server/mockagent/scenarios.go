package mockagent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/agent/claudeframes"
)

// errWithdrawn ends a turn whose question the client withdrew; the turn
// reports stop reason cancelled.
var errWithdrawn = errors.New("request withdrawn by the client")

// sendAll sends updates in order on the turn's context.
func (t *turn) sendAll(updates ...acp.SessionUpdate) error {
	for _, u := range updates {
		if err := t.send(t.ctx, u); err != nil {
			return err
		}
	}
	return nil
}

// tool reads a file in three frames under a two-step plan.
func (t *turn) tool() error {
	plan := func(first acp.PlanEntryStatus) acp.SessionUpdate {
		return acp.UpdatePlan(
			acp.PlanEntry{Content: "Read README.md", Priority: acp.PlanEntryPriorityHigh, Status: first},
			acp.PlanEntry{Content: "Summarise it", Priority: acp.PlanEntryPriorityMedium, Status: acp.PlanEntryStatusPending},
		)
	}
	id := acp.ToolCallId(t.msg + "-read")
	err := t.sendAll(
		plan(acp.PlanEntryStatusInProgress),
		acp.StartToolCall(id, "Read README.md", acp.WithStartKind(acp.ToolKindRead),
			acp.WithStartStatus(acp.ToolCallStatusPending), acp.WithStartRawInput(map[string]any{"path": "README.md"}),
			acp.WithStartLocations([]acp.ToolCallLocation{{Path: filepath.Join(t.cwd, "README.md")}})),
		acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusInProgress)),
		acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusCompleted),
			acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock("# README\n42 lines"))})),
		plan(acp.PlanEntryStatusCompleted),
	)
	if err != nil {
		return err
	}
	return t.say("README.md has 42 lines.")
}

// permission asks before an edit; the answer decides the text. With busy,
// an unrelated read tool call runs while the request waits.
func (t *turn) permission(busy bool) error {
	id := acp.ToolCallId(t.msg + "-edit")
	title := "Edit notes.txt"
	err := t.send(t.ctx, acp.StartToolCall(id, title, acp.WithStartKind(acp.ToolKindEdit),
		acp.WithStartStatus(acp.ToolCallStatusPending)))
	if err != nil {
		return err
	}
	if busy {
		// The read starts once the request has been sent; the SDK orders
		// the frames on the wire.
		done := make(chan struct{})
		defer func() { <-done }()
		go func() {
			defer close(done)
			if pause(t.ctx, 100*time.Millisecond) != nil {
				return
			}
			read := acp.ToolCallId(t.msg + "-read")
			if t.send(t.ctx, acp.StartToolCall(read, "Read README.md", acp.WithStartKind(acp.ToolKindRead),
				acp.WithStartStatus(acp.ToolCallStatusInProgress))) == nil {
				_ = t.send(t.ctx, acp.UpdateToolCall(read, acp.WithUpdateStatus(acp.ToolCallStatusCompleted)))
			}
		}()
	}
	resp, err := t.m.conn.RequestPermission(t.ctx, acp.RequestPermissionRequest{
		SessionId: t.sid,
		ToolCall:  acp.ToolCallUpdate{ToolCallId: id, Title: &title, Kind: acp.Ptr(acp.ToolKindEdit)},
		Options: []acp.PermissionOption{
			{OptionId: "allow", Name: "Allow", Kind: acp.PermissionOptionKindAllowOnce},
			{OptionId: "reject", Name: "Reject", Kind: acp.PermissionOptionKindRejectOnce},
		},
	})
	if err != nil {
		return err
	}
	status, text := acp.ToolCallStatusFailed, "denied"
	switch {
	case resp.Outcome.Cancelled != nil:
		return errWithdrawn
	case resp.Outcome.Selected != nil && resp.Outcome.Selected.OptionId == "allow":
		status, text = acp.ToolCallStatusCompleted, "allowed"
	}
	if err := t.send(t.ctx, acp.UpdateToolCall(id, acp.WithUpdateStatus(status))); err != nil {
		return err
	}
	return t.say(text)
}

// clarify asks the person a question through agent.ClarifyMethod.
func (t *turn) clarify() error {
	if !t.m.clarify.Load() {
		return t.say("this client does not offer " + agent.ClarifyMethod)
	}
	raw, err := t.m.conn.CallExtension(t.ctx, agent.ClarifyMethod, agent.ClarifyParams{
		SessionID: string(t.sid), Question: "Which branch should I use?", PendingID: t.msg + "-question",
	})
	if err != nil {
		return err
	}
	var r agent.ClarifyResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return acp.NewInternalError(map[string]any{"error": "decode clarify result: " + err.Error()})
	}
	if r.Cancelled {
		return errWithdrawn
	}
	return t.say("answer: " + r.Answer)
}

// write puts text into file, which must stay inside the session cwd.
func (t *turn) write(file, text string) error {
	if file == "" {
		return acp.NewInvalidParams(map[string]any{"error": "usage: /scenario write FILE TEXT"})
	}
	id := acp.ToolCallId(t.msg + "-write")
	path := filepath.Join(t.cwd, file)
	err := t.send(t.ctx, acp.StartToolCall(id, "Write "+file, acp.WithStartKind(acp.ToolKindEdit),
		acp.WithStartStatus(acp.ToolCallStatusInProgress), acp.WithStartLocations([]acp.ToolCallLocation{{Path: path}}),
		acp.WithStartRawInput(map[string]any{"file_path": file, "content": text})))
	if err != nil {
		return err
	}
	if err := writeInside(t.cwd, file, text); err != nil {
		_ = t.send(t.ctx, acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusFailed),
			acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(err.Error()))})))
		return acp.NewInternalError(map[string]any{"error": err.Error()})
	}
	err = t.send(t.ctx, acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusCompleted),
		acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolDiffContent(path, text)})))
	if err != nil {
		return err
	}
	return t.say(fmt.Sprintf("wrote %d bytes to %s", len(text), file))
}

// writeInside writes file below dir, refusing paths that leave it.
func writeInside(dir, file, text string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	if d := filepath.Dir(file); d != "." {
		if err := root.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	return root.WriteFile(file, []byte(text), 0o644)
}

// backgroundWork plays `background K [MS]` the way Claude's adapter reports
// detached work, with the lifecycle in each tool call's `_meta.claudeCode`
// (agent.Provenance). In the turn: K Task subagents, one Bash shell with
// run_in_background (a real `sleep` child in the agent's process group,
// its pid in the launch result) and one Monitor watch, each a tool call
// with lifecycle "started" whose launch card then completes at once; then a
// usage_update whose `_meta["_claude/origin"].kind` is "human" (the
// foreground yields) and the end of the turn. MS ms later (default 200),
// outside any turn: two Monitor progress frames; per subagent a child Read
// call with parentToolUseId and a lifecycle "finished" frame; the shell's
// "finished" frame once its child is stopped; the Monitor's; the text
// "Background work finished." and the task-notification usage_update that
// ends the cycle which said it.
// With held, the turn itself plays the completion and only then answers
// the prompt request, as Claude holds a subagent turn open; the foreground
// has yielded at the human-origin usage_update all the same.
func (t *turn) backgroundWork(args []string, held bool) error {
	n, err := intArgs(args, 1, 2)
	if err != nil {
		return err
	}
	after := 200 * time.Millisecond
	if len(args) == 2 {
		after = time.Duration(n[1]) * time.Millisecond
	}
	if err := t.say(fmt.Sprintf("Starting %d subagents, a background shell and a monitor.", n[0])); err != nil {
		return err
	}
	sleep := exec.Command("sleep", "3600")
	if err := sleep.Start(); err != nil {
		return acp.NewInternalError(map[string]any{"error": "start background shell: " + err.Error()})
	}
	w := bgWork{
		shell: bgTask{id: t.msg + "-bash", title: "sleep 3600", kind: acp.ToolKindExecute, process: sleep,
			input: map[string]any{"command": "sleep 3600", "run_in_background": true},
			prov:  agent.Provenance{ToolName: "Bash", BackgroundTaskID: t.msg + "-shell", BackgroundKind: agent.BackgroundShell}},
		monitor: bgTask{id: t.msg + "-monitor", title: "Monitor: build", kind: acp.ToolKindOther, input: map[string]any{"watch": "build"},
			prov: agent.Provenance{ToolName: "Monitor", BackgroundTaskID: t.msg + "-watch", BackgroundKind: agent.BackgroundMonitor}},
	}
	for i := 1; i <= n[0]; i++ {
		w.subagents = append(w.subagents, bgTask{id: fmt.Sprintf("%s-task-%d", t.msg, i), title: "Task: subagent " + strconv.Itoa(i),
			kind: acp.ToolKindThink, input: map[string]any{"subagent_type": "general-purpose", "run_in_background": true},
			prov: agent.Provenance{ToolName: "Task", BackgroundTaskID: fmt.Sprintf("%s-agent-%d", t.msg, i), BackgroundKind: agent.BackgroundSubagent}})
	}
	var frames []acp.SessionUpdate
	for _, task := range append(w.subagents, w.shell, w.monitor) {
		frames = append(frames, task.launch()...)
	}
	if err := t.sendAll(append(frames, cycleEnd(agent.OriginHuman))...); err != nil {
		stopProcess(sleep)
		return err
	}
	if held {
		t.held = true
		t.finishBackground(w, after)
		return nil
	}
	if !t.m.goBackground(func() { t.finishBackground(w, after) }) {
		stopProcess(sleep)
	}
	return nil
}

// bgWork is what one background scenario launched.
type bgWork struct {
	subagents      []bgTask
	shell, monitor bgTask
}

// finishBackground emits the completion frames of detached work.
func (t *turn) finishBackground(w bgWork, after time.Duration) {
	defer stopProcess(w.shell.process)
	ctx := t.m.ctx
	if pause(ctx, after) != nil {
		return
	}
	var frames []acp.SessionUpdate
	for i := 1; i <= 2; i++ {
		frames = append(frames, w.monitor.update("", fmt.Sprintf("build event %d", i)))
	}
	for _, task := range w.subagents {
		child := acp.StartToolCall(acp.ToolCallId(task.id+"-read"), "Read notes.md",
			acp.WithStartKind(acp.ToolKindRead), acp.WithStartStatus(acp.ToolCallStatusCompleted))
		child.ToolCall.Meta = agent.Provenance{ToolName: "Read", ParentToolUseID: task.id}.Meta()
		frames = append(frames, child, task.update(agent.LifecycleFinished, map[string]any{"status": "completed"}))
	}
	stopProcess(w.shell.process)
	msg := t.msg + "-notification"
	frames = append(frames,
		w.shell.update(agent.LifecycleFinished, map[string]any{"exit": w.shell.process.ProcessState.String()}),
		w.monitor.update(agent.LifecycleFinished, "watch ended"),
		acp.SessionUpdate{AgentMessageChunk: &acp.SessionUpdateAgentMessageChunk{
			Content: acp.TextBlock("Background work finished."), MessageId: &msg,
		}},
		cycleEnd(agent.OriginTaskNotification),
	)
	for _, u := range frames {
		if t.send(ctx, u) != nil {
			return
		}
	}
}

// bgTask is one background workload of the background scenario.
type bgTask struct {
	id, title string
	kind      acp.ToolKind
	input     map[string]any
	prov      agent.Provenance
	process   *exec.Cmd // the shell's child; nil for other kinds
}

// launch returns the workload's tool call (lifecycle started) and the
// completion of its launch card.
func (w bgTask) launch() []acp.SessionUpdate {
	prov := w.prov
	prov.Lifecycle = agent.LifecycleStarted
	start := acp.StartToolCall(acp.ToolCallId(w.id), w.title, acp.WithStartKind(w.kind),
		acp.WithStartStatus(acp.ToolCallStatusInProgress), acp.WithStartRawInput(w.input))
	start.ToolCall.Meta = prov.Meta()
	launched := map[string]any{"status": "async_launched", "backgroundTaskId": w.prov.BackgroundTaskID}
	if w.process != nil {
		launched["pid"] = w.process.Process.Pid
	}
	return []acp.SessionUpdate{start, w.update("", launched)}
}

// update is a frame of the workload's tool call carrying output, marked
// with lifecycle when not empty. Every frame reports the call completed:
// the launch card completes at launch; later frames add output and the
// workload's lifecycle, which is separate from the card's status.
func (w bgTask) update(lifecycle agent.Lifecycle, output any) acp.SessionUpdate {
	prov := w.prov
	prov.Lifecycle = lifecycle
	u := acp.UpdateToolCall(acp.ToolCallId(w.id), acp.WithUpdateStatus(acp.ToolCallStatusCompleted), acp.WithUpdateRawOutput(output))
	u.ToolCallUpdate.Meta = prov.Meta()
	return u
}

// cycleEnd is a usage_update closing a model cycle of the given origin.
func cycleEnd(origin string) acp.SessionUpdate {
	return acp.SessionUpdate{UsageUpdate: &acp.SessionUsageUpdate{Used: 1200, Size: 200000, Meta: agent.OriginMeta(origin)}}
}

// stopProcess kills and reaps a background process once.
func stopProcess(cmd *exec.Cmd) {
	if cmd.ProcessState == nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
}

// claudeReplay plays `claude-replay NAME [MS]`: the updates of the prompt
// turn recorded from the real Claude adapter (claudeframes.Load), in their
// recorded order and shape, under this session's id. MS ms (default 0) pass
// after the usage_update that ends the human-origin cycle, with the prompt
// still open, as Claude holds a turn whose subagents still run.
func (t *turn) claudeReplay(args []string) error {
	if len(args) < 1 || len(args) > 2 {
		return acp.NewInvalidParams(map[string]any{"error": "claude-replay takes a recording name and an optional pause in ms"})
	}
	var hold time.Duration
	if len(args) == 2 {
		ms, err := strconv.Atoi(args[1])
		if err != nil || ms < 0 {
			return acp.NewInvalidParams(map[string]any{"error": "claude-replay: bad pause " + strconv.Quote(args[1])})
		}
		hold = time.Duration(ms) * time.Millisecond
	}
	rec, err := claudeframes.Load(args[0])
	if err != nil {
		return acp.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	updates, _, _, err := rec.Prompt()
	if err != nil {
		return acp.NewInternalError(map[string]any{"error": err.Error()})
	}
	for _, raw := range updates {
		var note acp.SessionNotification
		if err := json.Unmarshal(raw, &note); err != nil {
			return acp.NewInternalError(map[string]any{"error": "decode recorded update: " + err.Error()})
		}
		if err := t.send(t.ctx, note.Update); err != nil {
			return err
		}
		if u := note.Update.UsageUpdate; u != nil && hold > 0 && originKind(u.Meta) == agent.OriginHuman {
			if err := pause(t.ctx, hold); err != nil {
				return err
			}
		}
	}
	return nil
}

// originKind reads a usage_update's `_meta["_claude/origin"].kind`.
func originKind(meta map[string]any) string {
	o, _ := meta["_claude/origin"].(map[string]any)
	kind, _ := o["kind"].(string)
	return kind
}
