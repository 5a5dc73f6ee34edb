package store

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

// sentAttachments are a prompt's attachments as herd stores them: an
// image, a linked file and an embedded one, with text the PostgreSQL
// driver must keep byte for byte.
var sentAttachments = []shared.Attachment{
	{Type: shared.AttachmentImage, Name: "paste.png", MimeType: "image/png", Data: "iVBORw0KGgo=", Size: 8},
	{Type: shared.AttachmentFile, Name: "big.bin", Path: "assets/big.bin", URI: "file:///w/assets/big.bin", Size: 1 << 20},
	{Type: shared.AttachmentFile, Name: "main.go", Path: "cmd/main.go", URI: "file:///w/cmd/main.go", MimeType: "text/x-go",
		Embedded: true, Text: "package main\n\nfunc main() { println(\"é ✓\") }\n", Size: 45},
}

// A prompt's attachments are stored with it and come back unchanged on
// every path that reads it: the answer to the add, the queue, the claim
// that dispatches it, the transcript page and the idempotent retry of the
// same client_message_id.
func TestPromptAttachmentsRoundTrip(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		session := mustSessionOfNewTask(t, s)
		want := &shared.MessageMetadata{Attachments: sentAttachments}

		added, created, err := s.AddUserMessage(ctx, session.ID, "c-att", "look at these", sentAttachments...)
		require.NoError(t, err)
		require.True(t, created)
		assert.Equal(t, want, added.Metadata)

		queued, err := s.QueuedMessages(ctx, session.ID)
		require.NoError(t, err)
		require.Len(t, queued, 1)
		assert.Equal(t, want, queued[0].Metadata, "the queue keeps them")

		again, created, err := s.AddUserMessage(ctx, session.ID, "c-att", "look at these")
		require.NoError(t, err)
		assert.False(t, created, "the retry is the same prompt")
		assert.Equal(t, want, again.Metadata, "a retry without them returns the stored ones")

		claimed, ok, err := s.ClaimDispatch(ctx, added.ID, "tok")
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, want, claimed.Metadata, "the dispatch sends them")
		require.NoError(t, s.MarkSent(ctx, added.ID, "tok"))

		page, _, err := s.ListMessages(ctx, session.ID, 0, 10)
		require.NoError(t, err)
		require.Len(t, page, 1)
		assert.Equal(t, want, page[0].Metadata, "the transcript shows them")
	})
}

// A text-only prompt has no metadata, as before attachments existed.
func TestTextOnlyPromptHasNoMetadata(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := MustOpen(t, dialect)
		session := mustSessionOfNewTask(t, s)
		msg, _, err := s.AddUserMessage(context.Background(), session.ID, "c-text", "hello")
		require.NoError(t, err)
		assert.Nil(t, msg.Metadata)
	})
}

// The agent's prompt capabilities are unknown until stored, then every
// read of the session carries them.
func TestPromptCapabilitiesAreStoredOnTheSession(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		session := mustSessionOfNewTask(t, s)
		assert.Nil(t, session.PromptCapabilities, "unknown before the agent started")

		caps := shared.PromptCapabilities{Image: true, EmbeddedContext: true}
		stored, err := s.SetPromptCapabilities(ctx, session.ID, caps)
		require.NoError(t, err)
		assert.Equal(t, &caps, stored.PromptCapabilities)
		assert.Equal(t, session.StateRevision, stored.StateRevision, "no state changed")

		got, err := s.GetSession(ctx, session.ID)
		require.NoError(t, err)
		assert.Equal(t, &caps, got.PromptCapabilities)
		listed, err := s.ListSessions(ctx, session.TaskID)
		require.NoError(t, err)
		require.Len(t, listed, 1)
		assert.Equal(t, &caps, listed[0].PromptCapabilities)

		stored, err = s.SetPromptCapabilities(ctx, session.ID, shared.PromptCapabilities{})
		require.NoError(t, err)
		assert.Equal(t, &shared.PromptCapabilities{}, stored.PromptCapabilities, "a text-only agent is known, not unknown")
	})
}
