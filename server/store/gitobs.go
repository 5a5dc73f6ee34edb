package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/herd-dev/herd/shared"
)

// gitObservationRow is a row of git_observations.
type gitObservationRow struct {
	ID                    string    `gorm:"column:id;primaryKey"`
	TaskRepositoryID      string    `gorm:"column:task_repository_id"`
	ObservedAt            time.Time `gorm:"column:observed_at"`
	Additions             int       `gorm:"column:additions"`
	Deletions             int       `gorm:"column:deletions"`
	ChangedFiles          int       `gorm:"column:changed_files"`
	Ahead                 int       `gorm:"column:ahead"`
	Behind                int       `gorm:"column:behind"`
	ComparisonUnavailable bool      `gorm:"column:comparison_unavailable"`
	UpstreamAhead         *int      `gorm:"column:upstream_ahead"`
	UpstreamBehind        *int      `gorm:"column:upstream_behind"`
	Error                 string    `gorm:"column:error"`
}

// TableName implements gorm's schema.Tabler.
func (gitObservationRow) TableName() string { return "git_observations" }

// RecordGitObservation stores an observation of a task repository. The
// latest one by ObservedAt (then id) is the repository's current state;
// a failed observation (Error set) is kept but never shown as totals.
//
// A repository keeps two observations at most, its newest and its newest
// successful one, so a repository observed every two seconds for weeks
// costs two rows.
func (s *Store) RecordGitObservation(ctx context.Context, repositoryID string, o GitObservation) error {
	if o.ObservedAt.IsZero() {
		o.ObservedAt = now()
	}
	row := gitObservationRow{
		ID: NewID(), TaskRepositoryID: repositoryID, ObservedAt: dbTime(o.ObservedAt),
		Additions: o.Additions, Deletions: o.Deletions, ChangedFiles: o.ChangedFiles, Ahead: o.Ahead, Behind: o.Behind,
		ComparisonUnavailable: o.ComparisonUnavailable, UpstreamAhead: o.UpstreamAhead, UpstreamBehind: o.UpstreamBehind,
		Error: o.Error,
	}
	err := s.write.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		return tx.Exec(`DELETE FROM git_observations WHERE task_repository_id = ? AND id NOT IN (
				SELECT id FROM (SELECT id FROM git_observations WHERE task_repository_id = ? AND error = ''
					ORDER BY observed_at DESC, id DESC LIMIT 1) AS newest_ok
				UNION
				SELECT id FROM (SELECT id FROM git_observations WHERE task_repository_id = ?
					ORDER BY observed_at DESC, id DESC LIMIT 1) AS newest)`,
			repositoryID, repositoryID, repositoryID).Error
	})
	if err != nil {
		if isForeignKeyViolation(err) {
			return shared.Errorf(shared.CodeNotFound, "task repository %q not found", repositoryID)
		}
		return fmt.Errorf("record git observation of repository %s: %w", repositoryID, err)
	}
	return nil
}

// RepositoryGits returns the latest observation of each repository of a
// task, in the task's repository order: the totals of the newest
// successful one, and the error of the newest one when it failed.
//
// It runs for every recorded observation and every session subscription,
// so it reads the repositories alone, not the whole task: two queries, the
// second loading their observations or, when there are none, telling a
// task without repositories from a missing one.
func (s *Store) RepositoryGits(ctx context.Context, taskID string) ([]shared.RepositoryGit, error) {
	db := s.read.WithContext(ctx)
	var repos []taskRepositoryRow
	err := db.Select("id, path, branch, base_branch").Where("task_id = ?", taskID).Order("position").Find(&repos).Error
	if err != nil {
		return nil, fmt.Errorf("load repositories of task %s: %w", taskID, err)
	}
	if len(repos) == 0 {
		var n int64
		if err := db.Model(&taskRow{}).Where("id = ?", taskID).Count(&n).Error; err != nil {
			return nil, fmt.Errorf("check task %s: %w", taskID, err)
		}
		if n == 0 {
			return nil, taskNotFound(taskID)
		}
		return []shared.RepositoryGit{}, nil
	}
	out := make([]shared.RepositoryGit, len(repos))
	ids := make([]string, len(repos))
	index := make(map[string]int, len(ids))
	for i, r := range repos {
		ids[i], index[r.ID] = r.ID, i
		out[i] = shared.RepositoryGit{RepositoryID: r.ID, Path: r.Path, Branch: r.Branch, BaseBranch: r.BaseBranch}
	}
	var rows []gitObservationRow
	// Newest first: the first successful row of a repository holds its
	// totals, the first row of all its newest outcome.
	err = db.Where("task_repository_id IN ?", ids).
		Order("observed_at DESC, id DESC").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("load git observations of task %s: %w", taskID, err)
	}
	seen := make(map[string]bool, len(ids))
	for _, row := range rows {
		g := &out[index[row.TaskRepositoryID]]
		if !seen[row.TaskRepositoryID] {
			seen[row.TaskRepositoryID] = true
			g.Error = row.Error
		}
		if row.Error != "" || g.ObservedAt != nil {
			continue
		}
		at := row.ObservedAt.UTC()
		g.ObservedAt = &at
		g.Additions, g.Deletions, g.ChangedFiles = row.Additions, row.Deletions, row.ChangedFiles
		g.Ahead, g.Behind, g.ComparisonUnavailable = row.Ahead, row.Behind, row.ComparisonUnavailable
		g.UpstreamAhead, g.UpstreamBehind = row.UpstreamAhead, row.UpstreamBehind
	}
	return out, nil
}
