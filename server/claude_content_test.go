package server_test

import (
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/agent/anthropictest"
	"github.com/herd-dev/herd/server/agent/claudetest"
	"github.com/herd-dev/herd/server/gitcli/gittest"
)

// Through herd end to end, a prompt with a pasted image and an @file of
// the worktree reaches the real Claude adapter, and the scripted model's
// request holds the image's bytes and the file's text (Claude takes
// embedded context, so the file goes as its text). The session tells the
// client what Claude takes.
func TestRealClaudePromptWithAnImageAndAFile(t *testing.T) {
	srv, endpoint := startClaudeServer(t, scripted(func(*anthropictest.Request, string) anthropictest.Reply {
		return anthropictest.Say("I see a pixel and your notes.")
	}), claudetest.ModeAsk, nil)
	c := MustDial(t, srv, nil).patient()
	task, session := newClaudeSession(t, c, gittest.Init(t))
	worktree := task["repositories"].([]any)[0].(map[string]any)["worktree_path"].(string)
	gittest.Write(t, worktree, "notes/plan.md", "the secret word is heliotrope\n")

	listed := c.call("session.list", map[string]any{"task_id": task["id"]})["sessions"].([]any)
	assert.Equal(t, map[string]any{"image": true, "embedded_context": true}, listed[0].(map[string]any)["prompt_capabilities"])

	c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "img-1", "content": "What do these show?",
		"attachments": []any{pngAttachment(), fileAttachment("notes/plan.md")}})
	require.Equal(t, "end_turn", awaitSettled(t, c))
	assert.Contains(t, transcript(t, c, session["id"]), "agent:I see a pixel and your notes.")
	image := base64.StdEncoding.EncodeToString(pngPixel)
	var found bool
	for _, r := range endpoint.Requests() {
		found = found || (r.IsMain() && r.Contains(image) && r.Contains("heliotrope") && r.Contains("What do these show?"))
	}
	assert.True(t, found, "one model request holds the prompt, the image and the file's text")
}
