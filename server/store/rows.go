package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"

	"github.com/herd-dev/herd/shared"
)

// The row types below mirror the columns of the tables in migrations/ that
// the store reads or writes. They never leave this package: every exported
// method converts them to shared types.

// workspaceRow is a row of workspaces.
type workspaceRow struct {
	ID        string    `gorm:"column:id;primaryKey"`
	Name      string    `gorm:"column:name"`
	CreatedAt time.Time `gorm:"column:created_at"`
}

// TableName implements gorm's schema.Tabler.
func (workspaceRow) TableName() string { return "workspaces" }

// taskRow is a row of tasks.
type taskRow struct {
	ID          string `gorm:"column:id;primaryKey"`
	WorkspaceID string `gorm:"column:workspace_id"`
	Title       string `gorm:"column:title"`
	Description string `gorm:"column:description"`
	// PrimarySessionID is nil until a session is chosen.
	PrimarySessionID *string `gorm:"column:primary_session_id"`
	// PullRequestURL is nil while no pull request is linked explicitly.
	PullRequestURL *string   `gorm:"column:pull_request_url"`
	Archived       bool      `gorm:"column:archived"`
	CreatedAt      time.Time `gorm:"column:created_at"`
	UpdatedAt      time.Time `gorm:"column:updated_at"`
}

// TableName implements gorm's schema.Tabler.
func (taskRow) TableName() string { return "tasks" }

// taskRepositoryRow is a row of task_repositories.
type taskRepositoryRow struct {
	ID           string    `gorm:"column:id;primaryKey"`
	TaskID       string    `gorm:"column:task_id"`
	Path         string    `gorm:"column:path"`
	BaseBranch   string    `gorm:"column:base_branch"`
	Branch       string    `gorm:"column:branch"`
	WorktreePath string    `gorm:"column:worktree_path"`
	RunInPlace   bool      `gorm:"column:run_in_place"`
	Position     int       `gorm:"column:position"`
	CreatedAt    time.Time `gorm:"column:created_at"`
}

// TableName implements gorm's schema.Tabler.
func (taskRepositoryRow) TableName() string { return "task_repositories" }

// taskSummaryRow is a row of task_status_summaries.
type taskSummaryRow struct {
	TaskID      string `gorm:"column:task_id;primaryKey"`
	WorkspaceID string `gorm:"column:workspace_id"`
	Revision    int64  `gorm:"column:revision"`
	// Payload is the JSON of a shared.TaskStatusSummary.
	Payload   string    `gorm:"column:payload"`
	UpdatedAt time.Time `gorm:"column:updated_at"`
}

// TableName implements gorm's schema.Tabler.
func (taskSummaryRow) TableName() string { return "task_status_summaries" }

// agentProfileRow is a row of agent_profiles.
type agentProfileRow struct {
	ID       string `gorm:"column:id;primaryKey"`
	Name     string `gorm:"column:name"`
	Provider string `gorm:"column:provider"`
	Command  string `gorm:"column:command"`
	// Args is a JSON array of strings.
	Args string `gorm:"column:args"`
	// Env is a JSON object of strings.
	Env              string    `gorm:"column:env"`
	WorkingDirPolicy string    `gorm:"column:working_dir_policy"`
	Builtin          bool      `gorm:"column:builtin"`
	CreatedAt        time.Time `gorm:"column:created_at"`
	UpdatedAt        time.Time `gorm:"column:updated_at"`
}

// TableName implements gorm's schema.Tabler.
func (agentProfileRow) TableName() string { return "agent_profiles" }

// dbTime is t as both databases store it: UTC, truncated to microseconds.
// Every time written goes through it, so a value read back equals the value
// returned when it was written, on either dialect.
func dbTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// now is the current time as the store writes it.
func now() time.Time { return dbTime(time.Now()) }

// toWorkspace converts a row to its protocol object.
func (r workspaceRow) toWorkspace() shared.Workspace {
	return shared.Workspace{ID: r.ID, Name: r.Name, CreatedAt: r.CreatedAt.UTC()}
}

// toTask converts a row to its protocol object, without repositories or
// status summary.
func (r taskRow) toTask() shared.Task {
	t := shared.Task{
		ID:           r.ID,
		WorkspaceID:  r.WorkspaceID,
		Title:        r.Title,
		Description:  r.Description,
		Repositories: []shared.TaskRepository{},
		Archived:     r.Archived,
		CreatedAt:    r.CreatedAt.UTC(),
		UpdatedAt:    r.UpdatedAt.UTC(),
	}
	if r.PrimarySessionID != nil {
		t.PrimarySessionID = *r.PrimarySessionID
	}
	if r.PullRequestURL != nil {
		t.PullRequestURL = *r.PullRequestURL
	}
	return t
}

// toRepository converts a row to its protocol object.
func (r taskRepositoryRow) toRepository() shared.TaskRepository {
	return shared.TaskRepository{
		ID:           r.ID,
		Path:         r.Path,
		BaseBranch:   r.BaseBranch,
		Branch:       r.Branch,
		WorktreePath: r.WorktreePath,
		RunInPlace:   r.RunInPlace,
	}
}

// decodeSummary decodes the payload column of taskID's summary row.
func decodeSummary(taskID string, payload []byte) (*shared.TaskStatusSummary, error) {
	var sum shared.TaskStatusSummary
	if err := json.Unmarshal(payload, &sum); err != nil {
		return nil, fmt.Errorf("decode status summary of task %s: %w", taskID, err)
	}
	return &sum, nil
}

// toAgentProfile converts a row to its protocol object; Available is left
// for the caller to compute.
func (r agentProfileRow) toAgentProfile() (shared.AgentProfile, error) {
	p := shared.AgentProfile{
		ID:       r.ID,
		Name:     r.Name,
		Provider: r.Provider,
		Command:  r.Command,
	}
	if err := json.Unmarshal([]byte(r.Args), &p.Args); err != nil {
		return shared.AgentProfile{}, fmt.Errorf("decode args of agent profile %s: %w", r.ID, err)
	}
	if p.Args == nil {
		p.Args = []string{}
	}
	return p, nil
}

// pgForeignKeyViolation is PostgreSQL's SQLSTATE for foreign_key_violation.
const pgForeignKeyViolation = "23503"

// isForeignKeyViolation reports whether err is a database's refusal of a row
// whose foreign key names no existing row.
func isForeignKeyViolation(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) {
		return se.ExtendedCode == sqlite3.ErrConstraintForeignKey
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == pgForeignKeyViolation
	}
	return false
}
