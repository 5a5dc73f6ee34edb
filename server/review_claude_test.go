package server_test

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/agent/anthropictest"
	"github.com/herd-dev/herd/server/agent/claudetest"
	"github.com/herd-dev/herd/server/gitcli/gittest"
	"github.com/herd-dev/herd/shared"
)

// The real Claude adapter writes a file in each of two turns; review tells
// the turns apart, and review comments reach the model as the next prompt,
// whose own change is the newest turn's.
func TestRealClaudeTurnsAreReviewedAndCommentsBecomeItsNextPrompt(t *testing.T) {
	comment := shared.ReviewComment{Path: "b.md", Side: shared.SideNew, StartLine: 1, EndLine: 1,
		Code: "+beta", Body: "Say gamma here instead."}
	prompt, err := shared.ReviewPrompt([]shared.ReviewComment{comment})
	require.NoError(t, err)

	var mu sync.Mutex
	var worktree string
	write := func(name, content string) anthropictest.Reply {
		mu.Lock()
		defer mu.Unlock()
		return anthropictest.Reply{Blocks: []anthropictest.Block{anthropictest.ToolUse("toolu_"+name, "Write",
			map[string]any{"file_path": filepath.Join(worktree, name), "content": content})}}
	}
	srv, endpoint := startClaudeServer(t, scripted(func(req *anthropictest.Request, last string) anthropictest.Reply {
		switch {
		case req.Answered():
			return anthropictest.Say("Done.")
		case last == "Write one":
			return write("a.md", "alpha\n")
		case last == "Write two":
			return write("b.md", "beta\n")
		case last == prompt:
			return write("b.md", "gamma\n")
		}
		return anthropictest.Say("I was not asked to write anything.")
	}), claudetest.ModeBypass, nil)
	c := MustDial(t, srv, nil).patient()
	task, session := newClaudeSession(t, c, gittest.Init(t))
	repo := task["repositories"].([]any)[0].(map[string]any)
	mu.Lock()
	worktree = repo["worktree_path"].(string)
	mu.Unlock()

	for i, text := range []string{"Write one", "Write two"} {
		c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": text, "content": text})
		require.Equal(t, "end_turn", awaitSettled(t, c), "turn %d", i+1)
	}
	review := c.call("review.get", map[string]any{"task_id": task["id"]})
	assert.Equal(t, session["id"], review["session_id"])
	turns := review["turns"].([]any)
	require.Len(t, turns, 2)
	assert.Equal(t, "Write two", turns[0].(map[string]any)["prompt"], "newest first")
	assert.Equal(t, "Write one", turns[1].(map[string]any)["prompt"])

	files := func(scope, turnID string) (page map[string]any, listed []string) {
		req := map[string]any{"task_id": task["id"], "repository_id": repo["id"], "scope": scope}
		if turnID != "" {
			req["turn_id"] = turnID
		}
		page = c.call("review.files", req)
		for _, f := range page["files"].([]any) {
			f := f.(map[string]any)
			listed = append(listed, f["status"].(string)+" "+f["path"].(string))
		}
		return page, listed
	}
	_, all := files("task", "")
	assert.Equal(t, []string{"added a.md", "added b.md"}, all)
	last, lastFiles := files("turn", "")
	assert.Equal(t, []string{"added b.md"}, lastFiles, "the last turn wrote only b.md")
	_, firstFiles := files("turn", turns[1].(map[string]any)["turn_id"].(string))
	assert.Equal(t, []string{"added a.md"}, firstFiles, "the first turn wrote only a.md")

	diff := c.call("review.file", map[string]any{"task_id": task["id"], "repository_id": repo["id"],
		"from": last["from"], "to": last["to"], "path": "b.md"})
	hunks := diff["hunks"].([]any)
	require.Len(t, hunks, 1)
	assert.Equal(t, []any{"+beta"}, hunks[0].(map[string]any)["lines"])

	c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "review-1", "content": prompt})
	require.Equal(t, "end_turn", awaitSettled(t, c))
	var asked bool
	for _, r := range endpoint.Requests() {
		asked = asked || (r.IsMain() && r.LastUserText() == prompt)
	}
	assert.True(t, asked, "the model was sent the review prompt as it was written")
	_, changed := files("turn", "")
	assert.Equal(t, []string{"modified b.md"}, changed, "the comment's turn changed b.md")
}
