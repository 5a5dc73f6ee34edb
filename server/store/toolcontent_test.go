package store

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

// A tool call's bodies are stored with its metadata and read back in
// pages cut by the database on character boundaries; a new set replaces
// the old, and wrong ids, parts and offsets are coded errors.
func TestToolContentIsStoredWholeAndReadInPages(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		session := mustSessionOfNewTask(t, s)
		call, err := s.AppendMessage(ctx, NewMessage{SessionID: session.ID, Type: shared.MessageToolCall, Content: "Run", Status: shared.MessageStreaming})
		require.NoError(t, err)
		// 3-byte characters, so a page of 64 KiB splits one.
		body := strings.Repeat("€", 30000) + "\x00end"
		meta := &shared.MessageMetadata{ToolCallID: "t1", Content: []shared.ToolContent{{Type: shared.ToolContentText, Size: len(body), Truncated: true}}}
		_, err = s.UpdateMessage(ctx, session.ID, call.ID, MessageUpdate{Metadata: meta, ReplaceMetadata: true, ToolBodies: []string{"short", body}})
		require.NoError(t, err)

		get := func(part, offset, limit int) (shared.ToolContentPage, error) {
			return s.ToolContentPage(ctx, shared.ToolContentGetRequest{SessionID: session.ID, MessageID: call.ID, Part: part, Offset: offset, Limit: limit})
		}
		var got strings.Builder
		for offset := 0; ; {
			p, err := get(1, offset, 0)
			require.NoError(t, err)
			require.Equal(t, len(body), p.Size)
			require.LessOrEqual(t, len(p.Body), shared.ToolPageBytes)
			require.NotEmpty(t, p.Body, "a page before the end holds bytes")
			got.WriteString(p.Body)
			offset += len(p.Body)
			if offset == p.Size {
				break
			}
		}
		assert.Equal(t, body, got.String(), "the pages add up to the body, NUL included")
		p, err := get(0, 0, 2)
		require.NoError(t, err)
		assert.Equal(t, "sh", p.Body)
		p, err = get(1, len(body), 0)
		require.NoError(t, err)
		assert.Empty(t, p.Body, "a page at the end is empty")

		for name, tc := range map[string]struct {
			part, offset, limit int
			code                shared.Code
		}{
			"part out of range":     {2, 0, 0, shared.CodeNotFound},
			"negative part":         {-1, 0, 0, shared.CodeBadRequest},
			"offset past the end":   {0, 6, 0, shared.CodeBadRequest},
			"offset in a character": {1, 1, 0, shared.CodeBadRequest},
			"limit above the page":  {0, 0, shared.ToolPageBytes + 1, shared.CodeBadRequest},
		} {
			_, err := get(tc.part, tc.offset, tc.limit)
			assert.Equal(t, tc.code, shared.ErrorCode(err), "%s: %v", name, err)
		}
		_, err = s.ToolContentPage(ctx, shared.ToolContentGetRequest{SessionID: session.ID, MessageID: "missing"})
		assert.Equal(t, shared.CodeNotFound, shared.ErrorCode(err))
		other, err := s.AppendMessage(ctx, NewMessage{SessionID: session.ID, Type: shared.MessageAgent, Content: "hi", Status: shared.MessageComplete})
		require.NoError(t, err)
		_, err = s.ToolContentPage(ctx, shared.ToolContentGetRequest{SessionID: session.ID, MessageID: other.ID})
		assert.Equal(t, shared.CodeNotFound, shared.ErrorCode(err), "only a tool call has content parts")
		_, err = s.ToolContentPage(ctx, shared.ToolContentGetRequest{SessionID: mustSessionOfNewTask(t, s).ID, MessageID: call.ID})
		assert.Equal(t, shared.CodeNotFound, shared.ErrorCode(err), "another session's call")

		// Replacing the content replaces every part; absent metadata fields clear.
		updated, err := s.UpdateMessage(ctx, session.ID, call.ID, MessageUpdate{Metadata: &shared.MessageMetadata{ToolCallID: "t1"}, ReplaceMetadata: true, ToolBodies: []string{}})
		require.NoError(t, err)
		assert.Empty(t, updated.Metadata.Content)
		_, err = get(0, 0, 0)
		assert.Equal(t, shared.CodeNotFound, shared.ErrorCode(err))
	})
}
