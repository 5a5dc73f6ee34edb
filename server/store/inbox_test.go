package store

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

// The inbox reads a workspace's unanswered requests, newest first, with
// their tool kind and options and a bounded title; answered and withdrawn
// ones, other workspaces' and other message types are not in it. The count
// agrees, the limit reports that more exist, and a task's own list is in
// transcript order.
func TestOpenRequestsOfAWorkspace(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		ws := mustWorkspace(t, s, "mine")
		other := mustWorkspace(t, s, "other")
		taskA := mustTask(t, s, shared.TaskCreateRequest{WorkspaceID: ws.ID, Title: "A"})
		taskB := mustTask(t, s, shared.TaskCreateRequest{WorkspaceID: ws.ID, Title: "B"})
		taskO := mustTask(t, s, shared.TaskCreateRequest{WorkspaceID: other.ID, Title: "O"})
		sa, sb, so := mustSession(t, s, taskA.ID), mustSession(t, s, taskB.ID), mustSession(t, s, taskO.ID)
		options := []shared.PermissionOption{
			{OptionID: "allow", Name: "Allow once", Kind: "allow_once"},
			{OptionID: "reject", Name: "Reject", Kind: "reject_once"},
		}
		ask := func(session string, typ shared.MessageType, pending, content string) shared.Message {
			t.Helper()
			md := &shared.MessageMetadata{Kind: "edit", Options: options}
			if typ == shared.MessageClarificationRequest {
				md = nil
			}
			m, err := s.AppendMessage(ctx, NewMessage{SessionID: session, Type: typ, Status: shared.MessagePending,
				PendingID: pending, Content: content, Metadata: md})
			require.NoError(t, err)
			return m
		}
		long := strings.Repeat("é", shared.MaxInboxTitleBytes)
		ask(sa, shared.MessagePermissionRequest, "p1", "Edit notes.txt")
		ask(sb, shared.MessageClarificationRequest, "q1", long)
		ask(sa, shared.MessagePermissionRequest, "p2", "Run make test")
		ask(so, shared.MessagePermissionRequest, "o1", "elsewhere")
		ask(sa, shared.MessagePermissionRequest, "gone", "answered")
		_, err := s.ResolveRequest(ctx, sa, "gone", shared.MessageResolved, &shared.MessageMetadata{SelectedOptionID: "allow"})
		require.NoError(t, err)
		ask(sb, shared.MessagePermissionRequest, "withdrawn", "withdrawn")
		_, err = s.ResolveRequest(ctx, sb, "withdrawn", shared.MessageCancelled, nil)
		require.NoError(t, err)
		_, err = s.AppendMessage(ctx, NewMessage{SessionID: sa, Type: shared.MessageAgent, Status: shared.MessagePending, Content: "streaming"})
		require.NoError(t, err)

		reqs, more, err := s.OpenRequests(ctx, ws.ID, 10)
		require.NoError(t, err)
		assert.False(t, more)
		require.Equal(t, []string{"p2", "q1", "p1"}, pendingIDs(reqs), "newest first, only this workspace's open requests")
		p2 := reqs[0]
		assert.Equal(t, shared.InboxRequest{
			WorkspaceID: ws.ID, TaskID: taskA.ID, SessionID: sa, MessageID: p2.MessageID, PendingID: "p2",
			Kind: shared.InboxPermission, Title: "Run make test", ToolKind: "edit", Options: options, CreatedAt: p2.CreatedAt,
		}, p2)
		q1 := reqs[1]
		assert.Equal(t, shared.InboxClarification, q1.Kind)
		assert.LessOrEqual(t, len(q1.Title), shared.MaxInboxTitleBytes)
		assert.True(t, utf8.ValidString(q1.Title) && strings.HasSuffix(q1.Title, shared.Ellipsis), "cut on a character, marked")

		n, err := s.CountOpenRequests(ctx, ws.ID)
		require.NoError(t, err)
		assert.Equal(t, 3, n)

		first, more, err := s.OpenRequests(ctx, ws.ID, 2)
		require.NoError(t, err)
		assert.True(t, more, "a third one exists")
		assert.Equal(t, []string{"p2", "q1"}, pendingIDs(first))

		ofA, err := s.OpenRequestsOfTask(ctx, taskA.ID, ws.ID)
		require.NoError(t, err)
		assert.Equal(t, []string{"p1", "p2"}, pendingIDs(ofA), "a task's requests in transcript order")

		gone, err := s.RequestByPendingID(ctx, sa, "gone")
		require.NoError(t, err)
		assert.Equal(t, shared.MessageResolved, gone.Status)
		assert.Equal(t, "allow", gone.Metadata.SelectedOptionID)
		_, err = s.RequestByPendingID(ctx, sb, "p1")
		assert.Equal(t, shared.CodeNotFound, shared.ErrorCode(err), "a pending id names a request of its own session only")
	})
}

func pendingIDs(reqs []shared.InboxRequest) []string {
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = r.PendingID
	}
	return out
}

// SQLite reads a workspace's open requests through the partial index of
// open requests, so the inbox costs what is open, not every transcript.
func TestOpenRequestsUseTheirIndex(t *testing.T) {
	s := MustOpen(t, "sqlite")
	var plan []struct {
		Detail string `gorm:"column:detail"`
	}
	err := s.read.Raw("EXPLAIN QUERY PLAN "+openRequestsQuery,
		inboxTitleChars, "w", 10).Scan(&plan).Error
	require.NoError(t, err)
	var details []string
	for _, p := range plan {
		details = append(details, p.Detail)
	}
	assert.Contains(t, strings.Join(details, "\n"), "messages_open_requests")
}
