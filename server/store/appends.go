package store

import (
	"context"
	"fmt"
	"sync"

	"gorm.io/gorm"

	"github.com/herd-dev/herd/shared"
)

// appendQueue group-commits AppendText calls. Fifty streaming sessions
// each flushing ten times a second would otherwise take 500 write
// transactions a second, and every prompt, transition and summary would
// queue behind all of them for the single SQLite writer. Queued appends are
// instead written together, one transaction per batch, so a prompt waits
// for at most the batch being written.
//
// There is no flushing goroutine: the caller that finds no batch being
// written leads one. When its batch is committed and more appends are
// waiting, it promotes the oldest waiter to lead the next batch, so no
// caller writes other callers' appends for longer than one batch.
type appendQueue struct {
	mu sync.Mutex
	// pending are the appends not yet taken into a batch, oldest first.
	pending []*appendRequest
	// leading is true while some caller writes a batch or has been
	// promoted to write the next one.
	leading bool
}

// appendRequest is one AppendText call waiting for its batch.
type appendRequest struct {
	messageID, text string
	offset          int
	// err is the append's outcome; read it after done is closed.
	err  error
	done chan struct{}
	// lead is closed when the request's caller is to write the next batch.
	lead chan struct{}
}

// AppendText adds text to a streaming message at byte offset offset: the
// length of the message's text before it (its first content plus every
// earlier append). Only the new bytes are written (a segment row keyed by
// its offset), never the whole content, so a long stream costs O(n) bytes
// in all. It returns once the text is committed; concurrent appends share
// a transaction (see appendQueue).
//
// An append is idempotent: retried after a failure whose outcome was lost
// (the connection broke during the commit), it finds its own segment
// stored and succeeds, so a retry never stores the text twice. A different
// text already stored at that offset is a conflict.
func (s *Store) AppendText(ctx context.Context, messageID string, offset int, text string) error {
	if text == "" {
		return nil
	}
	if offset < 0 {
		return fmt.Errorf("append to message %s: negative offset %d", messageID, offset)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	req := &appendRequest{messageID: messageID, offset: offset, text: text, done: make(chan struct{}), lead: make(chan struct{})}
	q := &s.appends
	q.mu.Lock()
	q.pending = append(q.pending, req)
	lead := !q.leading
	q.leading = true
	q.mu.Unlock()
	if !lead {
		select {
		case <-req.done:
			return req.err
		case <-req.lead:
		}
	}
	s.writeAppendBatch(ctx)
	<-req.done
	return req.err
}

// writeAppendBatch writes every pending append in one transaction, then
// hands the lead to the oldest append queued meanwhile, if any. The batch
// is written whatever happens to the leader's context: it holds other
// callers' appends.
func (s *Store) writeAppendBatch(ctx context.Context) {
	q := &s.appends
	q.mu.Lock()
	batch := q.pending
	q.pending = nil
	q.mu.Unlock()

	err := s.write.WithContext(context.WithoutCancel(ctx)).Transaction(func(tx *gorm.DB) error {
		touched := make([]string, 0, len(batch))
		for _, req := range batch {
			// A savepoint per append: a missing message fails its own
			// append, not the batch.
			req.err = tx.Transaction(func(tx *gorm.DB) error { return insertSegment(tx, req) })
			if isUniqueViolation(req.err) {
				// The savepoint is rolled back: see whether an earlier
				// attempt of this very append committed.
				req.err = sameSegment(tx, req)
			}
			if req.err == nil {
				touched = append(touched, req.messageID)
			}
		}
		if len(touched) == 0 {
			return nil
		}
		return tx.Model(&messageRow{}).Where("id IN ?", unique(touched)).UpdateColumn("updated_at", now()).Error
	})
	for _, req := range batch {
		if err != nil {
			req.err = fmt.Errorf("append to message %s: %w", req.messageID, err)
		}
		close(req.done)
	}

	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.pending) == 0 {
		q.leading = false
		return
	}
	close(q.pending[0].lead)
}

// insertSegment stores an append as the segment at its offset.
func insertSegment(tx *gorm.DB, req *appendRequest) error {
	err := tx.Exec(`INSERT INTO message_segments (message_id, position, text) VALUES (?, ?, ?)`,
		req.messageID, req.offset, req.text).Error
	if isForeignKeyViolation(err) {
		return shared.Errorf(shared.CodeNotFound, "message %q not found", req.messageID)
	}
	if err != nil && !isUniqueViolation(err) {
		return fmt.Errorf("append to message %s: %w", req.messageID, err)
	}
	return err
}

// sameSegment accepts an append whose segment is stored already with the
// same text, and refuses one that collides with other text.
func sameSegment(tx *gorm.DB, req *appendRequest) error {
	var stored []string
	err := tx.Model(&segmentRow{}).Where("message_id = ? AND position = ?", req.messageID, req.offset).Pluck("text", &stored).Error
	if err != nil {
		return fmt.Errorf("check segment of message %s: %w", req.messageID, err)
	}
	if len(stored) == 1 && stored[0] == req.text {
		return nil
	}
	return shared.Errorf(shared.CodeConflict, "message %q holds other text at offset %d", req.messageID, req.offset)
}
