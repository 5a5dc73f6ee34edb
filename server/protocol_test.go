package server_test

import (
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"
)

// The acceptance scenario, with a client written from the protocol
// text alone: boot, create a workspace and a task, and see task.created on
// a second connection following that workspace while a connection
// following another workspace sees nothing.
func TestWorkspaceFeedReachesOnlyItsSubscribers(t *testing.T) {
	srv := MustStart(t, nil)
	creator := MustDial(t, srv, nil)
	follower := MustDial(t, srv, nil)
	outsider := MustDial(t, srv, nil)

	boot := creator.call("boot", map[string]any{})
	require.Equal(t, float64(1), boot["server"].(map[string]any)["protocol_version"])
	require.NotContains(t, boot, "workspace_id", "an empty database has no workspace to select")

	ws := creator.call("workspace.create", map[string]any{"name": "Team"})
	other := creator.call("workspace.create", map[string]any{"name": "Elsewhere"})
	follower.call("workspace.subscribe", map[string]any{"workspace_id": ws["id"]})
	outsider.call("workspace.subscribe", map[string]any{"workspace_id": other["id"]})

	task := creator.call("task.create", map[string]any{"workspace_id": ws["id"], "title": "  Ship it  ", "description": "now"})
	require.Equal(t, "Ship it", task["title"], "the title is trimmed")
	require.Equal(t, []any{}, task["repositories"])
	summary := task["status_summary"].(map[string]any)
	require.Equal(t, float64(1), summary["revision"])

	created := follower.awaitNotification("task.created")
	require.Equal(t, task["id"], created["id"])
	require.Equal(t, "Ship it", created["title"])
	require.NotContains(t, created, "status_summary", "feed task events carry coarse fields only")
	sum := follower.awaitNotification("task.status_summary.updated")
	require.Equal(t, task["id"], sum["task_id"])
	require.Equal(t, ws["id"], sum["workspace_id"])
	require.Equal(t, float64(1), sum["status_summary"].(map[string]any)["revision"])

	outsider.assertQuiet()

	// Updates and archives reach the follower too; unsubscribing stops them.
	creator.call("task.update", map[string]any{"task_id": task["id"], "title": "Ship it today"})
	require.Equal(t, "Ship it today", follower.awaitNotification("task.updated")["title"])
	follower.call("workspace.unsubscribe", map[string]any{"workspace_id": ws["id"]})
	archived := creator.call("task.archive", map[string]any{"task_id": task["id"]})
	require.Equal(t, true, archived["archived"])
	follower.assertQuiet()
	outsider.assertQuiet()
}

func TestBootSelectsWorkspaceAndJoinsItsFeed(t *testing.T) {
	srv := MustStart(t, nil)
	admin := MustDial(t, srv, nil)
	first := admin.call("workspace.create", map[string]any{"name": "First"})
	second := admin.call("workspace.create", map[string]any{"name": "Second"})
	admin.call("task.create", map[string]any{"workspace_id": second["id"], "title": "in second"})

	viewer := MustDial(t, srv, nil)
	boot := viewer.call("boot", map[string]any{})
	require.Equal(t, first["id"], boot["workspace_id"], "boot picks the oldest workspace")
	require.Len(t, boot["workspaces"], 2)
	require.Empty(t, boot["tasks"])
	require.NotEmpty(t, boot["agent_profiles"])

	boot = viewer.call("boot", map[string]any{"workspace_id": second["id"]})
	tasks := boot["tasks"].([]any)
	require.Len(t, tasks, 1)
	require.Contains(t, tasks[0], "status_summary")

	admin.call("task.create", map[string]any{"workspace_id": second["id"], "title": "live"})
	require.Equal(t, "live", viewer.awaitNotification("task.created")["title"])

	viewer.callErr("boot", map[string]any{"workspace_id": "missing"}, "not_found")
}

func TestTaskListPagesNewestFirst(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	ws := c.call("workspace.create", map[string]any{"name": "W"})
	var want []any
	for i := range 7 {
		task := c.call("task.create", map[string]any{"workspace_id": ws["id"], "title": strings.Repeat("t", i+1)})
		want = append([]any{task["id"]}, want...)
	}
	var got []any
	cursor := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10, "pagination does not end")
		req := map[string]any{"workspace_id": ws["id"], "limit": 3}
		if cursor != "" {
			req["cursor"] = cursor
		}
		page := c.call("task.list", req)
		for _, task := range page["tasks"].([]any) {
			tm := task.(map[string]any)
			require.Contains(t, tm, "status_summary")
			got = append(got, tm["id"])
		}
		next, ok := page["next_cursor"].(string)
		if !ok {
			break
		}
		cursor = next
	}
	require.Equal(t, want, got)
	c.callErr("task.list", map[string]any{"workspace_id": ws["id"], "cursor": "%%%"}, "bad_request")
	c.callErr("task.list", map[string]any{"workspace_id": ws["id"], "limit": 10001}, "bad_request")
	c.callErr("task.list", map[string]any{"workspace_id": "nope"}, "not_found")
}

// Bad input gets a clear error and leaves the connection and the server
// healthy.
func TestBadInputGetsClearErrors(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	ws := c.call("workspace.create", map[string]any{"name": "W"})

	cases := []struct {
		name, frame, wantID, wantInMessage string
	}{
		{"malformed JSON", `{"id":"a","type":"request",`, "", "JSON"},
		{"not an object", `[1,2,3]`, "", "JSON"},
		{"missing id", `{"type":"request","action":"ping"}`, "", "id"},
		{"id too long", `{"id":"` + strings.Repeat("x", 65) + `","type":"request","action":"ping"}`, "", "64"},
		{"wrong type", `{"id":"b","type":"response","action":"ping"}`, "b", "request"},
		{"missing action", `{"id":"c","type":"request"}`, "c", "action"},
		{"invalid UTF-8", "{\"id\":\"d\",\"type\":\"request\",\"action\":\"ping\",\"payload\":{\"x\":\"\xff\xfe\"}}", "", "UTF-8"},
		{"wrong payload type", `{"id":"e","type":"request","action":"task.list","payload":{"workspace_id":42}}`, "e", "workspace_id"},
		{"payload not an object", `{"id":"f","type":"request","action":"task.get","payload":"x"}`, "f", "payload"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c.sendRaw(tc.frame)
			f := c.next()
			require.Equal(t, "error", f["type"], "frame %v", f)
			if tc.wantID != "" {
				require.Equal(t, tc.wantID, f["id"])
			}
			p := f["payload"].(map[string]any)
			require.Equal(t, "bad_request", p["code"])
			require.Contains(t, p["message"], tc.wantInMessage)
		})
	}

	c.callErr("no.such.action", nil, "unknown_action")
	c.callErr("task.get", map[string]any{"task_id": "does-not-exist"}, "not_found")
	c.callErr("task.get", map[string]any{}, "bad_request")
	c.callErr("task.create", map[string]any{"workspace_id": ws["id"], "title": "   "}, "bad_request")
	c.callErr("task.create", map[string]any{"workspace_id": ws["id"], "title": strings.Repeat("x", 501)}, "bad_request")
	c.callErr("task.create", map[string]any{"workspace_id": ws["id"], "title": "t", "repositories": []any{map[string]any{"path": "relative/path"}}}, "bad_request")
	c.callErr("task.create", map[string]any{"workspace_id": "nope", "title": "t"}, "not_found")
	c.callErr("task.update", map[string]any{"task_id": "nope", "title": "t"}, "not_found")
	c.callErr("task.archive", map[string]any{"task_id": "nope"}, "not_found")
	c.callErr("workspace.subscribe", map[string]any{"workspace_id": "nope"}, "not_found")
	c.callErr("workspace.create", map[string]any{"name": ""}, "bad_request")

	// Binary frames are refused with an error, not a close.
	require.NoError(t, c.conn.Write(t.Context(), websocket.MessageBinary, []byte("{}")))
	f := c.next()
	require.Equal(t, "error", f["type"])

	// Still healthy.
	c.call("ping", nil)
}

func TestOversizeFrameClosesWith1009(t *testing.T) {
	srv := MustStart(t, nil)
	bystander := MustDial(t, srv, nil)
	c := MustDial(t, srv, nil)
	big := `{"id":"big","type":"request","action":"ping","payload":{"x":"` + strings.Repeat("a", 1<<20) + `"}}`
	c.sendRaw(big)
	require.Equal(t, websocket.StatusMessageTooBig, c.awaitClose())
	bystander.call("ping", nil)
	MustDial(t, srv, nil).call("ping", nil)
}

// Subscription changes apply in the order sent: subscribe, unsubscribe,
// subscribe again, sent back to back, leave the connection subscribed.
func TestSubscriptionRequestsApplyInOrder(t *testing.T) {
	srv := MustStart(t, nil)
	admin := MustDial(t, srv, nil)
	ws := admin.call("workspace.create", map[string]any{"name": "W"})
	c := MustDial(t, srv, nil)
	for range 20 {
		c.send("workspace.subscribe", map[string]any{"workspace_id": ws["id"]})
		c.send("workspace.unsubscribe", map[string]any{"workspace_id": ws["id"]})
	}
	last := c.send("workspace.subscribe", map[string]any{"workspace_id": ws["id"]})
	reply, _ := c.awaitReply(last)
	require.Equal(t, "response", reply["type"])
	admin.call("task.create", map[string]any{"workspace_id": ws["id"], "title": "seen"})
	require.Equal(t, "seen", c.awaitNotification("task.created")["title"])
}

func TestShutdownClosesWebSocketsGoingAway(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	c.call("ping", nil)
	require.NoError(t, srv.Shutdown(t.Context()))
	require.Equal(t, websocket.StatusGoingAway, c.awaitClose())
}
