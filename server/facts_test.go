package server_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/agent/anthropictest"
	"github.com/herd-dev/herd/server/agent/claudetest"
)

// factsUntilSettled reads c's frames until the next session.turn.settled
// and returns the session.info.updated and session.commands.updated
// payloads among them, in order.
func factsUntilSettled(t *testing.T, c *wsClient) (infos, commands []map[string]any) {
	t.Helper()
	for {
		f := c.next()
		if f["type"] != "notification" {
			continue
		}
		p, _ := f["payload"].(map[string]any)
		switch f["action"] {
		case "session.info.updated":
			infos = append(infos, p)
		case "session.commands.updated":
			commands = append(commands, p)
		case "session.turn.settled":
			return infos, commands
		}
	}
}

// costOf returns a payload's usage.cost, nil when absent.
func costOf(p map[string]any) map[string]any {
	u, _ := p["usage"].(map[string]any)
	c, _ := u["cost"].(map[string]any)
	return c
}

// A session's commands, title, usage and cost reach its subscribers (and
// a reload), never the workspace feed; the task row's summary carries the
// cost alone.
func TestSessionFactsReachSubscribersAndTheTaskRowCarriesTheCost(t *testing.T) {
	srv := MustStart(t, nil)
	owner := MustDial(t, srv, nil)
	task, session := newTaskSession(t, owner)
	feed := follower(t, srv, task["workspace_id"])

	owner.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "f-1", "content": "/scenario facts"})
	infos, commands := factsUntilSettled(t, owner)
	require.Len(t, commands, 1, "one command list")
	cmds := commands[0]["commands"].([]any)
	require.Len(t, cmds, 3)
	assert.Equal(t, map[string]any{"name": "review", "description": "Review the changes on this branch", "hint": "[pr#|branch]"}, cmds[0])
	require.NotEmpty(t, infos)
	last := infos[len(infos)-1]
	assert.Equal(t, "Facts from the mock agent", last["title"])
	assert.Equal(t, map[string]any{"used": 84000.0, "size": 200000.0, "cost": map[string]any{"amount": 0.42, "currency": "USD"}}, last["usage"])
	assert.Nil(t, costOf(infos[0]), "the first usage update carries no cost")

	sum := awaitSummary(t, feed, task["id"], func(s map[string]any) bool { return s["cost"] != nil })
	assert.Equal(t, []any{map[string]any{"amount": 0.42, "currency": "USD"}}, sum["cost"])
	noSessionFrames(t, feed)

	// The same turn again: the usage moves (half, then all of it) and is
	// sent; the commands, the title and the cost are as stored and are not.
	owner.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "f-2", "content": "/scenario facts"})
	infos, commands = factsUntilSettled(t, owner)
	require.Len(t, infos, 2, "one event per change of usage: %v", infos)
	assert.Equal(t, 42000.0, infos[0]["usage"].(map[string]any)["used"])
	assert.Equal(t, 84000.0, infos[1]["usage"].(map[string]any)["used"])
	assert.Empty(t, commands, "unchanged commands")

	reload := MustDial(t, srv, nil)
	snap := reload.call("session.subscribe", map[string]any{"session_id": session["id"]})["snapshot"].(map[string]any)
	assert.Len(t, snap["commands"], 3, "a reload shows the commands")
	got := snap["session"].(map[string]any)
	assert.Equal(t, "Facts from the mock agent", got["title"])
	assert.Equal(t, 0.42, costOf(got)["amount"])
	list := reload.call("session.list", map[string]any{"task_id": task["id"]})["sessions"].([]any)
	require.Len(t, list, 1)
	assert.Equal(t, "Facts from the mock agent", list[0].(map[string]any)["title"], "session.list carries the title")
	assert.NotContains(t, list[0], "commands", "commands travel only in the snapshot and their own notification")
}

// The cost of a real Claude turn lands on the session and in the task's
// summary; Claude's command list (with input hints) and the title it
// chose reach the session too.
func TestRealClaudeTurnCostReachesTheSessionAndTheTaskRow(t *testing.T) {
	srv, _ := startClaudeServer(t, scripted(func(req *anthropictest.Request, last string) anthropictest.Reply {
		return anthropictest.Say("Hello from the scripted model.")
	}), claudetest.ModeAsk, nil)
	c := MustDial(t, srv, nil).patient()
	task, session := newClaudeSession(t, c, "")
	feed := follower(t, srv, task["workspace_id"]).patient()
	c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "c-1", "content": "Say hello"})
	infos, _ := factsUntilSettled(t, c)
	var cost map[string]any
	for _, p := range infos {
		if c := costOf(p); c != nil {
			cost = c
		}
	}
	require.NotNil(t, cost, "a usage update of the turn carried its cost: %v", infos)
	require.Equal(t, "USD", cost["currency"])
	require.Greater(t, cost["amount"], 0.0)

	sum := awaitSummary(t, feed, task["id"], func(s map[string]any) bool { return s["cost"] != nil })
	assert.Equal(t, []any{cost}, sum["cost"], "the task's cost is its one session's")

	title := c.awaitNotification("session.info.updated")
	assert.NotEmpty(t, title["title"], "Claude names the session after its first turn")

	reload := MustDial(t, srv, nil)
	snap := reload.call("session.subscribe", map[string]any{"session_id": session["id"]})["snapshot"].(map[string]any)
	hints := map[string]any{}
	for _, cmd := range snap["commands"].([]any) {
		hints[cmd.(map[string]any)["name"].(string)] = cmd.(map[string]any)["hint"]
	}
	assert.Greater(t, len(hints), 10, "Claude's command list")
	assert.Equal(t, "[issue description]", hints["debug"])
	assert.Equal(t, cost, costOf(snap["session"].(map[string]any)))
}
