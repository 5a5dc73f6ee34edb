package store

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/herd-dev/herd/shared"
)

// openRequest is the condition of an unanswered request, spelled as
// literals so that the planner uses the partial index
// messages_open_requests (migration 00013), whose condition it is.
const openRequest = `m.status = 'pending' AND m.type IN ('permission_request', 'clarification_request')`

// openFirst joins requests to their tasks with the requests read first: a
// CROSS JOIN keeps SQLite from starting at the workspace's tasks and
// probing every task's messages (PostgreSQL plans it as any inner join).
const openFirst = `messages m CROSS JOIN tasks t`

// inboxTitleChars bounds the characters of a request's content read for
// its inbox title; the title is cut to shared.MaxInboxTitleBytes after.
const inboxTitleChars = shared.MaxInboxTitleBytes + 1

// inboxColumns are the columns of messageRow the inbox reads, the
// content bounded.
const inboxColumns = `m.id, m.session_id, m.task_id, m.seq, m.type, substr(m.content, 1, ?) AS content,
	m.status, m.pending_id, m.metadata, m.created_at, m.updated_at`

// openRequestsQuery reads a workspace's newest open requests: title bound,
// workspace id, limit.
const openRequestsQuery = `SELECT ` + inboxColumns + ` FROM ` + openFirst + `
	WHERE ` + openRequest + ` AND t.id = m.task_id AND t.workspace_id = ? ORDER BY m.created_at DESC, m.id DESC LIMIT ?`

// OpenRequests returns a workspace's unanswered permission and
// clarification requests, newest first, at most limit of them; more
// reports whether there were others.
func (s *Store) OpenRequests(ctx context.Context, workspaceID string, limit int) (requests []shared.InboxRequest, more bool, err error) {
	var rows []messageRow
	err = s.read.WithContext(ctx).Raw(openRequestsQuery, inboxTitleChars, workspaceID, limit+1).Scan(&rows).Error
	if err != nil {
		return nil, false, fmt.Errorf("list open requests of workspace %s: %w", workspaceID, err)
	}
	if len(rows) > limit {
		rows, more = rows[:limit], true
	}
	requests, err = toInboxRequests(rows, workspaceID)
	return requests, more, err
}

// OpenRequestsOfTask returns the unanswered requests of a task of
// workspaceID, oldest first.
func (s *Store) OpenRequestsOfTask(ctx context.Context, taskID, workspaceID string) ([]shared.InboxRequest, error) {
	var rows []messageRow
	err := s.read.WithContext(ctx).Raw(`SELECT `+inboxColumns+` FROM messages m
		WHERE m.task_id = ? AND `+openRequest+` ORDER BY m.seq, m.id`, inboxTitleChars, taskID).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("list open requests of task %s: %w", taskID, err)
	}
	return toInboxRequests(rows, workspaceID)
}

// CountOpenRequests counts a workspace's unanswered requests.
func (s *Store) CountOpenRequests(ctx context.Context, workspaceID string) (int, error) {
	var n int64
	err := s.read.WithContext(ctx).Raw(`SELECT COUNT(*) FROM `+openFirst+`
		WHERE `+openRequest+` AND t.id = m.task_id AND t.workspace_id = ?`, workspaceID).Scan(&n).Error
	if err != nil {
		return 0, fmt.Errorf("count open requests of workspace %s: %w", workspaceID, err)
	}
	return int(n), nil
}

// RequestByPendingID returns a session's permission or clarification
// request by its pending id, whatever its status.
func (s *Store) RequestByPendingID(ctx context.Context, sessionID, pendingID string) (shared.Message, error) {
	var row messageRow
	err := s.read.WithContext(ctx).
		Where("session_id = ? AND pending_id = ? AND type IN ?", sessionID, pendingID,
			[]string{string(shared.MessagePermissionRequest), string(shared.MessageClarificationRequest)}).
		Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return shared.Message{}, shared.Errorf(shared.CodeNotFound, "no request %q in session %q", pendingID, sessionID)
	}
	if err != nil {
		return shared.Message{}, fmt.Errorf("load request %s: %w", pendingID, err)
	}
	return row.toMessage()
}

func toInboxRequests(rows []messageRow, workspaceID string) ([]shared.InboxRequest, error) {
	out := make([]shared.InboxRequest, 0, len(rows))
	for _, r := range rows {
		m, err := r.toMessage()
		if err != nil {
			return nil, err
		}
		out = append(out, InboxRequestOf(m, workspaceID))
	}
	return out, nil
}

// InboxRequestOf is the inbox's bounded view of a request message of a
// workspace's task.
func InboxRequestOf(m shared.Message, workspaceID string) shared.InboxRequest {
	req := shared.InboxRequest{
		WorkspaceID: workspaceID, TaskID: m.TaskID, SessionID: m.SessionID, MessageID: m.ID,
		PendingID: m.PendingID, Kind: shared.InboxClarification,
		Title: shared.Clip(m.Content, shared.MaxInboxTitleBytes), CreatedAt: m.CreatedAt,
	}
	if m.Type == shared.MessagePermissionRequest {
		req.Kind = shared.InboxPermission
	}
	if md := m.Metadata; md != nil {
		req.ToolKind = md.Kind
		req.Options = md.Options[:min(len(md.Options), shared.MaxInboxOptions)]
	}
	return req
}
