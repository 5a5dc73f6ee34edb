package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"github.com/herd-dev/herd/shared"
)

// CreateTask creates a task with its repositories and its first status
// summary (revision 1) in one transaction. It returns the task with both.
func (s *Store) CreateTask(ctx context.Context, in shared.TaskCreateRequest) (shared.Task, error) {
	switch {
	case in.WorkspaceID == "":
		return shared.Task{}, shared.Errorf(shared.CodeBadRequest, "workspace_id is required")
	case strings.TrimSpace(in.Title) == "":
		return shared.Task{}, shared.Errorf(shared.CodeBadRequest, "task title is required")
	}
	for i, r := range in.Repositories {
		if strings.TrimSpace(r.Path) == "" {
			return shared.Task{}, shared.Errorf(shared.CodeBadRequest, "repositories[%d].path is required", i)
		}
	}

	created := now()
	task := taskRow{
		ID:          newID(),
		WorkspaceID: in.WorkspaceID,
		Title:       in.Title,
		Description: in.Description,
		CreatedAt:   created,
		UpdatedAt:   created,
	}
	repos := make([]taskRepositoryRow, len(in.Repositories))
	for i, r := range in.Repositories {
		repos[i] = taskRepositoryRow{
			ID:         newID(),
			TaskID:     task.ID,
			Path:       r.Path,
			BaseBranch: r.BaseBranch,
			Position:   i,
			CreatedAt:  created,
		}
	}
	summary := shared.TaskStatusSummary{Revision: 1, UpdatedAt: created}
	payload, err := json.Marshal(summary)
	if err != nil {
		return shared.Task{}, fmt.Errorf("encode status summary: %w", err)
	}

	err = s.write.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&task).Error; err != nil {
			if isForeignKeyViolation(err) {
				return shared.Errorf(shared.CodeNotFound, "workspace %q not found", in.WorkspaceID)
			}
			return fmt.Errorf("insert task: %w", err)
		}
		if len(repos) > 0 {
			if err := tx.Create(&repos).Error; err != nil {
				return fmt.Errorf("insert task repositories: %w", err)
			}
		}
		row := taskSummaryRow{
			TaskID:      task.ID,
			WorkspaceID: task.WorkspaceID,
			Revision:    summary.Revision,
			Payload:     string(payload),
			UpdatedAt:   created,
		}
		if err := tx.Create(&row).Error; err != nil {
			return fmt.Errorf("insert status summary: %w", err)
		}
		return nil
	})
	if err != nil {
		return shared.Task{}, err
	}

	out := task.toTask()
	for _, r := range repos {
		out.Repositories = append(out.Repositories, r.toRepository())
	}
	out.StatusSummary = &summary
	return out, nil
}

// GetTask returns the task with the given id, its repositories and its
// status summary.
func (s *Store) GetTask(ctx context.Context, id string) (shared.Task, error) {
	return getTask(ctx, s.read, id)
}

// UpdateTask changes the fields of in that are not nil and bumps the task's
// updated_at. A PrimarySessionID must name a session of this task; an empty
// one clears the choice.
func (s *Store) UpdateTask(ctx context.Context, in shared.TaskUpdateRequest) (shared.Task, error) {
	if in.TaskID == "" {
		return shared.Task{}, shared.Errorf(shared.CodeBadRequest, "task_id is required")
	}
	if in.Title != nil && strings.TrimSpace(*in.Title) == "" {
		return shared.Task{}, shared.Errorf(shared.CodeBadRequest, "task title must not be empty")
	}
	changes := map[string]any{"updated_at": now()}
	if in.Title != nil {
		changes["title"] = *in.Title
	}
	if in.Description != nil {
		changes["description"] = *in.Description
	}
	if in.PrimarySessionID != nil && *in.PrimarySessionID == "" {
		changes["primary_session_id"] = nil
	}

	var out shared.Task
	err := s.write.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&taskRow{}).Where("id = ?", in.TaskID).Updates(changes)
		if res.Error != nil {
			return fmt.Errorf("update task: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return taskNotFound(in.TaskID)
		}
		if in.PrimarySessionID != nil && *in.PrimarySessionID != "" {
			if err := setPrimarySession(tx, in.TaskID, *in.PrimarySessionID); err != nil {
				return err
			}
		}
		var err error
		out, err = getTask(ctx, tx, in.TaskID)
		return err
	})
	if err != nil {
		return shared.Task{}, err
	}
	return out, nil
}

// setPrimarySession points the task at sessionID, provided that session
// belongs to the task. It leaves updated_at to the caller's update.
func setPrimarySession(tx *gorm.DB, taskID, sessionID string) error {
	res := tx.Model(&taskRow{}).
		Where("tasks.id = ? AND EXISTS (SELECT 1 FROM sessions WHERE sessions.id = ? AND sessions.task_id = tasks.id)", taskID, sessionID).
		UpdateColumn("primary_session_id", sessionID)
	if res.Error != nil {
		return fmt.Errorf("set primary session: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return shared.Errorf(shared.CodeNotFound, "session %q not found in task %q", sessionID, taskID)
	}
	return nil
}

// ArchiveTask marks the task archived and bumps its updated_at. Archiving an
// archived task changes nothing and returns it as it is.
func (s *Store) ArchiveTask(ctx context.Context, id string) (shared.Task, error) {
	var out shared.Task
	err := s.write.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		err := tx.Model(&taskRow{}).
			Where("id = ? AND archived = ?", id, false).
			Updates(map[string]any{"archived": true, "updated_at": now()}).Error
		if err != nil {
			return fmt.Errorf("archive task: %w", err)
		}
		out, err = getTask(ctx, tx, id)
		return err
	})
	if err != nil {
		return shared.Task{}, err
	}
	return out, nil
}

// getTask loads one task with its repositories and status summary through
// db, which may be a transaction.
func getTask(ctx context.Context, db *gorm.DB, id string) (shared.Task, error) {
	rows, err := findTasks(db.WithContext(ctx).Where("id = ?", id), 1)
	if err != nil {
		return shared.Task{}, err
	}
	if len(rows) == 0 {
		return shared.Task{}, taskNotFound(id)
	}
	tasks, err := withDetails(ctx, db, rows)
	if err != nil {
		return shared.Task{}, err
	}
	return tasks[0], nil
}

// taskNotFound is the error for a task id that names no task.
func taskNotFound(id string) error {
	return shared.Errorf(shared.CodeNotFound, "task %q not found", id)
}
