package server_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server"
	"github.com/herd-dev/herd/server/agent/anthropictest"
	"github.com/herd-dev/herd/server/agent/claudetest"
	"github.com/herd-dev/herd/server/gitcli/gittest"
)

// These tests run the real Claude Code, through herd's pinned ACP adapter,
// against a scripted model endpoint: herd as its users run it, offline.

// claudeProfileID is the agents-file profile of the real Claude adapter.
const claudeProfileID = "real-claude"

// startClaudeServer starts a server whose agents file adds the real
// Claude adapter, talking to a scripted endpoint that answers with script,
// in the permission mode mode.
func startClaudeServer(t *testing.T, script anthropictest.Script, mode claudetest.Mode, mutate func(*server.Config, *server.Options)) (*server.Server, *anthropictest.Server) {
	t.Helper()
	claudetest.Require(t)
	endpoint, err := anthropictest.Start(script)
	require.NoError(t, err)
	t.Cleanup(func() { _ = endpoint.Close() })
	file := agentsFile(t, claudeProfileID, claudetest.Profile(t, endpoint.URL, mode))
	srv := MustStart(t, func(c *server.Config, o *server.Options) {
		c.AgentsFile = file
		if mutate != nil {
			mutate(c, o)
		}
	})
	return srv, endpoint
}

// newClaudeSession creates a task (on repo, when not empty) and a session
// of the real Claude adapter that c follows, ready for a prompt.
func newClaudeSession(t *testing.T, c *wsClient, repo string) (task, session map[string]any) {
	t.Helper()
	ws := c.call("workspace.create", map[string]any{"name": "W"})
	create := map[string]any{"workspace_id": ws["id"], "title": "Real Claude"}
	if repo != "" {
		create["repositories"] = []any{map[string]any{"path": repo}}
	}
	task = c.call("task.create", create)
	session = c.call("session.create", map[string]any{"task_id": task["id"], "agent_profile_id": claudeProfileID})
	require.Equal(t, true, c.call("session.subscribe", map[string]any{"session_id": session["id"]})["joined"])
	awaitState(t, c, session["id"], "WAITING_FOR_INPUT")
	return task, session
}

// scripted answers side requests (titles, suggestions) and otherwise the
// turn chosen by the person's newest prompt.
func scripted(turns func(req *anthropictest.Request, last string) anthropictest.Reply) anthropictest.Script {
	return func(req *anthropictest.Request) anthropictest.Reply {
		last := req.LastUserText()
		if !req.IsMain() || strings.HasPrefix(last, "[SUGGESTION MODE") {
			return anthropictest.Say("Scripted title")
		}
		return turns(req, last)
	}
}

func TestRealClaudePromptStreamsIntoTheTranscript(t *testing.T) {
	srv, endpoint := startClaudeServer(t, scripted(func(req *anthropictest.Request, last string) anthropictest.Reply {
		return anthropictest.Reply{Blocks: []anthropictest.Block{
			anthropictest.Thinking("A greeting is wanted."),
			anthropictest.Text("Hello from the scripted model, in several chunks."),
		}, Chunk: 7}
	}), claudetest.ModeAsk, nil)
	c := MustDial(t, srv, nil).patient()
	_, session := newClaudeSession(t, c, "")
	c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "s-1", "content": "Say hello"})
	require.Equal(t, "end_turn", awaitSettled(t, c))
	got := transcript(t, c, session["id"])
	assert.Contains(t, got, "user:Say hello")
	assert.Contains(t, got, "thinking:A greeting is wanted.")
	assert.Contains(t, got, "agent:Hello from the scripted model, in several chunks.")
	var saw bool
	for _, r := range endpoint.Requests() {
		saw = saw || (r.IsMain() && r.LastUserText() == "Say hello")
	}
	assert.True(t, saw, "the model was asked the person's prompt")
}

func TestRealClaudeWriteInTheWorktreeMovesTheRowsGitTotals(t *testing.T) {
	var worktree string
	var mu sync.Mutex
	srv, _ := startClaudeServer(t, scripted(func(req *anthropictest.Request, last string) anthropictest.Reply {
		if req.Answered() {
			return anthropictest.Say("I wrote the notes.")
		}
		mu.Lock()
		defer mu.Unlock()
		return anthropictest.Reply{Blocks: []anthropictest.Block{anthropictest.ToolUse("toolu_write_1", "Write",
			map[string]any{"file_path": filepath.Join(worktree, "notes.md"), "content": "one\ntwo\nthree\n"})}}
	}), claudetest.ModeBypass, nil)
	c := MustDial(t, srv, nil).patient()
	task, session := newClaudeSession(t, c, gittest.Init(t))
	mu.Lock()
	worktree = task["repositories"].([]any)[0].(map[string]any)["worktree_path"].(string)
	mu.Unlock()
	feed := follower(t, srv, task["workspace_id"])
	c.call("session.focus", map[string]any{"session_id": session["id"]})
	c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "w-1", "content": "Write the notes"})
	require.Equal(t, "end_turn", awaitSettled(t, c))
	assert.FileExists(t, filepath.Join(worktree, "notes.md"))
	sum := awaitSummary(t, feed, task["id"], func(s map[string]any) bool {
		git, _ := s["git"].(map[string]any)
		return git != nil && git["changed_files"] == 1.0
	})
	assert.Equal(t, 3.0, sum["git"].(map[string]any)["additions"])
	assert.Contains(t, transcript(t, c, session["id"]), "agent:I wrote the notes.")
}

// A Bash call in the ask mode waits for herd's permission flow: allowed, it
// runs; denied, it does not, and the model is told so.
func TestRealClaudeBashRunsOnlyWhenAllowed(t *testing.T) {
	var worktree string
	var mu sync.Mutex
	srv, endpoint := startClaudeServer(t, scripted(func(req *anthropictest.Request, last string) anthropictest.Reply {
		if req.Answered() {
			return anthropictest.Say("Finished: " + last)
		}
		mu.Lock()
		defer mu.Unlock()
		file := filepath.Join(worktree, last+".txt")
		return anthropictest.Reply{Blocks: []anthropictest.Block{anthropictest.ToolUse("toolu_bash_"+last, "Bash",
			map[string]any{"command": "echo ran > " + file, "description": "Write " + last + ".txt"})}}
	}), claudetest.ModeAsk, nil)
	c := MustDial(t, srv, nil).patient()
	task, session := newClaudeSession(t, c, gittest.Init(t))
	mu.Lock()
	worktree = task["repositories"].([]any)[0].(map[string]any)["worktree_path"].(string)
	mu.Unlock()

	for _, tc := range []struct {
		prompt, kind string
		runs         bool
	}{{"allowed", "allow_once", true}, {"denied", "reject_once", false}} {
		c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": tc.prompt, "content": tc.prompt})
		var request map[string]any
		for request == nil {
			if m := c.awaitNotification("session.message.added"); m["type"] == "permission_request" {
				request = m
			}
		}
		assert.NoFileExists(t, filepath.Join(worktree, tc.prompt+".txt"), "nothing runs before the answer")
		var option any
		for _, o := range request["metadata"].(map[string]any)["options"].([]any) {
			if o.(map[string]any)["kind"] == tc.kind {
				option = o.(map[string]any)["option_id"]
			}
		}
		require.NotNil(t, option, "Claude offers a %s option: %v", tc.kind, request["metadata"])
		c.call("permission.respond", map[string]any{"session_id": session["id"], "pending_id": request["pending_id"], "option_id": option})
		require.Equal(t, "end_turn", awaitSettled(t, c))
		if tc.runs {
			assert.FileExists(t, filepath.Join(worktree, tc.prompt+".txt"))
		} else {
			assert.NoFileExists(t, filepath.Join(worktree, tc.prompt+".txt"))
		}
	}
	var denied *anthropictest.ContentBlock
	for _, r := range endpoint.Requests() {
		if res, ok := r.Result("toolu_bash_denied"); ok {
			denied = &res
		}
	}
	require.NotNil(t, denied, "the model got the denied call's result")
	assert.True(t, denied.IsError, "a denied call is an error result: %s", denied.ResultText())
}

// A background subagent of the real Claude counts while its turn is held
// open and stops counting when the turn ends. With the handoff experiment
// on the row shows background work, and a new prompt still queues: Claude's
// handoff is not attested (see server/agent/claude.go).
func TestRealClaudeSubagentCountsWhileItsTurnIsHeld(t *testing.T) {
	release := make(chan struct{})
	srv, _ := startClaudeServer(t, scripted(func(req *anthropictest.Request, last string) anthropictest.Reply {
		switch {
		case strings.HasPrefix(last, "CHILD"):
			select { // the subagent works until the test has seen it counted
			case <-release:
			case <-req.Context().Done():
			}
			return anthropictest.Say("The child looked around.")
		case req.Notified():
			return anthropictest.Say("The subagent finished.")
		case req.Answered():
			return anthropictest.Say("A subagent is looking around.")
		case last == "later":
			return anthropictest.Say("Answer to the later prompt.")
		}
		return anthropictest.Reply{Blocks: []anthropictest.Block{anthropictest.ToolUse("toolu_agent_1", "Agent",
			map[string]any{"description": "Look around", "prompt": "CHILD: look around", "subagent_type": "general-purpose"})}}
	}), claudetest.ModeBypass, func(c *server.Config, _ *server.Options) { c.ClaudeBackgroundPromptHandoff = true })
	c := MustDial(t, srv, nil).patient()
	task, session := newClaudeSession(t, c, "")
	feed := follower(t, srv, task["workspace_id"])
	c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "a-1", "content": "Look around with a subagent"})
	awaitSessionEvent(t, c, "session.activity_changed", func(n map[string]any) bool {
		return n["active_subagent_count"] == 1.0 && n["foreground_activity"] == "background" && n["state"] == "RUNNING"
	})
	awaitSummary(t, feed, task["id"], func(s map[string]any) bool {
		return s["active_subagent_count"] == 1.0 && s["foreground_activity"] == "background"
	})
	added := c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "a-2", "content": "later"})
	assert.Equal(t, "queued", added["outcome"], "no handoff for Claude: the prompt waits for the held turn")

	close(release)
	require.Equal(t, "end_turn", awaitSettled(t, c))
	require.Equal(t, "end_turn", awaitSettled(t, c), "the queued prompt runs after the held turn")
	sum := awaitSummary(t, feed, task["id"], func(s map[string]any) bool {
		p, _ := s["primary_session"].(map[string]any)
		return s["active_subagent_count"] == 0.0 && p != nil && p["state"] == "WAITING_FOR_INPUT"
	})
	assert.Nil(t, sum["foreground_activity"])
	got := transcript(t, c, session["id"])
	assert.Contains(t, got, "agent:The subagent finished.")
	assert.Contains(t, got, "agent:Answer to the later prompt.")
}

// The mock agent replays the frames the real Claude adapter sent for a
// subagent turn, and herd reads them exactly as it reads Claude's.
func TestRecordedClaudeSubagentReplayCountsLikeTheRealOne(t *testing.T) {
	srv := MustStart(t, func(c *server.Config, _ *server.Options) { c.ClaudeBackgroundPromptHandoff = true })
	c := MustDial(t, srv, nil).patient()
	task, session := newTaskSession(t, c)
	feed := follower(t, srv, task["workspace_id"])
	c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "r-1", "content": "/scenario claude-replay subagent 1000"})
	awaitSessionEvent(t, c, "session.activity_changed", func(n map[string]any) bool {
		return n["active_subagent_count"] == 1.0 && n["foreground_activity"] == "background"
	})
	require.Equal(t, "end_turn", awaitSettled(t, c))
	awaitSummary(t, feed, task["id"], func(s map[string]any) bool { return s["active_subagent_count"] == 0.0 })
}

// BenchmarkRealClaudeFirstChunkToWebSocket measures, per turn of the real
// Claude Code, the time from the scripted model endpoint writing the
// answer's first delta to the first byte of that text arriving on a
// session subscriber's WebSocket: Claude Code's own streaming, the
// adapter, and herd (runtime, coalescer, store, gateway).
func BenchmarkRealClaudeFirstChunkToWebSocket(b *testing.B) {
	claudetest.Require(b)
	endpoint, err := anthropictest.Start(func(req *anthropictest.Request) anthropictest.Reply {
		last := req.LastUserText()
		if !req.IsMain() || strings.HasPrefix(last, "[SUGGESTION MODE") {
			return anthropictest.Say("Scripted title")
		}
		return anthropictest.Reply{Blocks: []anthropictest.Block{anthropictest.Text("answer to " + last + ", streamed in small chunks")}, Chunk: 6}
	})
	require.NoError(b, err)
	defer endpoint.Close()
	file := agentsFile(b, claudeProfileID, claudetest.Profile(b, endpoint.URL, claudetest.ModeAsk))
	srv := MustStart(b, func(c *server.Config, _ *server.Options) { c.AgentsFile = file })
	c := MustDial(b, srv, nil).patient()
	ws := c.call("workspace.create", map[string]any{"name": "W"})
	task := c.call("task.create", map[string]any{"workspace_id": ws["id"], "title": "Latency"})
	session := c.call("session.create", map[string]any{"task_id": task["id"], "agent_profile_id": claudeProfileID})
	c.call("session.subscribe", map[string]any{"session_id": session["id"]})
	for {
		if n := c.awaitNotification("session.state_changed"); n["state"] == "WAITING_FOR_INPUT" {
			break
		}
	}

	var added []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		prompt := fmt.Sprintf("turn %d", i)
		c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": prompt, "content": prompt})
		var arrived time.Time
		for arrived.IsZero() {
			f := c.next()
			if f["action"] != "session.message.added" && f["action"] != "session.message.updated" {
				continue
			}
			if m, _ := f["payload"].(map[string]any); m["type"] == "agent" && strings.HasPrefix(fmt.Sprint(m["content"]), "answer to "+prompt) {
				arrived = time.Now()
			}
		}
		c.awaitNotification("session.turn.settled")
		var first time.Time
		for _, r := range endpoint.Requests() {
			if r.IsMain() && r.LastUserText() == prompt {
				first, _ = endpoint.FirstByte(r.N)
			}
		}
		require.False(b, first.IsZero(), "the endpoint streamed no answer to %q", prompt)
		added = append(added, float64(arrived.Sub(first).Microseconds())/1000)
	}
	b.StopTimer()
	sort.Float64s(added)
	b.ReportMetric(added[len(added)/2], "ms-median")
	b.ReportMetric(added[len(added)-1], "ms-max")
}

// killAgentsTalkingTo kills -9 the agent processes whose environment
// points them at the model endpoint url, and reports how many it killed.
func killAgentsTalkingTo(t *testing.T, url string) int {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*/environ")
	require.NoError(t, err)
	killed := 0
	for _, env := range procs {
		data, err := os.ReadFile(env)
		if err != nil || !strings.Contains(string(data), "ANTHROPIC_BASE_URL="+url+"\x00") {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(filepath.Dir(env), "cmdline"))
		if !strings.Contains(string(cmdline), "claude-agent-acp") {
			continue
		}
		var pid int
		_, err = fmt.Sscanf(filepath.Base(filepath.Dir(env)), "%d", &pid)
		require.NoError(t, err)
		if p, err := os.FindProcess(pid); err == nil && p.Kill() == nil {
			killed++
		}
	}
	return killed
}

// The real Claude adapter killed between turns: the session keeps waiting,
// says what happened, and the next prompt continues Claude's own session,
// which the model sees as the earlier turn in its conversation.
func TestRealClaudeKilledWhileIdleContinuesItsSession(t *testing.T) {
	srv, endpoint := startClaudeServer(t, scripted(func(req *anthropictest.Request, last string) anthropictest.Reply {
		return anthropictest.Say("Noted: " + last)
	}), claudetest.ModeAsk, nil)
	c := MustDial(t, srv, nil).patient()
	_, session := newClaudeSession(t, c, "")
	c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "k-1", "content": "remember the pear"})
	require.Equal(t, "end_turn", awaitSettled(t, c))

	require.Equal(t, 1, killAgentsTalkingTo(t, endpoint.URL), "one adapter process runs the session")
	awaitSessionEvent(t, c, "session.message.added", func(m map[string]any) bool {
		return m["type"] == "status" && strings.Contains(fmt.Sprint(m["content"]), "The next prompt starts it again")
	})
	c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "k-2", "content": "what did I ask you to remember?"})
	require.Equal(t, "end_turn", awaitSettled(t, c))
	var texts []string
	for _, r := range endpoint.Requests() {
		if r.IsMain() && r.LastUserText() == "what did I ask you to remember?" {
			texts = r.UserTexts()
		}
	}
	assert.Contains(t, texts, "remember the pear", "the model was shown the turn from before the kill")
	got := transcript(t, c, session["id"])
	assert.Contains(t, got, "agent:Noted: what did I ask you to remember?")
	for _, line := range got {
		assert.NotContains(t, line, "Context not restored")
	}
}
