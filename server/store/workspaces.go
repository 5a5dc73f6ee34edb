package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"github.com/herd-dev/herd/shared"
)

// CreateWorkspace creates a workspace named name.
func (s *Store) CreateWorkspace(ctx context.Context, name string) (shared.Workspace, error) {
	if strings.TrimSpace(name) == "" {
		return shared.Workspace{}, shared.Errorf(shared.CodeBadRequest, "workspace name is required")
	}
	row := workspaceRow{ID: NewID(), Name: name, CreatedAt: now()}
	if err := s.write.WithContext(ctx).Create(&row).Error; err != nil {
		return shared.Workspace{}, fmt.Errorf("insert workspace: %w", err)
	}
	return row.toWorkspace(), nil
}

// GetWorkspace returns the workspace with the given id.
func (s *Store) GetWorkspace(ctx context.Context, id string) (shared.Workspace, error) {
	var row workspaceRow
	err := s.read.WithContext(ctx).Where("id = ?", id).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return shared.Workspace{}, shared.Errorf(shared.CodeNotFound, "workspace %q not found", id)
	}
	if err != nil {
		return shared.Workspace{}, fmt.Errorf("load workspace: %w", err)
	}
	return row.toWorkspace(), nil
}

// ListWorkspaces returns every workspace, oldest first.
func (s *Store) ListWorkspaces(ctx context.Context) ([]shared.Workspace, error) {
	var rows []workspaceRow
	if err := s.read.WithContext(ctx).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("load workspaces: %w", err)
	}
	out := make([]shared.Workspace, len(rows))
	for i, r := range rows {
		out[i] = r.toWorkspace()
	}
	return out, nil
}

// workspaceExists reports whether a workspace with the given id exists.
func workspaceExists(ctx context.Context, db *gorm.DB, id string) (bool, error) {
	var n int64
	if err := db.WithContext(ctx).Model(&workspaceRow{}).Where("id = ?", id).Count(&n).Error; err != nil {
		return false, fmt.Errorf("check workspace: %w", err)
	}
	return n > 0, nil
}
