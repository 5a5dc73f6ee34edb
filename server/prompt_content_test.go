package server_test

import (
	"encoding/base64"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server"
	"github.com/herd-dev/herd/server/gitcli/gittest"
	"github.com/herd-dev/herd/server/mockagent/mocktest"
)

// pngPixel is a 1×1 PNG.
var pngPixel = []byte{
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
	0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0,
	0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
	0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
}

func pngAttachment() map[string]any {
	return map[string]any{"type": "image", "mime_type": "image/png", "name": "pixel.png", "data": base64.StdEncoding.EncodeToString(pngPixel)}
}

func fileAttachment(path string) map[string]any {
	return map[string]any{"type": "file", "path": path}
}

// newRepoSession creates a task on a fresh repository and a mock session
// of profile on it that c follows, and returns the session and the task's
// worktree, where the files below are written:
//
//	src/small.go   embeddable text
//	big.txt        text over the embedding bound
//	blob.bin       binary
//	ignored.log    ignored by .gitignore
func newRepoSession(t *testing.T, c *wsClient, profile string) (session map[string]any, worktree string) {
	t.Helper()
	ws := c.call("workspace.create", map[string]any{"name": "W"})
	task := c.call("task.create", map[string]any{"workspace_id": ws["id"], "title": "content",
		"repositories": []any{map[string]any{"path": gittest.Init(t)}}})
	worktree = task["repositories"].([]any)[0].(map[string]any)["worktree_path"].(string)
	gittest.Write(t, worktree, "src/small.go", "package src\n")
	gittest.Write(t, worktree, "big.txt", strings.Repeat("x", 70_000))
	gittest.Write(t, worktree, "blob.bin", "\x00\x01\x02")
	gittest.Write(t, worktree, ".gitignore", "*.log\n")
	gittest.Write(t, worktree, "ignored.log", "noise")
	session = c.call("session.create", map[string]any{"task_id": task["id"], "agent_profile_id": profile})
	require.Equal(t, true, c.call("session.subscribe", map[string]any{"session_id": session["id"]})["joined"])
	awaitState(t, c, session["id"], "WAITING_FOR_INPUT")
	return session, worktree
}

func fileURI(t *testing.T, path string) string {
	t.Helper()
	resolved, err := filepath.EvalSymlinks(path)
	require.NoError(t, err)
	return (&url.URL{Scheme: "file", Path: resolved}).String()
}

// lastAgentLine returns the newest agent message of the transcript.
func lastAgentLine(t *testing.T, c *wsClient, sessionID any) string {
	t.Helper()
	lines := transcript(t, c, sessionID)
	for i := len(lines) - 1; i >= 0; i-- {
		if s, ok := strings.CutPrefix(lines[i], "agent:"); ok {
			return s
		}
	}
	return ""
}

// An image and @file mentions reach the agent as ACP blocks after the
// text: the image as an image block, a small text file embedded (the mock
// takes embedded context), a large or binary one as a resource_link. The
// stored prompt keeps what was sent, and the session tells the client what
// its agent takes.
func TestPromptContentReachesTheAgentAsACPBlocks(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil).patient()
	session, worktree := newRepoSession(t, c, "mock")

	listed := c.call("session.list", map[string]any{"task_id": session["task_id"]})["sessions"].([]any)
	assert.Equal(t, map[string]any{"image": true, "embedded_context": true}, listed[0].(map[string]any)["prompt_capabilities"])

	added := c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "c-1", "content": "/scenario content",
		"attachments": []any{pngAttachment(), fileAttachment("src/small.go"), fileAttachment("big.txt"), fileAttachment("blob.bin")}})
	require.Equal(t, "dispatched", added["outcome"])
	require.Equal(t, "end_turn", awaitSettled(t, c))
	assert.Equal(t, "received: image image/png 70 bytes; "+
		"resource "+fileURI(t, filepath.Join(worktree, "src/small.go"))+" 12 bytes; "+
		"resource_link big.txt "+fileURI(t, filepath.Join(worktree, "big.txt"))+" size 70000; "+
		"resource_link blob.bin "+fileURI(t, filepath.Join(worktree, "blob.bin"))+" size 3",
		lastAgentLine(t, c, session["id"]))

	page := c.call("message.list", map[string]any{"session_id": session["id"]})["messages"].([]any)
	user := page[0].(map[string]any)
	require.Equal(t, "user", user["type"])
	stored := user["metadata"].(map[string]any)["attachments"].([]any)
	require.Len(t, stored, 4)
	assert.Equal(t, "pixel.png", stored[0].(map[string]any)["name"])
	assert.Equal(t, 70.0, stored[0].(map[string]any)["size"])
	assert.Equal(t, true, stored[1].(map[string]any)["embedded"])
	assert.Equal(t, "package src\n", stored[1].(map[string]any)["text"])
	assert.Nil(t, stored[2].(map[string]any)["embedded"])

	again := c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "c-1", "content": "/scenario content"})
	assert.Equal(t, "duplicate", again["outcome"], "the client_message_id still owns the prompt")
}

// A prompt queued behind a running turn keeps its attachments until it is
// dispatched.
func TestAQueuedPromptKeepsItsAttachments(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil).patient()
	session, worktree := newRepoSession(t, c, "mock")
	c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "q-1", "content": "/scenario sleep 300"})
	awaitState(t, c, session["id"], "RUNNING")
	queued := c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "q-2", "content": "/scenario content",
		"attachments": []any{fileAttachment("src/small.go")}})
	require.Equal(t, "queued", queued["outcome"])
	require.Equal(t, "end_turn", awaitSettled(t, c))
	require.Equal(t, "end_turn", awaitSettled(t, c))
	assert.Equal(t, "received: resource "+fileURI(t, filepath.Join(worktree, "src/small.go"))+" 12 bytes", lastAgentLine(t, c, session["id"]))
}

// An agent that takes no embedded context gets every file as a link, and
// an image sent to an agent that takes none is refused before anything is
// stored.
func TestATextOnlyAgentGetsLinksAndNoImages(t *testing.T) {
	file := agentsFile(t, "plain", mocktest.Profile("--text-only"))
	srv := MustStart(t, func(c *server.Config, _ *server.Options) { c.AgentsFile = file })
	c := MustDial(t, srv, nil).patient()
	session, worktree := newRepoSession(t, c, "plain")
	listed := c.call("session.list", map[string]any{"task_id": session["task_id"]})["sessions"].([]any)
	assert.Equal(t, map[string]any{}, listed[0].(map[string]any)["prompt_capabilities"], "known to take text only")

	c.callErr("message.add", map[string]any{"session_id": session["id"], "client_message_id": "t-1", "content": "look",
		"attachments": []any{pngAttachment()}}, "bad_request")
	assert.Empty(t, transcript(t, c, session["id"]), "a refused prompt is not stored")

	c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "t-2", "content": "/scenario content",
		"attachments": []any{fileAttachment("src/small.go")}})
	require.Equal(t, "end_turn", awaitSettled(t, c))
	assert.Equal(t, "received: resource_link src/small.go "+fileURI(t, filepath.Join(worktree, "src/small.go"))+" size 12", lastAgentLine(t, c, session["id"]))
}

// Attachments that do not fit, or that name something outside the
// worktree, are refused with a coded error and nothing is stored or sent.
func TestBadAttachmentsAreRefused(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil).patient()
	session, worktree := newRepoSession(t, c, "mock")
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("s3cret"), 0o600))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(worktree, "escape")))
	require.NoError(t, os.Symlink(outside, filepath.Join(worktree, "door")))
	require.NoError(t, os.Mkdir(filepath.Join(worktree, "dir"), 0o755))

	big := base64.StdEncoding.EncodeToString(make([]byte, 300<<10))
	many := make([]any, 9)
	for i := range many {
		many[i] = fileAttachment("src/small.go")
	}
	for _, tc := range []struct {
		name        string
		attachments []any
		code        string
	}{
		{"a parent path", []any{fileAttachment("../secret")}, "bad_request"},
		{"a path that climbs back", []any{fileAttachment("src/../../secret")}, "bad_request"},
		{"an absolute path", []any{fileAttachment(filepath.Join(outside, "secret"))}, "bad_request"},
		{"a symlink out of the worktree", []any{fileAttachment("escape")}, "bad_request"},
		{"a file under a symlinked directory", []any{fileAttachment("door/secret")}, "bad_request"},
		{"a directory", []any{fileAttachment("dir")}, "bad_request"},
		{"a missing file", []any{fileAttachment("nope.txt")}, "bad_request"},
		{"an empty path", []any{fileAttachment("")}, "bad_request"},
		{"an unknown type", []any{map[string]any{"type": "audio", "data": "AAAA"}}, "bad_request"},
		{"an image type herd does not take", []any{map[string]any{"type": "image", "mime_type": "image/svg+xml", "data": "PHN2Zy8+"}}, "bad_request"},
		{"an image that is not base64", []any{map[string]any{"type": "image", "mime_type": "image/png", "data": "not base64!"}}, "bad_request"},
		{"too many attachments", many, "payload_too_large"},
		{"images over the bound together", []any{
			map[string]any{"type": "image", "mime_type": "image/png", "data": big},
			map[string]any{"type": "image", "mime_type": "image/png", "data": big},
		}, "payload_too_large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := c.callErr("message.add", map[string]any{"session_id": session["id"], "client_message_id": "bad-" + tc.name,
				"content": "/scenario content", "attachments": tc.attachments}, tc.code)
			assert.NotContains(t, p["message"], "s3cret")
		})
	}
	assert.Empty(t, transcript(t, c, session["id"]), "nothing was stored")
	c.assertQuiet()
}

// session.files.list offers the worktree's files for @ completion: tracked
// and untracked ones, not those git ignores, filtered by a query that
// ignores case, in bounded pages.
func TestFileListingIsBoundedAndStaysInTheWorktree(t *testing.T) {
	srv := MustStart(t, nil)
	c := MustDial(t, srv, nil).patient()
	session, worktree := newRepoSession(t, c, "mock")
	outside := t.TempDir()
	gittest.Write(t, outside, "elsewhere.txt", "no")
	require.NoError(t, os.Symlink(outside, filepath.Join(worktree, "door")))

	files := func(p map[string]any) []string {
		var out []string
		for _, f := range p["files"].([]any) {
			out = append(out, f.(string))
		}
		return out
	}
	all := c.call("session.files.list", map[string]any{"session_id": session["id"]})
	assert.ElementsMatch(t, []string{".gitignore", "README", "big.txt", "blob.bin", "door", "src/small.go"}, files(all),
		"the symlink is listed as itself, never followed")
	assert.Nil(t, all["next_offset"])

	assert.Equal(t, []string{"src/small.go"}, files(c.call("session.files.list", map[string]any{"session_id": session["id"], "query": "SMALL"})))

	first := c.call("session.files.list", map[string]any{"session_id": session["id"], "limit": 4})
	require.Len(t, first["files"], 4)
	require.Equal(t, 4.0, first["next_offset"])
	rest := c.call("session.files.list", map[string]any{"session_id": session["id"], "limit": 4, "offset": 4})
	assert.ElementsMatch(t, files(all), append(files(first), files(rest)...), "the pages cover the listing once")
	assert.Nil(t, rest["next_offset"])

	c.callErr("session.files.list", map[string]any{"session_id": session["id"], "limit": 201}, "bad_request")
	c.callErr("session.files.list", map[string]any{"session_id": session["id"], "offset": -1}, "bad_request")
	c.callErr("session.files.list", map[string]any{"session_id": session["id"], "query": strings.Repeat("q", 257)}, "bad_request")
	c.callErr("session.files.list", map[string]any{"session_id": "missing"}, "not_found")
	c.callErr("session.files.list", map[string]any{}, "bad_request")
}
