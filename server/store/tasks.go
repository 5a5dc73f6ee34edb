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

// NewTaskID returns a fresh task id, for a caller that prepares a task's
// resources (its worktrees) before CreateTaskAs stores it.
func NewTaskID() string { return NewID() }

// RepositoryCheckout is where a new task's repository is worked on: the
// task's branch and worktree, and the base branch they were made from.
type RepositoryCheckout struct {
	Branch, WorktreePath, BaseBranch string
}

// CreateTask creates a task with its repositories and its first status
// summary (revision 1) in one transaction. It returns the task with both.
func (s *Store) CreateTask(ctx context.Context, in shared.TaskCreateRequest) (shared.Task, error) {
	return s.CreateTaskAs(ctx, NewID(), in, nil)
}

// CreateTaskAs is CreateTask for a task whose id (from NewTaskID) and
// repository checkouts were prepared beforehand: checkouts is empty, or
// holds one entry per repository of in, in order; an entry's empty base
// branch keeps the requested one.
func (s *Store) CreateTaskAs(ctx context.Context, id string, in shared.TaskCreateRequest, checkouts []RepositoryCheckout) (shared.Task, error) {
	switch {
	case len(checkouts) != 0 && len(checkouts) != len(in.Repositories):
		return shared.Task{}, fmt.Errorf("create task: %d checkouts for %d repositories", len(checkouts), len(in.Repositories))
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
		ID:          id,
		WorkspaceID: in.WorkspaceID,
		Title:       in.Title,
		Description: in.Description,
		CreatedAt:   created,
		UpdatedAt:   created,
	}
	repos := make([]taskRepositoryRow, len(in.Repositories))
	for i, r := range in.Repositories {
		repos[i] = taskRepositoryRow{
			ID:         NewID(),
			TaskID:     task.ID,
			Path:       r.Path,
			BaseBranch: r.BaseBranch,
			RunInPlace: r.RunInPlace,
			Position:   i,
			CreatedAt:  created,
		}
		if len(checkouts) > 0 {
			c := checkouts[i]
			repos[i].Branch, repos[i].WorktreePath = c.Branch, c.WorktreePath
			if c.BaseBranch != "" {
				repos[i].BaseBranch = c.BaseBranch
			}
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
	task, err := getTask(ctx, s.read, id)
	if err == nil {
		s.reportMissingSummaries([]shared.Task{task})
	}
	return task, err
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
	if in.PullRequestURL != nil {
		changes["pull_request_url"] = optional(*in.PullRequestURL)
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

// RelinkPullRequests applies a task's explicit pull request link to the
// stored pull requests: the one at the task's pull_request_url moves to
// the task, and the task lets go of every other one that its own branches
// do not claim. It returns the other tasks that lost a pull request, whose
// summaries change too.
func (s *Store) RelinkPullRequests(ctx context.Context, taskID string) ([]string, error) {
	var losers []string
	err := s.write.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var task taskRow
		if err := tx.Select("id, pull_request_url").Where("id = ?", taskID).Take(&task).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return taskNotFound(taskID)
			}
			return fmt.Errorf("load task %s: %w", taskID, err)
		}
		link := ""
		if task.PullRequestURL != nil {
			link = *task.PullRequestURL
		}
		if link != "" {
			err := tx.Raw("SELECT DISTINCT task_id FROM pull_requests WHERE url = ? AND task_id IS NOT NULL AND task_id <> ?",
				link, taskID).Scan(&losers).Error
			if err != nil {
				return fmt.Errorf("link pull request: %w", err)
			}
			if err := tx.Exec("UPDATE pull_requests SET task_id = ? WHERE url = ?", taskID, link).Error; err != nil {
				return fmt.Errorf("link pull request: %w", err)
			}
		}
		err := tx.Exec(`UPDATE pull_requests SET task_id = NULL
			WHERE task_id = ? AND url <> ? AND head_branch NOT IN (
				SELECT branch FROM task_repositories WHERE task_id = ? AND branch <> '')`, taskID, link, taskID).Error
		if err != nil {
			return fmt.Errorf("unlink pull requests: %w", err)
		}
		return nil
	})
	return losers, err
}
