package store

import (
	"context"
	"database/sql"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/herd-dev/herd/shared"
)

// maxIDsPerQuery bounds the ids bound into one IN list. It stays well below
// SQLite's 32,766 and PostgreSQL's 65,535 parameters per statement and is at
// least shared.MaxTaskPage, so loading a page of tasks takes one query per
// table.
const maxIDsPerQuery = 10000

// ListTasks returns one page of a workspace's tasks, newest first by
// (created_at, id), each with its repositories and status summary. Pages are
// cut by keyset: the cursor holds the last task's position, so concurrent
// inserts never shift a page. Archived tasks are left out unless
// q.IncludeArchived.
//
// Loading a page takes three queries whatever its size: the tasks, then
// their repositories, then their summaries.
func (s *Store) ListTasks(ctx context.Context, q shared.TaskListRequest) (shared.TaskListResponse, error) {
	if q.WorkspaceID == "" {
		return shared.TaskListResponse{}, shared.Errorf(shared.CodeBadRequest, "workspace_id is required")
	}
	limit, err := pageSize(q.Limit)
	if err != nil {
		return shared.TaskListResponse{}, err
	}

	query := s.read.WithContext(ctx).Where("workspace_id = ?", q.WorkspaceID)
	if !q.IncludeArchived {
		query = query.Where("archived = ?", false)
	}
	if q.Cursor != "" {
		after, id, err := decodeCursor(q.Cursor)
		if err != nil {
			return shared.TaskListResponse{}, err
		}
		query = query.Where("(created_at, id) < (?, ?)", after, id)
	}
	rows, err := findTasks(query.Order("created_at DESC, id DESC").Limit(limit+1), limit+1)
	if err != nil {
		return shared.TaskListResponse{}, err
	}

	var resp shared.TaskListResponse
	if len(rows) > limit {
		rows = rows[:limit]
		last := rows[limit-1]
		resp.NextCursor = encodeCursor(last.CreatedAt, last.ID)
	}
	if len(rows) == 0 && q.Cursor == "" {
		// An empty first page is either an empty workspace or a wrong id.
		ok, err := workspaceExists(ctx, s.read, q.WorkspaceID)
		if err != nil {
			return shared.TaskListResponse{}, err
		}
		if !ok {
			return shared.TaskListResponse{}, shared.Errorf(shared.CodeNotFound, "workspace %q not found", q.WorkspaceID)
		}
	}
	tasks, err := withDetails(ctx, s.read, rows)
	if err != nil {
		return shared.TaskListResponse{}, err
	}
	s.reportMissingSummaries(tasks)
	resp.Tasks = tasks
	return resp, nil
}

// pageSize turns a requested limit into the number of tasks to return: zero
// means shared.DefaultTaskPage, and no page exceeds shared.MaxTaskPage.
func pageSize(limit int) (int, error) {
	switch {
	case limit < 0:
		return 0, shared.Errorf(shared.CodeBadRequest, "limit must not be negative")
	case limit == 0:
		return shared.DefaultTaskPage, nil
	}
	return min(limit, shared.MaxTaskPage), nil
}

// findTasks runs query, a query on tasks expected to return up to about
// capacity rows, and returns its rows. Rows are scanned by hand rather than
// through gorm's reflection: listing is the hot path of every client's first
// screen.
func findTasks(query *gorm.DB, capacity int) ([]taskRow, error) {
	rows, err := query.Model(&taskRow{}).
		Select("id, workspace_id, title, description, primary_session_id, pull_request_url, archived, created_at, updated_at").
		Rows()
	if err != nil {
		return nil, fmt.Errorf("load tasks: %w", err)
	}
	defer rows.Close()
	out := make([]taskRow, 0, capacity)
	for rows.Next() {
		var r taskRow
		err := rows.Scan(&r.ID, &r.WorkspaceID, &r.Title, &r.Description, &r.PrimarySessionID, &r.PullRequestURL, &r.Archived, &r.CreatedAt, &r.UpdatedAt)
		if err != nil {
			return nil, fmt.Errorf("load tasks: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		// A connection lost mid-read surfaces here, not at the query.
		return nil, fmt.Errorf("load tasks: %w", classify(err))
	}
	return out, nil
}

// withDetails converts rows to tasks carrying their repositories (in
// position order) and status summaries, with one query for all repositories
// and one for all summaries per maxIDsPerQuery tasks. A task whose summary
// row is missing has none (StatusSummary nil): an empty summary would read
// as "no session" whatever the task holds.
func withDetails(ctx context.Context, db *gorm.DB, rows []taskRow) ([]shared.Task, error) {
	tasks := make([]shared.Task, len(rows))
	index := make(map[string]int, len(rows))
	ids := make([]string, len(rows))
	for i, r := range rows {
		tasks[i] = r.toTask()
		index[r.ID] = i
		ids[i] = r.ID
	}

	for start := 0; start < len(ids); start += maxIDsPerQuery {
		chunk := ids[start:min(start+maxIDsPerQuery, len(ids))]

		// A connection lost mid-read surfaces in the loaders' loops.
		if err := loadRepositories(ctx, db, chunk, tasks, index); err != nil {
			return nil, classify(err)
		}
		if err := loadSummaries(ctx, db, chunk, tasks, index); err != nil {
			return nil, classify(err)
		}
	}

	return tasks, nil
}

// loadRepositories sets the repositories of the tasks named by ids, in
// position order. All of them share one backing array, each task's slice
// capped at its own end.
func loadRepositories(ctx context.Context, db *gorm.DB, ids []string, tasks []shared.Task, index map[string]int) error {
	rows, err := db.WithContext(ctx).Model(&taskRepositoryRow{}).
		Select("task_id, id, path, base_branch, branch, worktree_path, run_in_place").
		Where("task_id IN ?", ids).Order("task_id, position").Rows()
	if err != nil {
		return fmt.Errorf("load task repositories: %w", err)
	}
	defer rows.Close()
	all := make([]shared.TaskRepository, 0, len(ids))
	owners := make([]int, 0, len(ids))
	var taskID string
	for rows.Next() {
		var r shared.TaskRepository
		if err := rows.Scan(&taskID, &r.ID, &r.Path, &r.BaseBranch, &r.Branch, &r.WorktreePath, &r.RunInPlace); err != nil {
			return fmt.Errorf("load task repositories: %w", err)
		}
		all = append(all, r)
		owners = append(owners, index[taskID])
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load task repositories: %w", err)
	}
	// Rows arrive grouped by task: hand each task its run of the array.
	for start := 0; start < len(all); {
		end := start + 1
		for end < len(all) && owners[end] == owners[start] {
			end++
		}
		tasks[owners[start]].Repositories = all[start:end:end]
		start = end
	}
	return nil
}

// loadSummaries sets the status summaries of the tasks named by ids.
func loadSummaries(ctx context.Context, db *gorm.DB, ids []string, tasks []shared.Task, index map[string]int) error {
	rows, err := db.WithContext(ctx).Model(&taskSummaryRow{}).
		Select("task_id, payload").Where("task_id IN ?", ids).Rows()
	if err != nil {
		return fmt.Errorf("load status summaries: %w", err)
	}
	defer rows.Close()
	var taskID string
	var payload sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&taskID, &payload); err != nil {
			return fmt.Errorf("load status summaries: %w", err)
		}
		sum, err := decodeSummary(taskID, payload)
		if err != nil {
			return err
		}
		t := &tasks[index[taskID]]
		t.StatusSummary = sum
		t.ActiveSubagentCount = sum.ActiveSubagentCount
		if sum.ForegroundActivity != "" {
			t.ForegroundActivity = shared.ActivityGenerating
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load status summaries: %w", err)
	}
	return nil
}

// encodeCursor returns the opaque cursor for the position just after the
// task with the given creation time and id.
func encodeCursor(createdAt time.Time, id string) string {
	raw := strconv.FormatInt(createdAt.UnixMicro(), 10) + "," + id
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// decodeCursor reverses encodeCursor. A cursor it cannot read is the
// client's error.
func decodeCursor(cursor string) (createdAt time.Time, id string, err error) {
	bad := shared.Errorf(shared.CodeBadRequest, "malformed cursor: pass next_cursor from a previous task.list response")
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return time.Time{}, "", bad
	}
	micros, id, ok := strings.Cut(string(raw), ",")
	if !ok || id == "" {
		return time.Time{}, "", bad
	}
	us, err := strconv.ParseInt(micros, 10, 64)
	if err != nil {
		return time.Time{}, "", bad
	}
	// Both databases must be able to compare with it.
	createdAt = time.UnixMicro(us).UTC()
	if y := createdAt.Year(); y < 1970 || y > 9999 {
		return time.Time{}, "", bad
	}
	return createdAt, id, nil
}

// OnMissingSummary registers fn to be told of every task that a read
// (ListTasks, GetTask) found without a status summary row, so that the
// summary can be rebuilt (the projector's Mark); such a task is returned
// without a summary. A later call replaces fn.
func (s *Store) OnMissingSummary(fn func(taskID string)) { s.missingSummary.Store(&fn) }

// reportMissingSummaries tells the OnMissingSummary function of the tasks
// without a summary.
func (s *Store) reportMissingSummaries(tasks []shared.Task) {
	fn := s.missingSummary.Load()
	if fn == nil {
		return
	}
	for _, t := range tasks {
		if t.StatusSummary == nil {
			(*fn)(t.ID)
		}
	}
}
