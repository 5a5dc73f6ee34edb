package store

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

// mustSessionOfNewTask creates a workspace, a task and a session.
func mustSessionOfNewTask(tb testing.TB, s *Store) shared.Session {
	tb.Helper()
	task := mustTask(tb, s, shared.TaskCreateRequest{WorkspaceID: mustWorkspace(tb, s, "w").ID, Title: "t"})
	session, err := s.GetSession(context.Background(), mustSession(tb, s, task.ID))
	if err != nil {
		tb.Fatal(err)
	}
	return session
}

func TestMessagesTakeConsecutiveSeqs(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		session := mustSessionOfNewTask(t, s)
		for i := range 3 {
			m, err := s.AppendMessage(ctx, NewMessage{SessionID: session.ID, Type: shared.MessageAgent, Content: "x", Status: shared.MessageComplete, Metadata: &shared.MessageMetadata{ToolCallID: fmt.Sprint(i)}})
			if err != nil {
				t.Fatal(err)
			}
			if m.Seq != int64(i+1) || m.TaskID != session.TaskID || m.Metadata == nil || m.Metadata.ToolCallID != fmt.Sprint(i) {
				t.Fatalf("message %d = %+v", i, m)
			}
		}
		if _, err := s.AppendMessage(ctx, NewMessage{SessionID: "missing", Type: shared.MessageAgent, Status: shared.MessageComplete}); shared.ErrorCode(err) != shared.CodeNotFound {
			t.Fatalf("message of a missing session: %v", err)
		}
	})
}

// The first accepted request owns a client_message_id: concurrent
// duplicates store one row, a retry in the same task gets the stored
// message back, and a reuse in another task is a conflict.
func TestClientMessageIDIsOwnedOnce(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		session := mustSessionOfNewTask(t, s)
		other := mustSessionOfNewTask(t, s)

		var wg sync.WaitGroup
		var mu sync.Mutex
		created, ids := 0, map[string]bool{}
		for range 8 {
			wg.Go(func() {
				m, isNew, err := s.AddUserMessage(ctx, session.ID, "c-1", "hello")
				if err != nil {
					t.Errorf("AddUserMessage: %v", err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				ids[m.ID] = true
				if isNew {
					created++
				}
			})
		}
		wg.Wait()
		if created != 1 || len(ids) != 1 {
			t.Fatalf("8 concurrent sends created %d messages with %d ids, want 1 and 1", created, len(ids))
		}
		msgs, err := s.QueuedMessages(ctx, session.ID)
		if err != nil || len(msgs) != 1 || msgs[0].ClientMessageID != "c-1" || msgs[0].Status != shared.MessagePending {
			t.Fatalf("stored messages = %+v, %v", msgs, err)
		}
		if _, _, err := s.AddUserMessage(ctx, other.ID, "c-1", "hello"); shared.ErrorCode(err) != shared.CodeConflict {
			t.Fatalf("reuse in another task: %v", err)
		}
		if _, _, err := s.AddUserMessage(ctx, session.ID, "", "hello"); shared.ErrorCode(err) != shared.CodeBadRequest {
			t.Fatalf("missing client_message_id: %v", err)
		}
	})
}

// Streaming text is appended segment by segment and folded into the
// message when it finishes; readers always see the whole text so far.
func TestStreamingTextAppendsAndFolds(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		session := mustSessionOfNewTask(t, s)
		m, err := s.AppendMessage(ctx, NewMessage{SessionID: session.ID, Type: shared.MessageThinking, Content: "0 ", Status: shared.MessageStreaming})
		if err != nil {
			t.Fatal(err)
		}
		var want strings.Builder
		want.WriteString("0 ")
		for i := 1; i < 50; i++ {
			part := fmt.Sprintf("%d ", i)
			if i == 25 {
				part = "é€🐑 "
			}
			offset := want.Len()
			want.WriteString(part)
			if err := s.AppendText(ctx, m.ID, offset, part); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.GetMessage(ctx, session.ID, m.ID)
		if err != nil || got.Content != want.String() {
			t.Fatalf("streaming content = %q, %v; want %q", got.Content, err, want.String())
		}
		done, err := s.FinishMessage(ctx, m.ID, shared.MessageComplete)
		if err != nil || done.Content != want.String() || done.Status != shared.MessageComplete {
			t.Fatalf("finished = %+v, %v", done, err)
		}
		msgs, _, err := s.ListMessages(ctx, session.ID, 0, 0)
		if err != nil || len(msgs) != 1 || msgs[0].Content != want.String() {
			t.Fatalf("after finishing: %+v, %v", msgs, err)
		}
		if err := s.AppendText(ctx, "missing", 0, "x"); shared.ErrorCode(err) != shared.CodeNotFound {
			t.Fatalf("append to a missing message: %v", err)
		}
	})
}

// Concurrent appends share transactions (group commit): each stream keeps
// its order, and an append to a missing message fails alone, not the
// appends batched with it.
func TestConcurrentAppendsKeepEachStreamWhole(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		const streams, parts = 12, 40
		ids := make([]string, streams)
		sessions := make([]string, streams)
		for i := range ids {
			session := mustSessionOfNewTask(t, s)
			m, err := s.AppendMessage(ctx, NewMessage{SessionID: session.ID, Type: shared.MessageAgent, Status: shared.MessageStreaming})
			require.NoError(t, err)
			ids[i], sessions[i] = m.ID, session.ID
		}
		var wg sync.WaitGroup
		missing := make(chan error, parts)
		for i := range ids {
			wg.Go(func() {
				offset := 0
				for p := range parts {
					part := fmt.Sprintf("%d.%d ", i, p)
					assert.NoError(t, s.AppendText(ctx, ids[i], offset, part))
					offset += len(part)
				}
			})
		}
		wg.Go(func() {
			for range parts {
				missing <- s.AppendText(ctx, "missing", 0, "x")
			}
		})
		wg.Wait()
		close(missing)
		for err := range missing {
			assert.Equal(t, shared.CodeNotFound, shared.ErrorCode(err), "append to a missing message: %v", err)
		}
		for i, id := range ids {
			var want strings.Builder
			for p := range parts {
				fmt.Fprintf(&want, "%d.%d ", i, p)
			}
			got, err := s.GetMessage(ctx, sessions[i], id)
			require.NoError(t, err)
			assert.Equal(t, want.String(), got.Content, "stream %d", i)
		}
	})
}

// A retried write whose first attempt committed changes nothing: an
// append at an offset already holding the same text succeeds without
// storing it twice, other text there is a conflict, and a message appended
// again under its id is returned as stored.
func TestRetriedWritesAreIdempotent(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		session := mustSessionOfNewTask(t, s)
		in := NewMessage{ID: NewID(), SessionID: session.ID, Type: shared.MessageAgent, Content: "0 ", Status: shared.MessageStreaming}
		first, err := s.AppendMessage(ctx, in)
		require.NoError(t, err)
		again, err := s.AppendMessage(ctx, in)
		require.NoError(t, err)
		assert.Equal(t, first.ID, again.ID)
		assert.Equal(t, first.Seq, again.Seq)

		require.NoError(t, s.AppendText(ctx, first.ID, 2, "1 "))
		require.NoError(t, s.AppendText(ctx, first.ID, 2, "1 "), "the same append again")
		require.NoError(t, s.AppendText(ctx, first.ID, 4, "2 "))
		err = s.AppendText(ctx, first.ID, 4, "X ")
		assert.Equal(t, shared.CodeConflict, shared.ErrorCode(err), "other text at a stored offset: %v", err)

		got, err := s.GetMessage(ctx, session.ID, first.ID)
		require.NoError(t, err)
		assert.Equal(t, "0 1 2 ", got.Content)
		msgs, _, err := s.ListMessages(ctx, session.ID, 0, 0)
		require.NoError(t, err)
		assert.Len(t, msgs, 1, "the repeated append stored one message")
	})
}

func TestListMessagesPagesBackwardsBySeq(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		session := mustSessionOfNewTask(t, s)
		for range 7 {
			if _, err := s.AppendMessage(ctx, NewMessage{SessionID: session.ID, Type: shared.MessageAgent, Status: shared.MessageComplete}); err != nil {
				t.Fatal(err)
			}
		}
		page, more, err := s.ListMessages(ctx, session.ID, 0, 3)
		if err != nil || !more || len(page) != 3 || page[0].Seq != 5 || page[2].Seq != 7 {
			t.Fatalf("newest page = %+v, more %v, %v", page, more, err)
		}
		page, more, err = s.ListMessages(ctx, session.ID, 2, 3)
		if err != nil || more || len(page) != 1 || page[0].Seq != 1 {
			t.Fatalf("oldest page = %+v, more %v, %v", page, more, err)
		}
		if _, _, err := s.ListMessages(ctx, session.ID, 0, 501); shared.ErrorCode(err) != shared.CodeBadRequest {
			t.Fatalf("limit above the maximum: %v", err)
		}
	})
}

// A prompt to a session with nothing queued is stored already claimed;
// behind a queued prompt it waits its turn, and a retry claims nothing.
func TestAddAndClaimTakesOnlyAPromptWithNothingQueuedBeforeIt(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		session := mustSessionOfNewTask(t, s)

		first, created, claimed, err := s.AddAndClaimUserMessage(ctx, session.ID, "c-1", "now", "tok-1")
		require.NoError(t, err)
		assert.True(t, created && claimed, "an empty queue: claimed at once")
		queue, err := s.QueuedMessages(ctx, session.ID)
		require.NoError(t, err)
		assert.Empty(t, queue)
		require.NoError(t, s.MarkSent(ctx, first.ID, "tok-1"), "the claim's token owns the prompt")

		_, _, claimed, err = s.AddAndClaimUserMessage(ctx, session.ID, "c-1", "now", "tok-2")
		require.NoError(t, err)
		assert.False(t, claimed, "a retry is a duplicate, not a new claim")

		queued, _, err := s.AddUserMessage(ctx, session.ID, "c-2", "queued")
		require.NoError(t, err)
		third, created, claimed, err := s.AddAndClaimUserMessage(ctx, session.ID, "c-3", "after", "tok-3")
		require.NoError(t, err)
		assert.True(t, created)
		assert.False(t, claimed, "an older prompt is queued: the new one waits behind it")
		queue, err = s.QueuedMessages(ctx, session.ID)
		require.NoError(t, err)
		require.Len(t, queue, 2)
		assert.Equal(t, []string{queued.ID, third.ID}, []string{queue[0].ID, queue[1].ID})
	})
}

// Of racing dispatchers, one claims a prompt; only its token marks it sent.
func TestDispatchClaimHasOneWinner(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		session := mustSessionOfNewTask(t, s)
		m, _, err := s.AddUserMessage(ctx, session.ID, "c-9", "go")
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var winners []string
		for i := range 8 {
			wg.Go(func() {
				token := fmt.Sprintf("t%d", i)
				claimedMsg, ok, err := s.ClaimDispatch(ctx, m.ID, token)
				if err != nil {
					t.Errorf("claim: %v", err)
				}
				if ok {
					if claimedMsg.Seq <= m.Seq {
						t.Errorf("claimed prompt kept seq %d, want a later one than %d", claimedMsg.Seq, m.Seq)
					}
					mu.Lock()
					winners = append(winners, token)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(winners) != 1 {
			t.Fatalf("%d claims won, want 1", len(winners))
		}
		if err := s.MarkSent(ctx, m.ID, "not-"+winners[0]); shared.ErrorCode(err) != shared.CodeConflict {
			t.Fatalf("MarkSent with a losing token: %v", err)
		}
		if err := s.MarkSent(ctx, m.ID, winners[0]); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetMessage(ctx, session.ID, m.ID)
		if err != nil || got.Status != shared.MessageComplete {
			t.Fatalf("sent message = %+v, %v", got, err)
		}
		if _, ok, err := s.ClaimDispatch(ctx, m.ID, "late"); ok || err != nil {
			t.Fatalf("claiming a sent message = %v, %v", ok, err)
		}
	})
}

// Queued prompts stay out of the transcript until they are claimed, which
// places them after everything the agent said meanwhile.
func TestQueuedPromptsJoinTheTranscriptWhenClaimed(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		session := mustSessionOfNewTask(t, s)
		queued, _, err := s.AddUserMessage(ctx, session.ID, "q-1", "later")
		if err != nil {
			t.Fatal(err)
		}
		removed, _, err := s.AddUserMessage(ctx, session.ID, "q-2", "never")
		if err != nil {
			t.Fatal(err)
		}
		answer, err := s.AppendMessage(ctx, NewMessage{SessionID: session.ID, Type: shared.MessageAgent, Content: "busy", Status: shared.MessageComplete})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RemoveQueued(ctx, session.ID, removed.ID); err != nil {
			t.Fatal(err)
		}
		if err := s.RemoveQueued(ctx, session.ID, removed.ID); shared.ErrorCode(err) != shared.CodeNotFound {
			t.Fatalf("removing twice: %v", err)
		}
		queue, err := s.QueuedMessages(ctx, session.ID)
		if err != nil || len(queue) != 1 || queue[0].ID != queued.ID {
			t.Fatalf("queue = %+v, %v", queue, err)
		}
		transcript, _, err := s.ListMessages(ctx, session.ID, 0, 0)
		if err != nil || len(transcript) != 1 || transcript[0].ID != answer.ID {
			t.Fatalf("transcript while queued = %+v, %v", transcript, err)
		}
		if _, isNew, err := s.AddUserMessage(ctx, session.ID, "q-2", "never"); isNew || err != nil {
			t.Fatalf("retry of a removed prompt = new %v, %v; want the stored duplicate", isNew, err)
		}

		claimed, ok, err := s.ClaimDispatch(ctx, queued.ID, "tok")
		if err != nil || !ok || claimed.Seq <= answer.Seq {
			t.Fatalf("claim = %+v, %v, %v", claimed, ok, err)
		}
		transcript, _, err = s.ListMessages(ctx, session.ID, 0, 0)
		if err != nil || len(transcript) != 2 || transcript[1].ID != queued.ID {
			t.Fatalf("transcript after the claim = %+v, %v", transcript, err)
		}
		if n, err := s.ReleaseClaims(ctx); n != 1 || err != nil {
			t.Fatalf("ReleaseClaims = %d, %v", n, err)
		}
		if queue, _ := s.QueuedMessages(ctx, session.ID); len(queue) != 1 {
			t.Fatalf("a released claim goes back to the queue: %+v", queue)
		}
	})
}

// A request resolves only by its own pending id, once.
func TestResolveRequestMatchesItsPendingID(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		session := mustSessionOfNewTask(t, s)
		for _, id := range []string{"p-1", "p-2"} {
			_, err := s.AppendMessage(ctx, NewMessage{SessionID: session.ID, Type: shared.MessagePermissionRequest, Status: shared.MessagePending, PendingID: id, Metadata: &shared.MessageMetadata{ToolCallID: "call-" + id, Kind: "execute"}})
			if err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.ResolveRequest(ctx, session.ID, "p-2", shared.MessageResolved, &shared.MessageMetadata{SelectedOptionID: "allow"})
		if err != nil || got.PendingID != "p-2" || got.Status != shared.MessageResolved || got.Metadata == nil ||
			got.Metadata.SelectedOptionID != "allow" || got.Metadata.ToolCallID != "call-p-2" || got.Metadata.Kind != "execute" {
			t.Fatalf("resolved = %+v, %v", got, err)
		}
		if _, err := s.ResolveRequest(ctx, session.ID, "p-2", shared.MessageResolved, nil); shared.ErrorCode(err) != shared.CodeNotFound {
			t.Fatalf("resolving twice: %v", err)
		}
		pending, err := s.PendingRequests(ctx, session.ID)
		if err != nil || len(pending) != 1 || pending[0].PendingID != "p-1" {
			t.Fatalf("still pending = %+v, %v", pending, err)
		}
	})
}
