package state

import "github.com/herd-dev/herd/shared"

// writeKind says what a Write changes.
type writeKind int

const (
	writeTask writeKind = iota + 1
	writeSummary
	writeDelete
)

// Write is one change to a task or to its summary. Build it with TaskWrite,
// SummaryWrite or DeleteWrite and hand it to Store.Apply, the only function
// that changes tasks.
type Write struct {
	kind writeKind
	// task is the task to store or delete; for writeSummary only its ID is set.
	task shared.Task
	// summary is the summary of a writeSummary.
	summary shared.TaskStatusSummary
	// response is set for a task read by a request; sent is the store's
	// Mark when that request was sent.
	response bool
	sent     Mark
}

// TaskWrite stores a task from a live task.created or task.updated event.
// Its StatusSummary, when present, is revision gated; when absent the
// stored summary stays.
func TaskWrite(t shared.Task) Write {
	return Write{kind: writeTask, task: t}
}

// ResponseWrite stores a task from the answer to a request (boot,
// task.list, task.create) that was sent when the store was at sent. The
// server may have read the task before a live event that the store has
// applied since, so the task's own fields are not overwritten on a task a
// live event wrote after sent, unless this copy is strictly newer. Its
// summary passes the revision gate as always.
func ResponseWrite(t shared.Task, sent Mark) Write {
	return Write{kind: writeTask, task: t, response: true, sent: sent}
}

// SummaryWrite replaces a task's summary, from a task.status_summary.updated
// event, when its revision is newer than the stored one.
func SummaryWrite(taskID string, sum shared.TaskStatusSummary) Write {
	return Write{kind: writeSummary, task: shared.Task{ID: taskID}, summary: sum}
}

// DeleteWrite removes a task, from a task.deleted event. t.UpdatedAt is the
// time of the deletion: writes not newer than it are ignored afterwards.
func DeleteWrite(t shared.Task) Write {
	return Write{kind: writeDelete, task: t}
}

// Apply makes one write and reports whether it changed the store. Every
// write of a task or a summary goes through here; the rules are in the
// package documentation.
func (s *Store) Apply(w Write) bool {
	switch w.kind {
	case writeTask:
		return s.applyTask(w)
	case writeSummary:
		return s.applySummary(w.task.ID, w.summary)
	case writeDelete:
		return s.applyDelete(w.task)
	default:
		return false
	}
}

// applyTask is Apply for a TaskWrite or a ResponseWrite.
func (s *Store) applyTask(w Write) bool {
	t := w.task
	if deletedAt, dead := s.tombs[t.ID]; dead {
		if !t.UpdatedAt.After(deletedAt) {
			return false
		}
		delete(s.tombs, t.ID)
	}
	sum := t.StatusSummary
	t.StatusSummary = nil

	e, ok := s.tasks[t.ID]
	if !ok {
		e = &entry{task: t, pos: -1}
		if sum != nil {
			copied := *sum
			e.summary = &copied
		}
		s.tasks[t.ID] = e
		s.orderStale = true
		s.accepted(e, w)
		return true
	}

	changed := false
	if s.mayReplaceTask(e, w) {
		if movesInView(e.task, t) {
			s.orderStale = true
		}
		e.task = t
		changed = true
	}
	if sum != nil && newerSummary(e.summary, *sum) {
		copied := *sum
		e.summary = &copied
		changed = true
	}
	if changed {
		s.accepted(e, w)
	}
	return changed
}

// accepted records the accepted task write w of e; a live one (not a
// response) also moves e.live.
func (s *Store) accepted(e *entry, w Write) {
	s.touch(e)
	if !w.response {
		e.live = e.seq
	}
}

// mayReplaceTask reports whether w's task fields may replace e's. Newest
// UpdatedAt wins, an equal one is accepted; but an answer to a request sent
// before a live event that wrote e must be strictly newer, since fields
// such as the foreground activity change without a new UpdatedAt.
func (s *Store) mayReplaceTask(e *entry, w Write) bool {
	if w.response && e.live > uint64(w.sent) {
		return w.task.UpdatedAt.After(e.task.UpdatedAt)
	}
	return !e.task.UpdatedAt.After(w.task.UpdatedAt)
}

// applySummary is Apply for a SummaryWrite.
func (s *Store) applySummary(taskID string, sum shared.TaskStatusSummary) bool {
	e, ok := s.tasks[taskID]
	if !ok || !newerSummary(e.summary, sum) {
		return false
	}
	e.summary = &sum
	s.touch(e)
	return true
}

// applyDelete is Apply for a DeleteWrite. The tombstone takes the newest of
// the deletion time, the stored copy's UpdatedAt and an earlier tombstone,
// so nothing the store has already seen can revive the task.
func (s *Store) applyDelete(t shared.Task) bool {
	at := t.UpdatedAt
	if prev, dead := s.tombs[t.ID]; dead && prev.After(at) {
		at = prev
	}
	e, ok := s.tasks[t.ID]
	if ok && e.task.UpdatedAt.After(at) {
		at = e.task.UpdatedAt
	}
	s.tombs[t.ID] = at
	if !ok {
		return false
	}
	delete(s.tasks, t.ID)
	s.orderStale = true
	return true
}

// touch records an accepted write of e: it stamps the write sequence,
// refreshes the entry's row and, unless the view is re-sorted anyway, queues
// the row for patching.
func (s *Store) touch(e *entry) {
	s.seq++
	e.seq = s.seq
	e.row = RowOf(e.withSummary())
	if !s.orderStale {
		s.changed = append(s.changed, e)
	}
}

// newerSummary reports whether next may replace held: only a strictly
// greater revision may.
func newerSummary(held *shared.TaskStatusSummary, next shared.TaskStatusSummary) bool {
	return held == nil || next.Revision > held.Revision
}

// movesInView reports whether replacing old by next can change the task's
// place in the view or whether it is visible at all.
func movesInView(old, next shared.Task) bool {
	return !old.CreatedAt.Equal(next.CreatedAt) ||
		old.Archived != next.Archived ||
		old.WorkspaceID != next.WorkspaceID
}
