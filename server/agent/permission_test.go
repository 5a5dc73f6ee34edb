package agent

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/herd-dev/herd/shared"
)

// Every option the agent offers reaches the Handler with its own label
// and kind, and the chosen one goes back to the agent by its id.
func TestPermissionOptionsKeepTheAgentsLabelsAndKinds(t *testing.T) {
	rec := newRecorder()
	var got []PermissionOption
	rec.permit = func(_ context.Context, req PermissionRequest) (string, error) {
		got = req.Options
		return "always", nil
	}
	e := MustStart(t, mockProfile(), rec)
	MustPrompt(t, e, "/scenario permission-kinds")
	want := []PermissionOption{
		{ID: "once", Name: "Allow once", Kind: "allow_once"},
		{ID: "always", Name: "Allow always", Kind: "allow_always"},
		{ID: "no", Name: "Reject", Kind: "reject_once"},
		{ID: "never", Name: "Reject always", Kind: "reject_always"},
	}
	if len(got) != len(want) {
		t.Fatalf("options = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("option %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if text := answerText(rec); text != "chose allow_always" {
		t.Fatalf("agent said %q, want it to have got allow_always", text)
	}
}

// Nothing fails open: an answer that is not one of the options, an error
// from the Handler, or a request withdrawn by Cancel reaches the agent as
// a cancelled outcome, never as a selection.
func TestPermissionFailsClosed(t *testing.T) {
	for _, tc := range []struct {
		name   string
		permit func(context.Context, PermissionRequest) (string, error)
		cancel bool
	}{
		{"an id the agent never offered", func(context.Context, PermissionRequest) (string, error) { return "allow", nil }, false},
		{"an empty id", func(context.Context, PermissionRequest) (string, error) { return "", nil }, false},
		{"a handler error", func(context.Context, PermissionRequest) (string, error) { return "always", errors.New("store down") }, false},
		{"a request withdrawn by cancel", func(ctx context.Context, _ PermissionRequest) (string, error) {
			<-ctx.Done()
			return "always", ctx.Err() // too late: the answer must not count
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder()
			asked := make(chan struct{}, 1)
			rec.permit = func(ctx context.Context, req PermissionRequest) (string, error) {
				asked <- struct{}{}
				return tc.permit(ctx, req)
			}
			e := MustStart(t, mockProfile(), rec)
			if tc.cancel {
				go func() {
					<-asked
					_ = e.Cancel(context.Background())
				}()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			stop, err := e.Prompt(ctx, "/scenario permission-kinds")
			if err != nil {
				t.Fatal(err)
			}
			if stop != StopCancelled {
				t.Fatalf("stop reason %s, agent said %q: want the agent to have got a cancelled outcome", stop, answerText(rec))
			}
			if strings.HasPrefix(answerText(rec), "chose") {
				t.Fatalf("the agent acted on a choice: %q", answerText(rec))
			}
		})
	}
}

// answerText joins the agent's text so far.
func answerText(rec *recorder) string {
	var b strings.Builder
	for _, ev := range rec.snapshot() {
		if ev.Kind == EventText {
			b.WriteString(ev.Text)
		}
	}
	return b.String()
}

// A prompt's attachments follow its text as ACP blocks of their kind; an
// unresolved file (no URI) or an unknown type is left out, never sent as
// something else.
func TestPromptBlocksFollowTheText(t *testing.T) {
	blocks := promptBlocks("look", []shared.Attachment{
		{Type: shared.AttachmentImage, MimeType: "image/png", Data: "AAAA"},
		{Type: shared.AttachmentFile, Path: "a.go", URI: "file:///w/a.go", Embedded: true, Text: "package a\n", MimeType: "text/x-go"},
		{Type: shared.AttachmentFile, Path: "b.bin", URI: "file:///w/b.bin", Size: 3},
		{Type: shared.AttachmentFile, Path: "unresolved.txt"},
		{Type: "audio", Data: "AAAA"},
	})
	if len(blocks) != 4 {
		t.Fatalf("%d blocks, want text, image, resource, resource_link", len(blocks))
	}
	if blocks[0].Text == nil || blocks[0].Text.Text != "look" {
		t.Fatalf("first block %+v, want the text", blocks[0])
	}
	if img := blocks[1].Image; img == nil || img.MimeType != "image/png" || img.Data != "AAAA" {
		t.Fatalf("second block %+v, want the image", blocks[1])
	}
	res := blocks[2].Resource
	if res == nil || res.Resource.TextResourceContents == nil || res.Resource.TextResourceContents.Text != "package a\n" ||
		res.Resource.TextResourceContents.Uri != "file:///w/a.go" {
		t.Fatalf("third block %+v, want the embedded file", blocks[2])
	}
	link := blocks[3].ResourceLink
	if link == nil || link.Uri != "file:///w/b.bin" || link.Name != "b.bin" || link.Size == nil || *link.Size != 3 {
		t.Fatalf("fourth block %+v, want the link", blocks[3])
	}
}

// Cancel answers every open request cancelled to the agent: two asked at
// once both reach it as cancelled outcomes (the mock logs what it got).
func TestCancelAnswersEveryOpenRequestCancelled(t *testing.T) {
	rec := newRecorder()
	asked := make(chan struct{}, 2)
	rec.permit = func(ctx context.Context, _ PermissionRequest) (string, error) {
		asked <- struct{}{}
		<-ctx.Done()
		return "allow", nil // too late: a withdrawn request is answered cancelled
	}
	e := MustStart(t, mockProfile(), rec)
	go func() {
		<-asked
		<-asked
		_ = e.Cancel(context.Background())
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stop, err := e.Prompt(ctx, "/scenario permission-pair")
	if err != nil {
		t.Fatal(err)
	}
	if stop != StopCancelled {
		t.Fatalf("stop reason %s, want cancelled", stop)
	}
	// The agent's stderr is its own stream, read apart from its answers:
	// it is whole once the process is gone.
	_ = e.Close()
	if n := strings.Count(e.Stderr(), "outcome=cancelled"); n != 2 {
		t.Fatalf("%d requests reached the agent cancelled, want both; agent log:\n%s", n, e.Stderr())
	}
	if strings.Contains(e.Stderr(), "outcome=allow") {
		t.Fatalf("an answer after the cancel reached the agent:\n%s", e.Stderr())
	}
}
