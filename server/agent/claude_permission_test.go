package agent_test

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/agent/anthropictest"
	"github.com/herd-dev/herd/server/agent/claudetest"
	"github.com/herd-dev/herd/shared"
)

// choosingHandler answers a permission request with the first option of
// kind, and records the requests.
type choosingHandler struct {
	claudeHandler
	kind     string
	mu       sync.Mutex
	requests []agent.PermissionRequest
}

func (h *choosingHandler) RequestPermission(_ context.Context, req agent.PermissionRequest) (string, error) {
	h.mu.Lock()
	h.requests = append(h.requests, req)
	h.mu.Unlock()
	for _, o := range req.Options {
		if o.Kind == h.kind {
			return o.ID, nil
		}
	}
	return "", errors.New("no option of kind " + h.kind)
}

// In the ask mode a Bash call makes the real Claude adapter ask with its
// own options: at least one allow_once, allow_always and reject_once, each
// labelled. Choosing allow_always runs the command. With -record-claude
// the frames become the "permission" recording.
func TestRealClaudeAsksWithItsOwnOptions(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "ran.txt")
	srv, err := anthropictest.Start(func(req *anthropictest.Request) anthropictest.Reply {
		last := req.LastUserText()
		switch {
		case !req.IsMain() || strings.HasPrefix(last, "[SUGGESTION MODE"):
			return anthropictest.Say("Scripted title")
		case req.Answered():
			return anthropictest.Say("Ran it.")
		}
		return anthropictest.Reply{Blocks: []anthropictest.Block{anthropictest.ToolUse("toolu_bash_perm", "Bash",
			map[string]any{"command": "echo ran > " + out, "description": "Write ran.txt"})}}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var (
		fmu    sync.Mutex
		frames [][]byte
	)
	h := &choosingHandler{claudeHandler: claudeHandler{wake: make(chan struct{}, 1)}, kind: "allow_always"}
	ex, err := agent.Start(context.Background(), agent.Options{
		Profile: claudetest.Profile(t, srv.URL, claudetest.ModeAsk), Cwd: dir, Handler: h, ClientVersion: "test",
		Trace: func(f []byte) {
			fmu.Lock()
			frames = append(frames, f)
			fmu.Unlock()
		},
	})
	if err != nil {
		t.Fatalf("start the real Claude adapter: %v", err)
	}
	defer ex.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if stop, err := ex.Prompt(ctx, "run it"); err != nil || stop != agent.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	h.mu.Lock()
	requests := h.requests
	h.mu.Unlock()
	if len(requests) != 1 {
		t.Fatalf("%d permission requests, want 1", len(requests))
	}
	seen := map[string]bool{}
	for _, o := range requests[0].Options {
		if o.Name == "" || o.ID == "" {
			t.Fatalf("option without a label or id: %+v", o)
		}
		seen[o.Kind] = true
	}
	for _, kind := range []string{"allow_once", "allow_always", "reject_once"} {
		if !seen[kind] {
			t.Fatalf("options %+v offer no %s", requests[0].Options, kind)
		}
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatalf("the allowed command did not run: %v", err)
	}
	if *recordClaude {
		fmu.Lock()
		writeFixture(t, "permission", frames)
		fmu.Unlock()
	}
}

// A prompt with an image and an embedded file reaches the real Claude
// adapter as ACP blocks, and the model's request holds both: the image's
// bytes and the file's text.
func TestRealClaudeGetsTheImageAndTheFile(t *testing.T) {
	srv, err := anthropictest.Start(func(req *anthropictest.Request) anthropictest.Reply {
		return anthropictest.Say("Seen.")
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	h := &claudeHandler{wake: make(chan struct{}, 1)}
	ex, err := agent.Start(context.Background(), agent.Options{
		Profile: claudetest.Profile(t, srv.URL, claudetest.ModeAsk), Cwd: dir, Handler: h, ClientVersion: "test",
	})
	if err != nil {
		t.Fatalf("start the real Claude adapter: %v", err)
	}
	defer ex.Close()
	if caps := ex.PromptCapabilities(); !caps.Image || !caps.EmbeddedContext {
		t.Fatalf("prompt capabilities %+v, want image and embedded context as Claude's initialize says", caps)
	}
	image := base64.StdEncoding.EncodeToString(pngPixel)
	const fileText = "the answer is forty-two\n"
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	stop, err := ex.Prompt(ctx, "Describe these", shared.Attachment{Type: shared.AttachmentImage, MimeType: "image/png", Data: image},
		shared.Attachment{Type: shared.AttachmentFile, Path: "notes.txt", URI: "file://" + filepath.Join(dir, "notes.txt"),
			Embedded: true, Text: fileText, MimeType: "text/plain"})
	if err != nil || stop != agent.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	found := false
	for _, r := range srv.Requests() {
		if r.IsMain() && r.Contains(image) && r.Contains("forty-two") {
			found = true
		}
	}
	if !found {
		t.Fatal("no model request held both the image and the file's text")
	}
}

// pngPixel is a 1×1 PNG.
var pngPixel = []byte{
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
	0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0,
	0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
	0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
}
