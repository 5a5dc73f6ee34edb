package store

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

// The latest turn's prompt is the newest one claimed or sent: a queued
// prompt is no turn's yet, however recently stored, a removed one never
// will be, and a claimed one is the latest turn's even though it was never
// sent.
func TestLatestPromptIsTheNewestClaimedOrSent(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		session := mustSessionOfNewTask(t, s)
		latest := func() (string, bool) {
			t.Helper()
			id, sent, err := s.LatestPrompt(ctx, session.ID)
			require.NoError(t, err)
			return id, sent
		}

		id, sent := latest()
		assert.Empty(t, id, "no prompt yet")
		assert.False(t, sent)

		first, created, claimed, err := s.AddAndClaimUserMessage(ctx, session.ID, "c-1", "first", "tok-1")
		require.NoError(t, err)
		require.True(t, created && claimed)
		id, sent = latest()
		assert.Equal(t, first.ID, id, "claimed at once")
		assert.False(t, sent, "claimed, not sent")

		require.NoError(t, s.MarkSent(ctx, first.ID, "tok-1"))
		queued, _, err := s.AddUserMessage(ctx, session.ID, "c-2", "queued behind it")
		require.NoError(t, err)
		removed, _, err := s.AddUserMessage(ctx, session.ID, "c-3", "taken out")
		require.NoError(t, err)
		require.NoError(t, s.RemoveQueued(ctx, session.ID, removed.ID))
		_, err = s.AppendMessage(ctx, NewMessage{SessionID: session.ID, Type: shared.MessageAgent, Content: "answer", Status: shared.MessageComplete})
		require.NoError(t, err)
		id, sent = latest()
		assert.Equal(t, first.ID, id, "neither a queued nor a removed prompt is a turn's")
		assert.True(t, sent)

		_, ok, err := s.ClaimDispatch(ctx, queued.ID, "tok-2")
		require.NoError(t, err)
		require.True(t, ok)
		id, sent = latest()
		assert.Equal(t, queued.ID, id, "the claim makes it the latest turn's")
		assert.False(t, sent, "its turn never sent it")

		other := mustSessionOfNewTask(t, s)
		id, _, err = s.LatestPrompt(ctx, other.ID)
		require.NoError(t, err)
		assert.Empty(t, id, "another session's prompts are not its own")
	})
}
