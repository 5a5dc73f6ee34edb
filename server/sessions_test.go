package server_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server"
	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/mockagent/mocktest"
)

// newTaskSession creates a workspace, a task and a mock session, opens the
// session on c and waits until it waits for input.
func newTaskSession(t *testing.T, c *wsClient) (task, session map[string]any) {
	t.Helper()
	ws := c.call("workspace.create", map[string]any{"name": "W"})
	task = c.call("task.create", map[string]any{"workspace_id": ws["id"], "title": "agent task"})
	session = c.call("session.create", map[string]any{"task_id": task["id"], "agent_profile_id": "mock"})
	require.Equal(t, "CREATED", session["state"])
	sub := c.call("session.subscribe", map[string]any{"session_id": session["id"]})
	require.Equal(t, true, sub["joined"])
	awaitState(t, c, session["id"], "WAITING_FOR_INPUT")
	return task, session
}

// awaitState waits for a session.state_changed to state (or for the
// snapshot to already show it).
func awaitState(t testing.TB, c *wsClient, sessionID any, state string) {
	t.Helper()
	for {
		n := c.awaitNotification("session.state_changed")
		if n["session_id"] == sessionID && n["state"] == state {
			return
		}
		require.NotEqual(t, "FAILED", n["state"], "session failed: %v", n)
	}
}

// awaitSettled waits for the next session.turn.settled and returns its
// outcome.
func awaitSettled(t testing.TB, c *wsClient) string {
	t.Helper()
	return c.awaitNotification("session.turn.settled")["outcome"].(string)
}

// transcript lists a session's messages as "type:content" lines.
func transcript(t *testing.T, c *wsClient, sessionID any) []string {
	t.Helper()
	page := c.call("message.list", map[string]any{"session_id": sessionID})
	var out []string
	for _, m := range page["messages"].([]any) {
		msg := m.(map[string]any)
		out = append(out, fmt.Sprintf("%s:%s", msg["type"], msg["content"]))
	}
	return out
}

func TestSessionEchoesAPrompt(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	_, session := newTaskSession(t, c)

	added := c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "m-1", "content": "hello herd"})
	require.Equal(t, "dispatched", added["outcome"])
	require.Equal(t, "end_turn", awaitSettled(t, c))
	require.Equal(t, []string{"user:hello herd", "agent:hello herd"}, transcript(t, c, session["id"]))
}

func TestStreamArrivesByteExact(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	_, session := newTaskSession(t, c)
	c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "s-1", "content": "/scenario stream 2000"})
	require.Equal(t, "end_turn", awaitSettled(t, c))
	var want strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&want, "%d ", i)
	}
	lines := transcript(t, c, session["id"])
	require.Equal(t, "agent:"+want.String(), lines[len(lines)-1])
}

// Concurrent sends of one client_message_id from two connections store one
// message and dispatch one prompt.
func TestDuplicateSendsDispatchOnce(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	_, session := newTaskSession(t, c)
	other := MustDial(t, srv, nil)

	var wg sync.WaitGroup
	outcomes := make([]string, 2)
	for i, conn := range []*wsClient{c, other} {
		id := conn.send("message.add", map[string]any{"session_id": session["id"], "client_message_id": "dup", "content": "only once"})
		wg.Go(func() {
			reply, _ := conn.awaitReply(id)
			outcomes[i] = reply["payload"].(map[string]any)["outcome"].(string)
		})
	}
	wg.Wait()
	require.ElementsMatch(t, []string{"dispatched", "duplicate"}, outcomes)
	require.Equal(t, "end_turn", awaitSettled(t, c))
	require.Equal(t, []string{"user:only once", "agent:only once"}, transcript(t, c, session["id"]))

	retry := c.call("message.add", map[string]any{"session_id": session["id"], "message_id": "dup", "content": "only once"})
	require.Equal(t, "duplicate", retry["outcome"], "message_id is an alias of client_message_id")
	c.assertQuiet()
}

// A prompt sent while the agent works is queued and dispatched when the
// turn settles.
func TestFollowUpIsQueuedWhileRunning(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	_, session := newTaskSession(t, c)
	c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "q-1", "content": "/scenario sleep 300"})
	awaitState(t, c, session["id"], "RUNNING")
	queued := c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "q-2", "content": "next please"})
	require.Equal(t, "queued", queued["outcome"])
	queue := c.call("message.queue.get", map[string]any{"session_id": session["id"]})
	require.Len(t, queue["queue"], 1)

	require.Equal(t, "end_turn", awaitSettled(t, c))
	for {
		// Once the follow-up is sent, the queue is published empty.
		changed := c.awaitNotification("session.queue.changed")
		if len(changed["queue"].([]any)) == 0 {
			break
		}
	}
	require.Equal(t, "end_turn", awaitSettled(t, c))
	lines := transcript(t, c, session["id"])
	require.Equal(t, []string{"user:next please", "agent:next please"}, lines[len(lines)-2:])
	require.Empty(t, c.call("message.queue.get", map[string]any{"session_id": session["id"]})["queue"])
}

func TestPermissionAnswerDecidesTheTurn(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	_, session := newTaskSession(t, c)
	c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "p-1", "content": "/scenario permission"})
	var request map[string]any
	for request == nil {
		m := c.awaitNotification("session.message.added")
		if m["type"] == "permission_request" {
			request = m
		}
	}
	require.Equal(t, "pending", request["status"])
	options := request["metadata"].(map[string]any)["options"].([]any)
	require.NotEmpty(t, options)
	first := options[0].(map[string]any)["option_id"]

	c.callErr("permission.respond", map[string]any{"session_id": session["id"], "pending_id": "nope", "option_id": first}, "not_found")
	c.callErr("permission.respond", map[string]any{"session_id": session["id"], "pending_id": request["pending_id"], "option_id": "not-an-option"}, "bad_request")
	resolved := c.call("permission.respond", map[string]any{"session_id": session["id"], "pending_id": request["pending_id"], "option_id": first})
	require.Equal(t, "resolved", resolved["status"])
	require.Equal(t, "end_turn", awaitSettled(t, c))
}

func TestCrashedAgentFailsTheSessionAndRefusesPrompts(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	_, session := newTaskSession(t, c)
	c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "x-1", "content": "/scenario crash"})
	awaitState(t, c, session["id"], "RUNNING")
	for {
		n := c.awaitNotification("session.state_changed")
		if n["state"] == "FAILED" {
			break
		}
	}
	sessions := c.call("session.list", map[string]any{"task_id": session["task_id"]})["sessions"].([]any)
	require.NotEmpty(t, sessions[0].(map[string]any)["error_message"])
	c.callErr("message.add", map[string]any{"session_id": session["id"], "client_message_id": "x-2", "content": "hello?"}, "not_promptable")
	retry := c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "x-1", "content": "/scenario crash"})
	require.Equal(t, "duplicate", retry["outcome"], "a retry is a duplicate even after the session failed")
}

func TestSessionSubscribeReplaysOnlyOnJoin(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	_, session := newTaskSession(t, c)
	again := c.call("session.subscribe", map[string]any{"session_id": session["id"]})
	require.Equal(t, map[string]any{"joined": false}, again)
	c.call("session.focus", map[string]any{"session_id": session["id"]})
	c.assertQuiet()

	viewer := MustDial(t, srv, nil)
	first := viewer.call("session.subscribe", map[string]any{"session_id": session["id"]})
	require.Equal(t, true, first["joined"])
	snap := first["snapshot"].(map[string]any)
	require.Equal(t, "WAITING_FOR_INPUT", snap["session"].(map[string]any)["state"])
	viewer.callErr("session.subscribe", map[string]any{"session_id": "missing"}, "not_found")
}

// agentProcesses counts running mock agents started from this test
// binary (mocktest.Profile).
func agentProcesses(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	mock := mocktest.Profile()
	n := 0
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.HasPrefix(string(cmdline), mock.Command+"\x00mock-agent") {
			n++
		}
	}
	return n
}

// Shutting the server down stops every agent, mid-turn or idle: no
// process outlives it.
func TestShutdownLeavesNoAgentProcess(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	_, busy := newTaskSession(t, c)
	c.call("message.add", map[string]any{"session_id": busy["id"], "client_message_id": "long", "content": "/scenario sleep 60000"})
	awaitState(t, c, busy["id"], "RUNNING")
	_, _ = newTaskSession(t, c)
	require.Equal(t, 2, agentProcesses(t))

	require.NoError(t, srv.Shutdown(t.Context()))
	require.Zero(t, agentProcesses(t), "agents outlived the server")
}

// A task row follows its session through the workspace feed alone: a
// connection that never opens the session sees the summary report the
// session running and generating, waiting on a permission, then waiting
// for input.
func TestTaskSummaryFollowsTheSessionWithoutASubscription(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	task, session := newTaskSession(t, c)
	rows := MustDial(t, srv, nil)
	rows.call("workspace.subscribe", map[string]any{"workspace_id": task["workspace_id"]})

	awaitSummary := func(match func(s map[string]any) bool) map[string]any {
		t.Helper()
		for {
			n := rows.awaitNotification("task.status_summary.updated")
			require.Equal(t, task["id"], n["task_id"])
			if s := n["status_summary"].(map[string]any); match(s) {
				return s
			}
		}
	}
	c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "sum-1", "content": "/scenario permission"})
	// Summaries are projected a few tens of milliseconds after their
	// sources change, so RUNNING and the request may arrive as one.
	asking := awaitSummary(func(s map[string]any) bool { return s["pending_action"] == "permission" })
	require.Equal(t, map[string]any{"id": session["id"], "state": "RUNNING"}, asking["primary_session"])
	require.Equal(t, "generating", asking["foreground_activity"])

	var request map[string]any
	for request == nil {
		if m := c.awaitNotification("session.message.added"); m["type"] == "permission_request" {
			request = m
		}
	}
	option := request["metadata"].(map[string]any)["options"].([]any)[0].(map[string]any)["option_id"]
	c.call("permission.respond", map[string]any{"session_id": session["id"], "pending_id": request["pending_id"], "option_id": option})
	settled := awaitSummary(func(s map[string]any) bool {
		return s["primary_session"].(map[string]any)["state"] == "WAITING_FOR_INPUT"
	})
	require.NotContains(t, settled, "pending_action")
	require.NotContains(t, settled, "foreground_activity")
}

// Profiles from --agents-file are listed and start sessions; a bad file
// stops the server from starting, naming the flag.
func TestAgentsFileAddsProfiles(t *testing.T) {
	mock := mocktest.Profile()
	mock.Name, mock.Env["HERD_MOCK_SLOW_START_MS"] = "Echo", "1"
	file := agentsFile(t, "echo", mock)
	srv := MustStart(t, func(c *server.Config, _ *server.Options) { c.AgentsFile = file })
	c := MustDial(t, srv, nil)
	profiles := c.call("agent_profile.list", nil)["agent_profiles"].([]any)
	var echo map[string]any
	for _, p := range profiles {
		if p.(map[string]any)["id"] == "echo" {
			echo = p.(map[string]any)
		}
	}
	require.NotNil(t, echo)
	require.Equal(t, true, echo["available"])

	ws := c.call("workspace.create", map[string]any{"name": "W"})
	task := c.call("task.create", map[string]any{"workspace_id": ws["id"], "title": "t"})
	session := c.call("session.create", map[string]any{"task_id": task["id"], "agent_profile_id": "echo"})
	c.call("session.subscribe", map[string]any{"session_id": session["id"]})
	awaitState(t, c, session["id"], "WAITING_FOR_INPUT")
	require.Equal(t, map[string]any{}, c.call("session.git.refresh", map[string]any{"session_id": session["id"]}), "a task without repositories has nothing to observe")
	c.callErr("session.create", map[string]any{"task_id": task["id"], "agent_profile_id": "nobody"}, "not_found")

	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"agents":[{"id":"mock","name":"x","command":"x"}]}`), 0o600))
	_, err := server.New(server.Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), AgentsFile: bad}, server.Options{MockAgent: mocktest.Profile()})
	require.ErrorContains(t, err, "--agents-file", "a bad agents file is refused before the server starts")
}

// Without Options.MockAgent the built-in mock profile runs the server's
// own executable as `mock-agent`, as herd serve starts it.
func TestTheMockProfileRunsTheServersExecutableByDefault(t *testing.T) {
	srv := MustStart(t, func(_ *server.Config, o *server.Options) { o.MockAgent = agent.Profile{} })
	c := MustDial(t, srv, nil)
	exe, err := os.Executable()
	require.NoError(t, err)
	var mock map[string]any
	for _, p := range c.call("agent_profile.list", nil)["agent_profiles"].([]any) {
		if p.(map[string]any)["id"] == agent.MockProfileID {
			mock = p.(map[string]any)
		}
	}
	require.NotNil(t, mock)
	require.Equal(t, exe, mock["command"])
	require.Equal(t, []any{"mock-agent"}, mock["args"])
}

// A session's settings travel in its snapshot and session.list, change
// with session.config.set, and reach its subscribers as
// session.config.updated; bad requests get coded errors.
func TestSessionConfigOverTheWire(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	task, session := newTaskSession(t, c)
	viewer := MustDial(t, srv, nil)
	snap := viewer.call("session.subscribe", map[string]any{"session_id": session["id"]})["snapshot"].(map[string]any)
	config := snap["session"].(map[string]any)["config"].(map[string]any)
	require.Len(t, config["options"], 3, "the agent's settings are known once it is ready: %v", config)
	model := config["options"].([]any)[1].(map[string]any)
	require.Equal(t, "model", model["id"])
	require.Equal(t, "mock-fast", model["current_value"])
	require.Equal(t, "select", model["type"])

	got := c.call("session.config.set", map[string]any{"session_id": session["id"], "option_id": "model", "value": "mock-smart"})
	require.Equal(t, session["id"], got["session_id"])
	require.Equal(t, "mock-smart", got["config"].(map[string]any)["options"].([]any)[1].(map[string]any)["current_value"])
	note := viewer.awaitNotification("session.config.updated")
	require.Equal(t, "mock-smart", note["config"].(map[string]any)["options"].([]any)[1].(map[string]any)["current_value"])
	listed := c.call("session.list", map[string]any{"task_id": task["id"]})["sessions"].([]any)[0].(map[string]any)
	require.Equal(t, "mock-smart", listed["config"].(map[string]any)["options"].([]any)[1].(map[string]any)["current_value"])

	for _, tc := range []struct {
		payload map[string]any
		code    string
	}{
		{map[string]any{"session_id": session["id"], "value": "x"}, "bad_request"},
		{map[string]any{"session_id": session["id"], "option_id": "model"}, "bad_request"},
		{map[string]any{"session_id": session["id"], "option_id": "model", "value": strings.Repeat("x", 129)}, "bad_request"},
		{map[string]any{"session_id": session["id"], "option_id": "model", "value": "nope"}, "bad_request"},
		{map[string]any{"session_id": session["id"], "option_id": "nope", "value": "x"}, "not_found"},
		{map[string]any{"session_id": "missing", "option_id": "model", "value": "x"}, "not_found"},
		{map[string]any{"session_id": session["id"], "option_id": 7, "value": "x"}, "bad_request"},
	} {
		c.callErr("session.config.set", tc.payload, tc.code)
	}
	c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "m-1", "content": "/scenario config"})
	require.Equal(t, "end_turn", awaitSettled(t, c))
	require.Equal(t, []string{"user:/scenario config", "agent:mode=ask model=mock-smart thinking=false"}, transcript(t, c, session["id"]))
}
