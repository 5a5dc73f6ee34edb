package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/herd-dev/herd/shared"
)

// TurnTree is the worktree of one repository of a task as a turn found it
// at its start, written as a git tree object (see migration 00014).
type TurnTree struct {
	RepositoryID string
	// TurnID is the id of the prompt message that started the turn.
	TurnID    string
	TaskID    string
	SessionID string
	// Tree is the tree object's id.
	Tree string
	// RecordedAt dates the turn's start; zero means now.
	RecordedAt time.Time
}

// TurnSpan is what one turn changed in one repository: the trees of its
// start and of the start of the repository's next turn.
type TurnSpan struct {
	TurnID string
	From   string
	// To is the next turn's tree; empty for the newest turn, which the
	// worktree as it is now ends.
	To string
}

// turnPromptChars bounds the characters of a prompt read for its turn's
// preview, as inboxTitleChars does for requests.
const turnPromptChars = previewSourceChars

// RecordTurnTree stores the tree of a turn's start in a repository. A turn
// recorded before keeps its first tree: the tree of a turn's start cannot
// change, and a retry must not move it.
func (s *Store) RecordTurnTree(ctx context.Context, t TurnTree) error {
	switch {
	case t.RepositoryID == "" || t.TurnID == "" || t.TaskID == "" || t.SessionID == "":
		return shared.Errorf(shared.CodeBadRequest, "a turn tree needs its repository, turn, task and session")
	case t.Tree == "":
		return shared.Errorf(shared.CodeBadRequest, "a turn tree needs its tree")
	}
	if t.RecordedAt.IsZero() {
		t.RecordedAt = now()
	}
	err := s.write.WithContext(ctx).Exec(`INSERT INTO turn_trees
			(repository_id, turn_id, task_id, session_id, tree, recorded_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (repository_id, turn_id) DO NOTHING`,
		t.RepositoryID, t.TurnID, t.TaskID, t.SessionID, t.Tree, dbTime(t.RecordedAt)).Error
	if err != nil {
		if isForeignKeyViolation(err) {
			return shared.Errorf(shared.CodeNotFound, "repository %q of task %q not found", t.RepositoryID, t.TaskID)
		}
		return fmt.Errorf("record the tree of turn %s: %w", t.TurnID, err)
	}
	return nil
}

// ReviewTurns returns a task's newest turns whose start was recorded in
// some repository, newest first, at most limit of them, each with the
// start of its prompt (at most shared.MaxPreviewBytes, on one line). A
// turn's start is the earliest of its repositories' records.
func (s *Store) ReviewTurns(ctx context.Context, taskID string, limit int) ([]shared.ReviewTurn, error) {
	rows, err := s.read.WithContext(ctx).Raw(`SELECT t.turn_id, t.session_id, t.started_at,
			COALESCE((SELECT substr(m.content, 1, ?) FROM messages m WHERE m.id = t.turn_id), '')
		FROM (SELECT turn_id, MIN(session_id) AS session_id, MIN(recorded_at) AS started_at
			FROM turn_trees WHERE task_id = ? GROUP BY turn_id) t
		ORDER BY t.started_at DESC, t.turn_id DESC LIMIT ?`, turnPromptChars, taskID, limit).Rows()
	if err != nil {
		return nil, fmt.Errorf("list the turns of task %s: %w", taskID, err)
	}
	defer rows.Close()
	out := []shared.ReviewTurn{}
	for rows.Next() {
		var turn shared.ReviewTurn
		var at nullTime
		var prompt string
		if err := rows.Scan(&turn.TurnID, &turn.SessionID, &at, &prompt); err != nil {
			return nil, fmt.Errorf("read the turns of task %s: %w", taskID, err)
		}
		turn.StartedAt = at.t
		turn.Prompt = shared.Clip(strings.Join(strings.Fields(previewExcerpt(prompt)), " "), shared.MaxPreviewBytes)
		out = append(out, turn)
	}
	return out, classify(rows.Err())
}

// TurnSpan returns the trees that bound a turn of a task in one of its
// repositories: the one recorded at the turn's start, and the one
// recorded at the start of the repository's next turn. An empty turnID
// names the task's newest turn. A turn whose start was not recorded in
// the repository is not_found.
func (s *Store) TurnSpan(ctx context.Context, taskID, repositoryID, turnID string) (TurnSpan, error) {
	db := s.read.WithContext(ctx)
	if turnID == "" {
		var ids []string
		err := db.Raw(`SELECT turn_id FROM turn_trees WHERE task_id = ?
			ORDER BY recorded_at DESC, turn_id DESC LIMIT 1`, taskID).Scan(&ids).Error
		if err != nil {
			return TurnSpan{}, fmt.Errorf("find the newest turn of task %s: %w", taskID, err)
		}
		if len(ids) == 0 {
			return TurnSpan{}, shared.Errorf(shared.CodeNotFound, "herd has recorded the start of no turn of this task yet")
		}
		turnID = ids[0]
	}
	var from string
	var at nullTime
	row := db.Raw(`SELECT tree, recorded_at FROM turn_trees WHERE task_id = ? AND repository_id = ? AND turn_id = ?`,
		taskID, repositoryID, turnID).Row()
	switch err := row.Scan(&from, &at); {
	case errors.Is(err, sql.ErrNoRows):
		return TurnSpan{}, shared.Errorf(shared.CodeNotFound, "herd has no record of the start of that turn")
	case err != nil:
		return TurnSpan{}, fmt.Errorf("load the tree of turn %s: %w", turnID, classify(err))
	}
	var next []string
	err := db.Raw(`SELECT tree FROM turn_trees WHERE task_id = ? AND repository_id = ?
			AND (recorded_at > ? OR (recorded_at = ? AND turn_id > ?))
		ORDER BY recorded_at, turn_id LIMIT 1`, taskID, repositoryID, at.t, at.t, turnID).Scan(&next).Error
	if err != nil {
		return TurnSpan{}, fmt.Errorf("load the turn after %s: %w", turnID, err)
	}
	span := TurnSpan{TurnID: turnID, From: from}
	if len(next) > 0 {
		span.To = next[0]
	}
	return span, nil
}
