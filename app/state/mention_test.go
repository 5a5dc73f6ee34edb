package state

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

func TestMentionAtTheCaret(t *testing.T) {
	cases := []struct {
		name  string
		text  string // | marks the caret
		query string
		ok    bool
	}{
		{"at the start", "@ma|", "ma", true},
		{"after a space", "look at @src/ma|", "src/ma", true},
		{"after a line break", "one\n@|", "", true},
		{"the caret inside the word", "see @src/main.go| and more", "src/main.go", true},
		{"an e-mail address", "mail bob@example|", "", false},
		{"a space after the @", "@src |", "", false},
		{"no @", "plain text|", "", false},
		{"after non-ASCII", "é @fi|", "fi", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			caret := strings.Index(c.text, "|")
			text := strings.Replace(c.text, "|", "", 1)
			m, ok := MentionAt(text, caret)
			require.Equal(t, c.ok, ok)
			if ok {
				require.Equal(t, c.query, m.Query)
				require.Equal(t, byte('@'), text[m.Start])
			}
		})
	}
	_, ok := MentionAt("@x", 5)
	require.False(t, ok, "a caret past the end is no mention")
}

// Picking a completion replaces what was typed after the @ and leaves the
// caret after the path and a space; the rest of the text stays.
func TestMentionCompleteReplacesTheQuery(t *testing.T) {
	text := "look at @ma please"
	m, ok := MentionAt(text, len("look at @ma"))
	require.True(t, ok)
	out, caret := m.Complete(text, len("look at @ma"), "cmd/herd/main.go")
	require.Equal(t, "look at @cmd/herd/main.go  please", out)
	require.Equal(t, len("look at @cmd/herd/main.go "), caret)
}

// Only the answer to the newest query shows: the person typed on while an
// older listing was in flight.
func TestCompletionsKeepOnlyTheNewestAnswer(t *testing.T) {
	var c Completions
	first := c.Ask("m")
	second := c.Ask("ma")
	require.True(t, c.Open(), "asked, not yet answered")
	require.True(t, c.Answer(second, []string{"main.go", "Makefile"}))
	require.False(t, c.Answer(first, []string{"mock.go"}), "a late answer to an older query is dropped")
	require.Equal(t, []string{"main.go", "Makefile"}, c.Files())

	c.Move(1)
	got, _ := c.Choice()
	require.Equal(t, "Makefile", got)
	c.Move(1)
	got, _ = c.Choice()
	require.Equal(t, "main.go", got, "the highlight wraps")
	c.Move(-1)
	got, _ = c.Choice()
	require.Equal(t, "Makefile", got)

	n := c.Ask("mai")
	c.Close()
	require.False(t, c.Answer(n, []string{"main.go"}), "closed: the answer in flight is dropped")
	require.False(t, c.Open())

	long := make([]string, 20)
	for i := range long {
		long[i] = "f" + string(rune('a'+i))
	}
	c.Answer(c.Ask("f"), long)
	require.Len(t, c.Files(), MaxMentionChoices, "the choices are bounded")
}

var imageCaps = &shared.PromptCapabilities{Image: true}

func TestAttachmentsKeepTheBounds(t *testing.T) {
	var a Attachments
	require.EqualError(t, a.AddImage(&shared.PromptCapabilities{}, "", "image/png", []byte{1}), "This agent does not take images.")
	require.EqualError(t, a.AddImage(nil, "", "image/png", []byte{1}), "This agent does not take images.", "unknown capabilities take none")
	require.EqualError(t, a.AddImage(imageCaps, "x.svg", "image/svg+xml", []byte{1}), "Only PNG, JPEG, GIF and WebP images can be attached.")
	require.NoError(t, a.AddImage(imageCaps, "a.png", "image/png", make([]byte, 300<<10)))
	err := a.AddImage(imageCaps, "b.png", "image/png", make([]byte, 300<<10))
	require.ErrorContains(t, err, "at most 512 KiB together")
	require.Equal(t, 1, a.Len(), "what was added stays")
	for range 3 {
		require.NoError(t, a.AddImage(imageCaps, "", "image/gif", []byte{1}))
	}
	require.EqualError(t, a.AddImage(imageCaps, "", "image/gif", []byte{1}), "A prompt takes at most 4 images.")

	require.NoError(t, a.AddFile("src/main.go"))
	require.NoError(t, a.AddFile("src/main.go"))
	require.Equal(t, 5, a.Len(), "a file is held once")
	require.Error(t, a.AddFile("../etc/passwd"))
	require.NoError(t, a.AddFile("b"))
	require.NoError(t, a.AddFile("c"))
	require.NoError(t, a.AddFile("d"))
	require.EqualError(t, a.AddFile("e"), "A prompt takes at most 8 attachments.")

	a.Remove(0)
	require.NoError(t, a.AddImage(imageCaps, "big.png", "image/png", make([]byte, 400<<10)), "the removed image's bytes and count are free again")
	_, err = shared.CheckAttachments(a.List())
	require.NoError(t, err, "what the composer holds, the server takes")
	a.Remove(99)
	require.Equal(t, 8, a.Len(), "an index out of range changes nothing")
	require.Len(t, a.Take(), 8)
	require.Zero(t, a.Len())
}

// A retry sends what the person attached, not what the server added.
func TestResendableDropsWhatTheServerAdded(t *testing.T) {
	stored := []shared.Attachment{
		{Type: shared.AttachmentImage, Name: "a.png", MimeType: "image/png", Data: "AAAA", Size: 3},
		{Type: shared.AttachmentFile, Path: "x.go", Name: "x.go", URI: "file:///w/x.go", Embedded: true, Text: "package x", Size: 9},
	}
	require.Equal(t, []shared.Attachment{
		{Type: shared.AttachmentImage, Name: "a.png", MimeType: "image/png", Data: "AAAA"},
		{Type: shared.AttachmentFile, Path: "x.go"},
	}, Resendable(stored))
}

// Only a known image type with plain base64 becomes a data: URL.
func TestImageSourceShowsOnlySafeImages(t *testing.T) {
	require.Equal(t, "data:image/png;base64,AAAA", ImageSource(shared.Attachment{Type: shared.AttachmentImage, MimeType: "image/png", Data: "AAAA"}))
	require.Empty(t, ImageSource(shared.Attachment{Type: shared.AttachmentImage, MimeType: "image/svg+xml", Data: "AAAA"}))
	require.Empty(t, ImageSource(shared.Attachment{Type: shared.AttachmentImage, MimeType: "image/png", Data: `AA" onerror="x`}))
	require.Empty(t, ImageSource(shared.Attachment{Type: shared.AttachmentFile, Path: "a.png"}))
}

// The browser counts a caret in UTF-16 units; the mention is read in
// bytes.
func TestCaretUnitsAndBytes(t *testing.T) {
	text := "é 😀 @ma"
	units := UTF16Len(text)
	require.Equal(t, 8, units, "é is one unit, the emoji two")
	require.Equal(t, len(text), ByteOffset(text, units))
	require.Equal(t, len("é 😀 "), ByteOffset(text, UTF16Len("é 😀 ")))
	require.Equal(t, len(text), ByteOffset(text, 99))
	m, ok := MentionAt(text, ByteOffset(text, units))
	require.True(t, ok)
	require.Equal(t, "ma", m.Query)
}

// The largest prompt the bounds allow (256 KiB of text, 512 KiB of
// images) fits one frame; text that JSON escapes six-fold beside the
// images does not, and is refused before it is sent.
func TestPromptFitsAFrame(t *testing.T) {
	var a Attachments
	for range 2 {
		require.NoError(t, a.AddImage(imageCaps, "", "image/png", make([]byte, shared.MaxImageBytes/2)))
	}
	req := shared.MessageAddRequest{SessionID: "s", ClientMessageID: "c", Content: strings.Repeat("a", 256<<10), Attachments: a.List()}
	require.NoError(t, PromptFits(req))
	req.Content = strings.Repeat("\x01", 64<<10)
	require.ErrorContains(t, PromptFits(req), "one message takes at most 1023 KiB")
}
