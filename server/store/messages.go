package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"github.com/herd-dev/herd/shared"
)

// Dispatch states of a user message (messages.dispatch_state); other
// messages have none. A pending message is queued: it is not part of the
// transcript until it is claimed for dispatch, which moves it to the end
// of the transcript. A removed message was taken out of the queue.
const (
	dispatchPending = "pending"
	dispatchClaimed = "claimed"
	dispatchSent    = "sent"
	dispatchRemoved = "removed"
)

// inTranscript selects the messages that belong to the transcript: not the
// queued or removed prompts.
const inTranscript = "dispatch_state NOT IN ('pending', 'removed')"

// Message list bounds.
const (
	defaultMessagePage = 100
	maxMessagePage     = 500
)

// NewMessage is a transcript entry to append to a session.
type NewMessage struct {
	// ID names the message; empty means a fresh one. A caller that names
	// it (NewID) can retry the append after a failure whose outcome was
	// lost: an append whose message is stored already returns it.
	ID        string
	SessionID string
	Type      shared.MessageType
	Content   string
	Status    shared.MessageState
	// PendingID names the permission or clarification request; optional.
	PendingID string
	// Metadata holds type-specific fields; optional.
	Metadata *shared.MessageMetadata
}

// AppendMessage appends a message to a session's transcript with the
// session's next seq.
func (s *Store) AppendMessage(ctx context.Context, in NewMessage) (shared.Message, error) {
	meta, err := encodeMetadata(in.Metadata)
	if err != nil {
		return shared.Message{}, err
	}
	id := in.ID
	if id == "" {
		id = NewID()
	}
	row := messageRow{
		ID: id, SessionID: in.SessionID, Type: string(in.Type), Content: in.Content,
		Status: string(in.Status), PendingID: optional(in.PendingID), Metadata: meta,
	}
	err = s.insertMessage(ctx, &row, nil)
	if in.ID != "" && isUniqueViolation(err) {
		// An earlier attempt of this append committed.
		var stored messageRow
		if err := s.write.WithContext(ctx).Where("id = ? AND session_id = ?", in.ID, in.SessionID).Take(&stored).Error; err != nil {
			return shared.Message{}, fmt.Errorf("load message %s: %w", in.ID, err)
		}
		return s.loadMessage(ctx, s.write, stored)
	}
	if err != nil {
		return shared.Message{}, err
	}
	return row.toMessage()
}

// AddUserMessage stores a prompt under its client_message_id, which the
// first accepted request owns. created is false when the id was already
// stored in the same task: the existing message is returned unchanged. An
// id owned by another task is a conflict. The message starts pending
// dispatch (see ClaimDispatch). attachments, as herd sends them to the
// agent, are stored with it.
func (s *Store) AddUserMessage(ctx context.Context, sessionID, clientMessageID, content string, attachments ...shared.Attachment) (msg shared.Message, created bool, err error) {
	msg, created, _, err = s.AddAndClaimUserMessage(ctx, sessionID, clientMessageID, content, "", attachments...)
	return msg, created, err
}

// AddAndClaimUserMessage is AddUserMessage that also claims the new prompt
// for dispatch with token, in the same transaction, when the session has
// no older prompt queued: what ClaimDispatch would do next, one write
// fewer on the path of a prompt to an idle session. An empty token, or an
// older queued prompt, leaves the new one queued (claimed false).
func (s *Store) AddAndClaimUserMessage(ctx context.Context, sessionID, clientMessageID, content, token string, attachments ...shared.Attachment) (msg shared.Message, created, claimed bool, err error) {
	if clientMessageID == "" {
		return shared.Message{}, false, false, shared.Errorf(shared.CodeBadRequest, "client_message_id is required")
	}
	meta, err := userMetadata(attachments)
	if err != nil {
		return shared.Message{}, false, false, err
	}
	row := messageRow{
		ID: NewID(), SessionID: sessionID, Type: string(shared.MessageUser), Content: content,
		Status: string(shared.MessagePending), ClientMessageID: &clientMessageID, Metadata: meta,
		DispatchState: dispatchPending,
	}
	var claim func(tx *gorm.DB, row *messageRow) error
	if token != "" {
		claim = func(tx *gorm.DB, row *messageRow) error {
			var queued int64
			err := tx.Model(&messageRow{}).Where("session_id = ? AND dispatch_state = ?", sessionID, dispatchPending).
				Limit(1).Count(&queued).Error
			if err != nil {
				return fmt.Errorf("look for queued prompts: %w", err)
			}
			if queued == 0 {
				row.DispatchState, row.ClaimToken = dispatchClaimed, token
			}
			return nil
		}
	}
	err = s.insertMessage(ctx, &row, claim)
	if err == nil {
		msg, err = row.toMessage()
		return msg, true, row.DispatchState == dispatchClaimed, err
	}
	if !isUniqueViolation(err) {
		return shared.Message{}, false, false, err
	}
	var existing messageRow
	if err := s.write.WithContext(ctx).Where("client_message_id = ?", clientMessageID).Take(&existing).Error; err != nil {
		return shared.Message{}, false, false, fmt.Errorf("load message %q: %w", clientMessageID, err)
	}
	session, err := s.GetSession(ctx, sessionID)
	if err != nil {
		return shared.Message{}, false, false, err
	}
	if existing.TaskID != session.TaskID {
		return shared.Message{}, false, false, shared.Errorf(shared.CodeConflict, "client_message_id %q belongs to another task; use a fresh id", clientMessageID)
	}
	msg, err = s.loadMessage(ctx, s.write, existing)
	return msg, false, false, err
}

// insertMessage gives row the session's next seq and inserts it, in one
// transaction; the seq counter lives on the session row, so appends to one
// session are serialised by that row. prepare, when not nil, may change
// row in the transaction before it is inserted.
func (s *Store) insertMessage(ctx context.Context, row *messageRow, prepare func(tx *gorm.DB, row *messageRow) error) error {
	created := now()
	row.CreatedAt, row.UpdatedAt = created, created
	return s.write.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var session sessionRow
		err := tx.Raw(`UPDATE sessions SET next_message_seq = next_message_seq + 1
			WHERE id = ? RETURNING task_id, next_message_seq`, row.SessionID).Scan(&session).Error
		if err != nil {
			return fmt.Errorf("allocate message seq: %w", err)
		}
		if session.TaskID == "" {
			return sessionNotFound(row.SessionID)
		}
		row.TaskID, row.Seq = session.TaskID, session.NextMessageSeq-1
		if prepare != nil {
			if err := prepare(tx, row); err != nil {
				return err
			}
		}
		if err := tx.Create(row).Error; err != nil {
			return fmt.Errorf("insert message: %w", err)
		}
		if completeAgent(row.Type, row.Status) {
			if err := recordLine(tx, agentLineColumn, row.SessionID, row.Content); err != nil {
				return fmt.Errorf("record agent line: %w", err)
			}
		}
		return nil
	})
}

// completeAgent reports whether a message of type typ in status is a
// complete agent message, the kind whose first line a task row shows.
func completeAgent(typ, status string) bool {
	return typ == string(shared.MessageAgent) && status == string(shared.MessageComplete)
}

// FinishMessage folds a message's appended text into its content and sets
// its final status, in one transaction. An agent message that ends
// complete becomes its session's latest agent line (see previewExcerpt).
func (s *Store) FinishMessage(ctx context.Context, messageID string, status shared.MessageState) (shared.Message, error) {
	var out shared.Message
	err := s.write.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var row messageRow
		err := tx.Where("id = ?", messageID).Take(&row).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return shared.Errorf(shared.CodeNotFound, "message %q not found", messageID)
		}
		if err != nil {
			return fmt.Errorf("load message %s: %w", messageID, err)
		}
		if out, err = s.loadMessage(ctx, tx, row); err != nil {
			return err
		}
		out.Status, out.UpdatedAt = status, now()
		err = tx.Model(&messageRow{}).Where("id = ?", messageID).Updates(map[string]any{
			"content": out.Content, "status": string(status), "updated_at": out.UpdatedAt,
		}).Error
		if err != nil {
			return fmt.Errorf("finish message %s: %w", messageID, err)
		}
		if completeAgent(row.Type, string(status)) {
			if err := recordLine(tx, agentLineColumn, row.SessionID, out.Content); err != nil {
				return fmt.Errorf("record agent line of message %s: %w", messageID, err)
			}
		}
		return tx.Where("message_id = ?", messageID).Delete(&segmentRow{}).Error
	})
	return out, err
}

// GetMessage returns one message of a session with its full content.
func (s *Store) GetMessage(ctx context.Context, sessionID, messageID string) (shared.Message, error) {
	var row messageRow
	err := s.read.WithContext(ctx).Where("id = ? AND session_id = ?", messageID, sessionID).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return shared.Message{}, shared.Errorf(shared.CodeNotFound, "message %q not found in session %q", messageID, sessionID)
	}
	if err != nil {
		return shared.Message{}, fmt.Errorf("load message %s: %w", messageID, err)
	}
	return s.loadMessage(ctx, s.read, row)
}

// ListMessages returns the newest limit messages of a session with seq
// below beforeSeq (all when zero), in ascending seq order, and whether
// older ones exist. It takes two queries whatever the page size.
func (s *Store) ListMessages(ctx context.Context, sessionID string, beforeSeq int64, limit int) ([]shared.Message, bool, error) {
	switch {
	case limit < 0 || limit > maxMessagePage:
		return nil, false, shared.Errorf(shared.CodeBadRequest, "limit must be between 1 and %d (0 means %d)", maxMessagePage, defaultMessagePage)
	case limit == 0:
		limit = defaultMessagePage
	}
	q := s.read.WithContext(ctx).Where("session_id = ? AND "+inTranscript, sessionID)
	if beforeSeq > 0 {
		q = q.Where("seq < ?", beforeSeq)
	}
	var rows []messageRow
	if err := q.Order("seq DESC").Limit(limit + 1).Find(&rows).Error; err != nil {
		return nil, false, fmt.Errorf("list messages of session %s: %w", sessionID, err)
	}
	hasMore := len(rows) > limit
	if hasMore {
		rows = rows[:limit]
	}
	appended, err := s.segmentsOf(ctx, s.read, rows)
	if err != nil {
		return nil, false, err
	}
	out := make([]shared.Message, len(rows))
	for i, r := range rows {
		m, err := r.toMessage()
		if err != nil {
			return nil, false, err
		}
		m.Content += appended[r.ID]
		out[len(rows)-1-i] = m
	}
	return out, hasMore, nil
}

// loadMessage converts a row, adding its appended text.
func (s *Store) loadMessage(ctx context.Context, db *gorm.DB, row messageRow) (shared.Message, error) {
	appended, err := s.segmentsOf(ctx, db, []messageRow{row})
	if err != nil {
		return shared.Message{}, err
	}
	m, err := row.toMessage()
	m.Content += appended[row.ID]
	return m, err
}

// segmentsOf returns the appended text of each streaming message among
// rows, in one query.
func (s *Store) segmentsOf(ctx context.Context, db *gorm.DB, rows []messageRow) (map[string]string, error) {
	var ids []string
	for _, r := range rows {
		if r.Status == string(shared.MessageStreaming) {
			ids = append(ids, r.ID)
		}
	}
	out := make(map[string]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var segs []segmentRow
	err := db.WithContext(ctx).Where("message_id IN ?", ids).Order("message_id, position").Find(&segs).Error
	if err != nil {
		return nil, fmt.Errorf("load message segments: %w", err)
	}
	parts := make(map[string]*strings.Builder, len(ids))
	for _, sg := range segs {
		b := parts[sg.MessageID]
		if b == nil {
			b = &strings.Builder{}
			parts[sg.MessageID] = b
		}
		b.WriteString(sg.Text)
	}
	for id, b := range parts {
		out[id] = b.String()
	}
	return out, nil
}

// ClaimDispatch claims a pending user message for dispatch under token and
// gives it the session's next seq, so the prompt takes its place in the
// transcript when it is sent rather than when it was queued. Only one
// claimer wins; for everyone else the returned message is zero and claimed
// is false, so a prompt is handed to an agent at most once per claim.
func (s *Store) ClaimDispatch(ctx context.Context, messageID, token string) (msg shared.Message, claimed bool, err error) {
	err = s.write.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var row messageRow
		err := tx.Where("id = ? AND dispatch_state = ?", messageID, dispatchPending).Take(&row).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("load message %s: %w", messageID, err)
		}
		var session sessionRow
		err = tx.Raw(`UPDATE sessions SET next_message_seq = next_message_seq + 1
			WHERE id = ? RETURNING next_message_seq`, row.SessionID).Scan(&session).Error
		if err != nil {
			return fmt.Errorf("allocate message seq: %w", err)
		}
		row.Seq, row.DispatchState, row.ClaimToken, row.UpdatedAt = session.NextMessageSeq-1, dispatchClaimed, token, now()
		res := tx.Model(&messageRow{}).Where("id = ? AND dispatch_state = ?", messageID, dispatchPending).Updates(map[string]any{
			"seq": row.Seq, "dispatch_state": row.DispatchState, "claim_token": token, "updated_at": row.UpdatedAt,
		})
		if res.Error != nil {
			return fmt.Errorf("claim message %s: %w", messageID, res.Error)
		}
		if res.RowsAffected == 1 {
			claimed = true
			msg, err = row.toMessage()
		}
		return err
	})
	return msg, claimed, err
}

// QueuedMessages returns a session's queued prompts, oldest first.
func (s *Store) QueuedMessages(ctx context.Context, sessionID string) ([]shared.Message, error) {
	var rows []messageRow
	err := s.read.WithContext(ctx).Where("session_id = ? AND dispatch_state = ?", sessionID, dispatchPending).
		Order("seq").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("list queued prompts of session %s: %w", sessionID, err)
	}
	return toMessages(rows)
}

// RemoveQueued takes a queued prompt out of the queue. The message stays
// stored (removed), so a retry of its client_message_id is still a
// duplicate rather than a new prompt.
func (s *Store) RemoveQueued(ctx context.Context, sessionID, messageID string) error {
	res := s.write.WithContext(ctx).Model(&messageRow{}).
		Where("id = ? AND session_id = ? AND dispatch_state = ?", messageID, sessionID, dispatchPending).
		Updates(map[string]any{"dispatch_state": dispatchRemoved, "status": string(shared.MessageCancelled), "updated_at": now()})
	if res.Error != nil {
		return fmt.Errorf("remove queued prompt %s: %w", messageID, res.Error)
	}
	if res.RowsAffected == 0 {
		return shared.Errorf(shared.CodeNotFound, "no queued prompt %q in session %q", messageID, sessionID)
	}
	return nil
}

// PendingRequests returns a session's unanswered permission and
// clarification requests, oldest first.
func (s *Store) PendingRequests(ctx context.Context, sessionID string) ([]shared.Message, error) {
	var rows []messageRow
	err := s.read.WithContext(ctx).
		Where("session_id = ? AND status = ? AND type IN ?", sessionID, string(shared.MessagePending),
			[]string{string(shared.MessagePermissionRequest), string(shared.MessageClarificationRequest)}).
		Order("seq").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("list pending requests of session %s: %w", sessionID, err)
	}
	return toMessages(rows)
}

// ResolveRequest marks a session's pending permission or clarification
// request resolved (or another terminal status), merging metadata into its
// metadata. Only a pending request of that session with that pending id
// can be resolved.
func (s *Store) ResolveRequest(ctx context.Context, sessionID, pendingID string, status shared.MessageState, metadata *shared.MessageMetadata) (shared.Message, error) {
	var out shared.Message
	err := s.write.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var row messageRow
		err := tx.Where("session_id = ? AND pending_id = ? AND status = ?", sessionID, pendingID, string(shared.MessagePending)).Take(&row).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return shared.Errorf(shared.CodeNotFound, "no pending request %q in session %q", pendingID, sessionID)
		}
		if err != nil {
			return fmt.Errorf("load request %s: %w", pendingID, err)
		}
		if out, err = row.toMessage(); err != nil {
			return err
		}
		var meta string
		if out.Metadata, meta, err = mergeMetadata(out.Metadata, metadata); err != nil {
			return err
		}
		out.Status, out.UpdatedAt = status, now()
		return tx.Model(&messageRow{}).Where("id = ?", row.ID).Updates(map[string]any{
			"status": string(status), "metadata": meta, "updated_at": out.UpdatedAt,
		}).Error
	})
	return out, err
}

// ReleaseClaims returns every claimed but unsent prompt to the queue; it
// runs at start-up, when the process that claimed them is gone.
func (s *Store) ReleaseClaims(ctx context.Context) (int64, error) {
	res := s.write.WithContext(ctx).Model(&messageRow{}).Where("dispatch_state = ?", dispatchClaimed).
		Updates(map[string]any{"dispatch_state": dispatchPending, "claim_token": "", "updated_at": now()})
	if res.Error != nil {
		return 0, fmt.Errorf("release dispatch claims: %w", res.Error)
	}
	return res.RowsAffected, nil
}

func toMessages(rows []messageRow) ([]shared.Message, error) {
	out := make([]shared.Message, len(rows))
	for i, r := range rows {
		m, err := r.toMessage()
		if err != nil {
			return nil, err
		}
		out[i] = m
	}
	return out, nil
}

// MarkSent records that the agent accepted a claimed message, completing
// it, and makes it its session's latest prompt line (see previewExcerpt),
// in one transaction. Only the holder of the claim token can do so.
func (s *Store) MarkSent(ctx context.Context, messageID, token string) error {
	at := now()
	return s.write.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var sent []messageRow
		err := tx.Raw(`UPDATE messages SET dispatch_state = ?, dispatched_at = ?, status = ?, updated_at = ?
			WHERE id = ? AND dispatch_state = ? AND claim_token = ? RETURNING session_id, content`,
			dispatchSent, at, string(shared.MessageComplete), at, messageID, dispatchClaimed, token).Scan(&sent).Error
		if err != nil {
			return fmt.Errorf("mark message %s sent: %w", messageID, err)
		}
		if len(sent) == 0 {
			return shared.Errorf(shared.CodeConflict, "message %q is not claimed with that token", messageID)
		}
		if err := recordLine(tx, promptLineColumn, sent[0].SessionID, sent[0].Content); err != nil {
			return fmt.Errorf("record prompt line of message %s: %w", messageID, err)
		}
		return nil
	})
}

// MessageUpdate changes a message; nil fields stay as they are, and the
// fields Metadata sets replace the stored ones (see mergeMetadata).
type MessageUpdate struct {
	Status   *shared.MessageState
	Content  *string
	Metadata *shared.MessageMetadata
	// ReplaceMetadata makes Metadata the whole metadata rather than a
	// merge, so a field it leaves empty is cleared (a tool call whose
	// update empties its content).
	ReplaceMetadata bool
	// ToolBodies, when not nil, replaces the bodies of a tool call's
	// content parts in the same transaction (see ToolContentPage).
	ToolBodies []string
}

// UpdateMessage applies an update to a message of a session and returns
// the message as stored.
func (s *Store) UpdateMessage(ctx context.Context, sessionID, messageID string, u MessageUpdate) (shared.Message, error) {
	var out shared.Message
	err := s.write.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var row messageRow
		err := tx.Where("id = ? AND session_id = ?", messageID, sessionID).Take(&row).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return shared.Errorf(shared.CodeNotFound, "message %q not found in session %q", messageID, sessionID)
		}
		if err != nil {
			return fmt.Errorf("load message %s: %w", messageID, err)
		}
		if out, err = s.loadMessage(ctx, tx, row); err != nil {
			return err
		}
		if u.Status != nil {
			out.Status = *u.Status
		}
		if u.Content != nil {
			out.Content = *u.Content
		}
		var meta string
		if u.ReplaceMetadata {
			out.Metadata = u.Metadata
			meta, err = encodeMetadata(u.Metadata)
		} else {
			out.Metadata, meta, err = mergeMetadata(out.Metadata, u.Metadata)
		}
		if err != nil {
			return err
		}
		if u.ToolBodies != nil {
			if err := replaceToolBodies(tx, messageID, u.ToolBodies); err != nil {
				return err
			}
		}
		out.UpdatedAt = now()
		err = tx.Model(&messageRow{}).Where("id = ?", messageID).Updates(map[string]any{
			"status": string(out.Status), "content": out.Content, "metadata": meta, "updated_at": out.UpdatedAt,
		}).Error
		if err != nil {
			return fmt.Errorf("update message %s: %w", messageID, err)
		}
		// The content now holds any appended text.
		return tx.Where("message_id = ?", messageID).Delete(&segmentRow{}).Error
	})
	return out, err
}

// MessageByClientID returns the message that owns a client_message_id;
// found is false when none does.
func (s *Store) MessageByClientID(ctx context.Context, clientMessageID string) (msg shared.Message, found bool, err error) {
	var row messageRow
	err = s.write.WithContext(ctx).Where("client_message_id = ?", clientMessageID).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return shared.Message{}, false, nil
	}
	if err != nil {
		return shared.Message{}, false, fmt.Errorf("load message %q: %w", clientMessageID, err)
	}
	msg, err = s.loadMessage(ctx, s.write, row)
	return msg, err == nil, err
}

// StreamingMessageIDs returns the ids of the messages still streaming, in
// every session; start-up recovery finishes them.
func (s *Store) StreamingMessageIDs(ctx context.Context) ([]string, error) {
	var ids []string
	err := s.read.WithContext(ctx).Model(&messageRow{}).Where("status = ?", string(shared.MessageStreaming)).
		Order("session_id, seq").Pluck("id", &ids).Error
	if err != nil {
		return nil, fmt.Errorf("list streaming messages: %w", err)
	}
	return ids, nil
}

// CancelPendingRequests marks every unanswered permission and
// clarification request cancelled; at start-up no agent waits on them.
func (s *Store) CancelPendingRequests(ctx context.Context) (int64, error) {
	res := s.write.WithContext(ctx).Model(&messageRow{}).
		Where("status = ? AND type IN ?", string(shared.MessagePending),
			[]string{string(shared.MessagePermissionRequest), string(shared.MessageClarificationRequest)}).
		Updates(map[string]any{"status": string(shared.MessageCancelled), "updated_at": now()})
	if res.Error != nil {
		return 0, fmt.Errorf("cancel pending requests: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// ReleaseClaim returns a claimed prompt to the queue, provided token still
// holds the claim.
func (s *Store) ReleaseClaim(ctx context.Context, messageID, token string) error {
	res := s.write.WithContext(ctx).Model(&messageRow{}).
		Where("id = ? AND dispatch_state = ? AND claim_token = ?", messageID, dispatchClaimed, token).
		Updates(map[string]any{"dispatch_state": dispatchPending, "claim_token": "", "updated_at": now()})
	if res.Error != nil {
		return fmt.Errorf("release claim on message %s: %w", messageID, res.Error)
	}
	return nil
}

// encodeMetadata is the stored form of a message's metadata: "{}" for none.
func encodeMetadata(m *shared.MessageMetadata) (string, error) {
	if m == nil {
		return "{}", nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("encode message metadata: %w", err)
	}
	return string(b), nil
}

// mergeMetadata returns stored with every field update sets replaced (a
// tool call's update that carries new output keeps the input it had), and
// its stored form. The merge works on the JSON objects, so it needs no
// list of fields; an empty result is no metadata.
func mergeMetadata(stored, update *shared.MessageMetadata) (*shared.MessageMetadata, string, error) {
	if update == nil {
		encoded, err := encodeMetadata(stored)
		return stored, encoded, err
	}
	fields := map[string]json.RawMessage{}
	for _, m := range []*shared.MessageMetadata{stored, update} {
		if m == nil {
			continue
		}
		b, err := json.Marshal(m)
		if err != nil {
			return nil, "", fmt.Errorf("encode message metadata: %w", err)
		}
		if err := json.Unmarshal(b, &fields); err != nil {
			return nil, "", fmt.Errorf("merge message metadata: %w", err)
		}
	}
	if len(fields) == 0 {
		return nil, "{}", nil
	}
	b, err := json.Marshal(fields)
	if err != nil {
		return nil, "", fmt.Errorf("encode message metadata: %w", err)
	}
	var out shared.MessageMetadata
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, "", fmt.Errorf("decode message metadata: %w", err)
	}
	return &out, string(b), nil
}
