package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

// toolSession starts a session, subscribes c and runs prompt in it,
// returning the frames about its tool call message and the call as
// message.get reads it.
func toolSession(t *testing.T, c *wsClient, prompt string) (frames []map[string]any, call shared.Message, sessionID string) {
	t.Helper()
	ws := c.call("workspace.create", map[string]any{"name": "W"})
	task := c.call("task.create", map[string]any{"workspace_id": ws["id"], "title": "tools"})
	session := c.call("session.create", map[string]any{"task_id": task["id"]})
	sessionID = session["id"].(string)
	c.call("session.subscribe", map[string]any{"session_id": sessionID})
	for c.awaitNotification("session.state_changed")["state"] != "WAITING_FOR_INPUT" {
	}
	c.call("message.add", map[string]any{"session_id": sessionID, "client_message_id": "c-" + sessionID, "content": prompt})
	id := ""
	for {
		f := c.next()
		if f["type"] != "notification" {
			continue
		}
		if f["action"] == "session.turn.settled" {
			break
		}
		p, _ := f["payload"].(map[string]any)
		if p["type"] == "tool_call" {
			id = p["id"].(string)
			frames = append(frames, f)
		}
	}
	require.NotEmpty(t, id, "no tool call")
	raw, err := json.Marshal(c.call("message.get", map[string]any{"session_id": sessionID, "message_id": id}))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &call))
	return frames, call, sessionID
}

// A 1 MB command output reaches the client bounded in every frame, as
// deltas once the client holds a prefix, and message.tool_content.get
// pages through the whole of it; wrong ids and parts are coded errors.
func TestLargeToolOutputIsBoundedOnTheWireAndFetchedInPages(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	const size = 1_000_000
	frames, call, sessionID := toolSession(t, c, fmt.Sprintf("/scenario tool-output %d 4", size))
	wire := 0
	for _, f := range frames {
		wire += f[frameBytes].(int)
		assert.Less(t, f[frameBytes].(int), shared.ToolTextWireBytes+4<<10, "every frame of the call is bounded")
	}
	assert.Less(t, wire, 3*shared.ToolTextWireBytes, "the output's first bytes cross the wire once, not once per update")

	require.Equal(t, shared.MessageComplete, call.Status)
	require.Len(t, call.Metadata.Content, 1)
	part := call.Metadata.Content[0]
	assert.True(t, part.Truncated)
	assert.Equal(t, size, part.Size)
	assert.LessOrEqual(t, len(part.Body), shared.ToolTextWireBytes)

	var whole strings.Builder
	whole.WriteString(part.Body)
	for whole.Len() < part.Size {
		page := c.call(shared.ActionMessageToolContentGet, map[string]any{"session_id": sessionID, "message_id": call.ID, "part": 0, "offset": whole.Len()})
		body := page["body"].(string)
		require.NotEmpty(t, body)
		require.LessOrEqual(t, len(body), shared.ToolPageBytes)
		whole.WriteString(body)
	}
	var want strings.Builder
	for i := 0; want.Len() < size; i++ {
		fmt.Fprintf(&want, "%06d build step output: compiling package %d of the tree\n", i, i)
	}
	assert.Equal(t, want.String()[:size], whole.String(), "the pages add up to what the agent sent, byte for byte")

	c.callErr(shared.ActionMessageToolContentGet, map[string]any{"session_id": sessionID, "message_id": "nope"}, "not_found")
	c.callErr(shared.ActionMessageToolContentGet, map[string]any{"session_id": sessionID, "message_id": call.ID, "part": 1}, "not_found")
	c.callErr(shared.ActionMessageToolContentGet, map[string]any{"session_id": sessionID, "message_id": call.ID, "offset": -1}, "bad_request")
	c.callErr(shared.ActionMessageToolContentGet, map[string]any{"session_id": sessionID, "message_id": call.ID, "offset": size + 1}, "bad_request")
	c.callErr(shared.ActionMessageToolContentGet, map[string]any{"session_id": sessionID, "message_id": call.ID, "limit": shared.ToolPageBytes + 1}, "bad_request")
	c.callErr(shared.ActionMessageToolContentGet, map[string]any{"message_id": call.ID}, "bad_request")
	c.callErr(shared.ActionMessageToolContentGet, map[string]any{"session_id": sessionID, "message_id": call.ID, "part": "first"}, "bad_request")
}

// A 5,000-line new file and a 5,000-line file with a change every 50
// lines travel as the first lines of their unified diffs.
func TestLongDiffsTravelAsTheirFirstLines(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil)
	_, call, _ := toolSession(t, c, "/scenario tool-diff 5000")
	require.Len(t, call.Metadata.Content, 2)
	created, changed := call.Metadata.Content[0], call.Metadata.Content[1]
	assert.True(t, created.NewFile)
	assert.Equal(t, 5000, created.Added)
	assert.Equal(t, 5001, created.Lines)
	assert.True(t, created.Truncated)
	assert.Equal(t, shared.ToolDiffWireLines, strings.Count(created.Body, "\n"))
	assert.True(t, strings.HasPrefix(created.Body, "@@ -0,0 +1,5000 @@\n+line 1 of a generated file\n"))
	assert.Equal(t, 100, changed.Added)
	assert.Equal(t, 100, changed.Removed)
	assert.True(t, strings.HasPrefix(changed.Body, "@@ -47,7 +47,7 @@\n note 47\n note 48\n note 49\n-note 50\n+note 50, revised\n"), changed.Body[:80])
}
