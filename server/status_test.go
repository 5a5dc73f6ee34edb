package server_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server"
	"github.com/herd-dev/herd/server/mockagent/mocktest"
)

// awaitSummary waits on a workspace follower for a summary of the task
// that satisfies ok, checking that revisions only rise and that no session
// stream reaches the follower, and returns it.
func awaitSummary(t *testing.T, c *wsClient, taskID any, ok func(sum map[string]any) bool) map[string]any {
	t.Helper()
	last := -1.0
	for {
		f := c.next()
		action, _ := f["action"].(string)
		require.False(t, strings.HasPrefix(action, "session."), "a follower without session subscriptions got %s", action)
		if f["type"] != "notification" || action != "task.status_summary.updated" {
			continue
		}
		n := f["payload"].(map[string]any)
		if n["task_id"] != taskID {
			continue
		}
		sum := n["status_summary"].(map[string]any)
		rev := sum["revision"].(float64)
		require.Greater(t, rev, last, "revisions rise")
		last = rev
		if ok(sum) {
			return sum
		}
	}
}

// follower dials a connection that follows a workspace's feed and nothing
// else.
func follower(t *testing.T, srv *server.Server, workspaceID any) *wsClient {
	t.Helper()
	c := MustDial(t, srv, nil)
	c.call("workspace.subscribe", map[string]any{"workspace_id": workspaceID})
	return c
}

// noSessionFrames asserts that no session stream is pending for a
// connection.
func noSessionFrames(t *testing.T, c *wsClient) {
	t.Helper()
	_, notes := c.awaitReply(c.send("ping", nil))
	for _, f := range notes {
		action, _ := f["action"].(string)
		require.False(t, strings.HasPrefix(action, "session."), "a follower without session subscriptions got %s", action)
	}
}

func TestBackgroundSubagentsReachTaskRowsThroughTheFeedOnly(t *testing.T) {
	srv := MustStart(t, nil)
	owner := MustDial(t, srv, nil)
	task, session := newTaskSession(t, owner)
	feed := follower(t, srv, task["workspace_id"])

	owner.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "bg-1", "content": "/scenario background 2 600"})

	// The turn ends at once while two subagents and a shell keep working
	// for 600 ms (summaries are projected a few tens of milliseconds after
	// a change, so the short RUNNING phase may not show): the row shows the
	// session settled, with its subagents counted.
	settled := awaitSummary(t, feed, task["id"], func(s map[string]any) bool {
		return s["primary_session"].(map[string]any)["state"] == "WAITING_FOR_INPUT" && s["active_subagent_count"] == 2.0
	})
	assert.Nil(t, settled["foreground_activity"], "a settled session omits its activity")
	awaitSummary(t, feed, task["id"], func(s map[string]any) bool { return s["active_subagent_count"] == 0.0 })

	got := owner.call("session.list", map[string]any{"task_id": task["id"]})["sessions"].([]any)[0].(map[string]any)
	assert.Equal(t, 0.0, got["active_subagent_count"])
	assert.Nil(t, got["foreground_activity"])
	assert.Greater(t, got["state_revision"].(float64), 4.0)
	noSessionFrames(t, feed)
}

func TestAgentErrorStandsUntilDismissedOrAnswered(t *testing.T) {
	srv := MustStart(t, nil)
	owner := MustDial(t, srv, nil)
	task, session := newTaskSession(t, owner)
	feed := follower(t, srv, task["workspace_id"])

	owner.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "e-1", "content": "/scenario error"})
	require.Equal(t, "failed", awaitSettled(t, owner))
	withError := awaitSummary(t, feed, task["id"], func(s map[string]any) bool { return s["active_error"] != nil })
	stamp := withError["active_error"].(map[string]any)["stamp"]
	assert.Contains(t, withError["active_error"].(map[string]any)["preview"], "scripted recoverable error")

	owner.callErr("error.dismiss", map[string]any{"task_id": task["id"], "stamp": "no-such-error"}, "not_found")
	owner.call("error.dismiss", map[string]any{"task_id": task["id"], "stamp": stamp})
	awaitSummary(t, feed, task["id"], func(s map[string]any) bool { return s["active_error"] == nil })

	owner.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "e-2", "content": "/scenario error"})
	require.Equal(t, "failed", awaitSettled(t, owner))
	awaitSummary(t, feed, task["id"], func(s map[string]any) bool { return s["active_error"] != nil })
	owner.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "e-3", "content": "all good?"})
	require.Equal(t, "end_turn", awaitSettled(t, owner))
	awaitSummary(t, feed, task["id"], func(s map[string]any) bool { return s["active_error"] == nil })
	noSessionFrames(t, feed)
}

func TestRestartDuringARunningSessionLeavesNoStaleBadge(t *testing.T) {
	dir := t.TempDir()
	first, err := server.New(server.Config{Addr: "127.0.0.1:0", DataDir: dir}, server.Options{Version: "test", MockAgent: mocktest.Profile()})
	require.NoError(t, err)
	require.NoError(t, first.Start(context.Background()))
	owner := MustDial(t, first, nil)
	task, session := newTaskSession(t, owner)
	feed := follower(t, first, task["workspace_id"])
	owner.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "r-1", "content": "/scenario sleep 60000"})
	before := awaitSummary(t, feed, task["id"], func(s map[string]any) bool { return s["foreground_activity"] == "generating" })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	require.NoError(t, first.Shutdown(ctx))
	cancel()

	second := MustStart(t, func(c *server.Config, _ *server.Options) { c.DataDir = dir })
	c := MustDial(t, second, nil)
	boot := c.call("boot", map[string]any{"workspace_id": task["workspace_id"]})
	sum := boot["tasks"].([]any)[0].(map[string]any)["status_summary"].(map[string]any)
	assert.Nil(t, sum["foreground_activity"], "ready means repaired")
	assert.Equal(t, "WAITING_FOR_INPUT", sum["primary_session"].(map[string]any)["state"])
	assert.Greater(t, sum["revision"].(float64), before["revision"].(float64))
	got := c.call("session.list", map[string]any{"task_id": task["id"]})["sessions"].([]any)[0].(map[string]any)
	assert.Nil(t, got["foreground_activity"])
	assert.Equal(t, "WAITING_FOR_INPUT", got["state"])
}

// awaitSessionEvent waits on a session subscriber for an event of the
// session that satisfies ok.
func awaitSessionEvent(t testing.TB, c *wsClient, action string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	for {
		if n := c.awaitNotification(action); ok(n) {
			return n
		}
	}
}

func TestHeldTurnQueuesThePromptWithTheExperimentOff(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	_, session := newTaskSession(t, c)
	c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "h-1", "content": "/scenario background-held 2 1500"})
	awaitSessionEvent(t, c, "session.activity_changed", func(n map[string]any) bool { return n["active_subagent_count"] == 2.0 })
	added := c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "h-2", "content": "successor"})
	assert.Equal(t, "queued", added["outcome"], "coarse: a RUNNING session queues")
}

func TestHeldTurnHandsOffToTheNextPromptWithTheExperimentOn(t *testing.T) {
	srv := MustStart(t, func(c *server.Config, _ *server.Options) { c.ClaudeBackgroundPromptHandoff = true })
	c := MustDial(t, srv, nil)
	task, session := newTaskSession(t, c)
	feed := follower(t, srv, task["workspace_id"])
	c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "h-1", "content": "/scenario background-held 2 1500"})
	awaitSessionEvent(t, c, "session.activity_changed", func(n map[string]any) bool {
		return n["foreground_activity"] == "background" && n["state"] == "RUNNING"
	})
	awaitSummary(t, feed, task["id"], func(s map[string]any) bool { return s["foreground_activity"] == "background" })

	// The successor streams for half a second, so it still runs when the
	// third prompt arrives: a successor that had already ended would have
	// given the foreground back, and the third could take it.
	added := c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "h-2", "content": "/scenario stream 5 100"})
	require.Equal(t, "dispatched", added["outcome"], "the handoff admits the successor")
	second := c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "h-3", "content": "third"})
	assert.Equal(t, "queued", second["outcome"], "one handoff per yield")

	// The successor answers while the held turn still waits for its work.
	// Its final state may be an append delta, so its text is read back.
	awaitSessionEvent(t, c, "session.message.updated", func(m map[string]any) bool {
		if m["type"] != "agent" || m["status"] != "complete" {
			return false
		}
		got := c.call("message.get", map[string]any{"session_id": session["id"], "message_id": m["id"]})
		return got["content"] == "0 1 2 3 4 "
	})
	settled := []string{awaitSettled(t, c), awaitSettled(t, c), awaitSettled(t, c)}
	assert.Equal(t, []string{"end_turn", "end_turn", "end_turn"}, settled)
	got := transcript(t, c, session["id"])
	assert.Contains(t, got, "agent:third")
	assert.Contains(t, got, "agent:Background work finished.")
}

// A task whose summary row is lost is listed without a summary (never as
// an empty one, which would read "no session"), and the read has the
// summary rebuilt: followers get it with a revision above the lost one.
func TestMissingSummaryIsRebuiltWhenRead(t *testing.T) {
	dataDir := t.TempDir()
	srv := MustStart(t, func(c *server.Config, _ *server.Options) { c.DataDir = dataDir })
	owner := MustDial(t, srv, nil)
	task, _ := newTaskSession(t, owner)
	feed := follower(t, srv, task["workspace_id"])
	// The summary showing the session waiting may have been published
	// before the follower joined: read it, polling until it is projected.
	var held map[string]any
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		held, _ = owner.call("task.get", map[string]any{"task_id": task["id"]})["status_summary"].(map[string]any)
		p, _ := held["primary_session"].(map[string]any)
		if p != nil && p["state"] == "WAITING_FOR_INPUT" {
			break
		}
		require.True(t, time.Now().Before(deadline), "the summary never showed the session waiting: %v", held)
	}

	db, err := sql.Open("sqlite3", filepath.Join(dataDir, "herd.db"))
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec("DELETE FROM task_status_summaries WHERE task_id = ?", task["id"])
	require.NoError(t, err)

	listed := owner.call("task.list", map[string]any{"workspace_id": task["workspace_id"]})["tasks"].([]any)
	require.Len(t, listed, 1)
	// Any change of the task (its git observation, say) may rebuild the
	// summary before the list reads it; otherwise the list shows none.
	if sum, ok := listed[0].(map[string]any)["status_summary"].(map[string]any); ok {
		assert.Greater(t, sum["revision"].(float64), held["revision"].(float64), "a listed summary is the rebuilt one, never an empty one")
	}
	// Clients holding the lost revision take the rebuilt one: it is above.
	rebuilt := awaitSummary(t, feed, task["id"], func(s map[string]any) bool {
		return s["revision"].(float64) > held["revision"].(float64)
	})
	assert.Equal(t, "WAITING_FOR_INPUT", rebuilt["primary_session"].(map[string]any)["state"])
	got := owner.call("task.get", map[string]any{"task_id": task["id"]})["status_summary"].(map[string]any)
	assert.Equal(t, rebuilt["revision"], got["revision"])
}
