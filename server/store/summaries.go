package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"gorm.io/gorm"

	"github.com/herd-dev/herd/shared"
)

// summaryRetries bounds how often UpdateSummary retries after losing a
// race to another writer of the same summary.
const summaryRetries = 32

// UpdateSummary changes a task's status summary with derive, which gets the
// stored summary (revision and updated_at cleared) and returns the new one.
// A semantic no-op writes nothing and reports changed false; otherwise the
// revision goes up by one, by compare-and-update, so concurrent updates
// never publish the same revision or lose a newer value.
func (s *Store) UpdateSummary(ctx context.Context, taskID string, derive func(shared.TaskStatusSummary) shared.TaskStatusSummary) (summary shared.TaskStatusSummary, workspaceID string, changed bool, err error) {
	for range summaryRetries {
		var row taskSummaryRow
		err := s.write.WithContext(ctx).Where("task_id = ?", taskID).Take(&row).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return shared.TaskStatusSummary{}, "", false, taskNotFound(taskID)
		}
		if err != nil {
			return shared.TaskStatusSummary{}, "", false, fmt.Errorf("load summary of task %s: %w", taskID, err)
		}
		current, err := decodeSummary(taskID, []byte(row.Payload))
		if err != nil {
			return shared.TaskStatusSummary{}, "", false, err
		}
		base := *current
		base.Revision, base.UpdatedAt = 0, current.UpdatedAt
		next := derive(base)
		next.Revision, next.UpdatedAt = 0, current.UpdatedAt
		if reflect.DeepEqual(next, base) {
			return *current, row.WorkspaceID, false, nil
		}
		next.Revision, next.UpdatedAt = row.Revision+1, now()
		payload, err := json.Marshal(next)
		if err != nil {
			return shared.TaskStatusSummary{}, "", false, fmt.Errorf("encode summary: %w", err)
		}
		res := s.write.WithContext(ctx).Model(&taskSummaryRow{}).
			Where("task_id = ? AND revision = ?", taskID, row.Revision).
			Updates(map[string]any{"revision": next.Revision, "payload": string(payload), "updated_at": next.UpdatedAt})
		if res.Error != nil {
			return shared.TaskStatusSummary{}, "", false, fmt.Errorf("update summary of task %s: %w", taskID, res.Error)
		}
		if res.RowsAffected == 1 {
			return next, row.WorkspaceID, true, nil
		}
	}
	return shared.TaskStatusSummary{}, "", false, fmt.Errorf("update summary of task %s: too many concurrent writers", taskID)
}
