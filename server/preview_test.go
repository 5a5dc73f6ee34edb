package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// previewOf returns a summary's preview, "" when absent.
func previewOf(sum map[string]any) string {
	p, _ := sum["preview"].(string)
	return p
}

// stateOf returns the state of a summary's primary session.
func stateOf(sum map[string]any) any {
	p, _ := sum["primary_session"].(map[string]any)
	return p["state"]
}

// awaitRequest waits on a session subscriber for the agent's next request
// of type typ and returns it.
func awaitRequest(t testing.TB, c *wsClient, typ string) map[string]any {
	t.Helper()
	return awaitSessionEvent(t, c, "session.message.added", func(m map[string]any) bool { return m["type"] == typ })
}

// A task row says what its session is doing through the workspace feed
// alone: the agent's answer, then the permission it asks for, then its
// answer again once permission is given; the same for a question.
func TestTaskRowPreviewFollowsTheSessionThroughTheFeed(t *testing.T) {
	srv := MustStart(t, nil)
	owner := MustDial(t, srv, nil)
	task, session := newTaskSession(t, owner)
	feed := follower(t, srv, task["workspace_id"])
	send := func(id, content string) {
		owner.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": id, "content": content})
	}

	// The mock echoes the prompt: the row shows the answer's first line,
	// its heading marker dropped; before the answer, at most the prompt.
	send("pv-1", "# Plan\n\nStep one.\nStep two.")
	answered := awaitSummary(t, feed, task["id"], func(s map[string]any) bool {
		require.Contains(t, []string{"", "You: Plan", "Plan"}, previewOf(s))
		return stateOf(s) == "WAITING_FOR_INPUT" && previewOf(s) == "Plan"
	})
	require.NotContains(t, answered, "pending_action")

	send("pv-2", "/scenario permission")
	asking := awaitSummary(t, feed, task["id"], func(s map[string]any) bool {
		if s["pending_action"] == nil {
			require.Equal(t, "Plan", previewOf(s), "no answer of this turn yet")
		}
		return s["pending_action"] == "permission"
	})
	require.Equal(t, "Edit notes.txt", previewOf(asking), "the request's title")
	request := awaitRequest(t, owner, "permission_request")
	owner.call("permission.respond", map[string]any{"session_id": session["id"], "pending_id": request["pending_id"], "option_id": "allow"})
	require.Equal(t, "end_turn", awaitSettled(t, owner))
	awaitSummary(t, feed, task["id"], func(s map[string]any) bool {
		require.NotContains(t, s, "pending_action")
		require.Contains(t, []string{"Plan", "allowed"}, previewOf(s), "back to the agent's line")
		return stateOf(s) == "WAITING_FOR_INPUT" && previewOf(s) == "allowed"
	})

	send("pv-3", "/scenario clarify")
	awaitSummary(t, feed, task["id"], func(s map[string]any) bool {
		return s["pending_action"] == "clarification" && previewOf(s) == "Which branch should I use?"
	})
	question := awaitRequest(t, owner, "clarification_request")
	owner.call("clarification.respond", map[string]any{"session_id": session["id"], "pending_id": question["pending_id"], "answer": "main"})
	awaitSummary(t, feed, task["id"], func(s map[string]any) bool {
		return stateOf(s) == "WAITING_FOR_INPUT" && previewOf(s) == "answer: main"
	})

	got := owner.call("task.get", map[string]any{"task_id": task["id"]})["status_summary"].(map[string]any)
	require.Equal(t, "answer: main", previewOf(got), "reads carry the preview too")
	noSessionFrames(t, feed)
}

// A streamed answer reaches the row once, complete: its chunks change no
// summary, so a 100-chunk stream costs the row the updates any turn does
// (RUNNING, generating, settled; before the preview it took two) and the
// preview changes once, to the answer's first line.
func TestAStreamedAnswerChangesTheRowPreviewOnceWhole(t *testing.T) {
	srv := MustStart(t, nil)
	owner := MustDial(t, srv, nil)
	task, session := newTaskSession(t, owner)
	feed := follower(t, srv, task["workspace_id"])
	owner.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "st-1", "content": "ready"})
	awaitSummary(t, feed, task["id"], func(s map[string]any) bool {
		return stateOf(s) == "WAITING_FOR_INPUT" && previewOf(s) == "ready"
	})

	// 100 chunks 5 ms apart: a stream that changed the summary per chunk,
	// or per debounce window, would show about 20 updates.
	owner.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "st-2", "content": "/scenario stream 100 5"})
	require.Equal(t, "end_turn", awaitSettled(t, owner))
	var answer strings.Builder
	for i := range 100 {
		fmt.Fprintf(&answer, "%d ", i)
	}
	// ASCII, longer than the bound: cut to 117 bytes and an ellipsis.
	want := strings.TrimRight(answer.String()[:117], " ") + "…"
	var previews []string
	awaitSummary(t, feed, task["id"], func(s map[string]any) bool {
		previews = append(previews, previewOf(s))
		return stateOf(s) == "WAITING_FOR_INPUT" && previewOf(s) == want
	})
	require.LessOrEqual(t, len(previews), 3, "summaries of the stream's turn: %q", previews)
	for i, p := range previews {
		require.Contains(t, []string{"ready", want}, p, "no part of the stream is ever a preview")
		if i > 0 && previews[i-1] == want {
			require.Equal(t, want, p, "the preview changed once: %q", previews)
		}
	}
	noSessionFrames(t, feed)
}
