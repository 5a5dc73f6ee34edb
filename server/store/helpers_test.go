package store

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/herd-dev/herd/server/store/storetest"
	"github.com/herd-dev/herd/shared"
)

// TestMain closes the shared PostgreSQL admin connection after the tests
// and checks for leaked goroutines.
func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// testDialects lists the databases the suite runs against.
var testDialects = []string{dialectSQLite, dialectPostgres}

// forEachDialect runs fn as one subtest per dialect.
func forEachDialect(t *testing.T, fn func(t *testing.T, dialect string)) {
	t.Helper()
	for _, d := range testDialects {
		t.Run(d, func(t *testing.T) { fn(t, d) })
	}
}

// MustOpen opens a Store on a fresh, empty database of dialect ("sqlite" or
// "postgres"). The Store is closed and the database removed when tb ends.
func MustOpen(tb testing.TB, dialect string) *Store {
	tb.Helper()
	return mustOpenConfig(tb, MustConfig(tb, dialect))
}

// mustOpenConfig opens a Store on cfg and closes it when tb ends.
func mustOpenConfig(tb testing.TB, cfg Config) *Store {
	tb.Helper()
	s, err := Open(context.Background(), cfg)
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("close store: %v", err)
		}
	})
	return s
}

// MustConfig returns a Config naming a fresh, empty database of dialect,
// removed when tb ends. For PostgreSQL it creates herd_test_<random> on the
// server named by HERD_TEST_POSTGRES_URL; without a reachable server the test
// is skipped, or fails when CI is "true".
func MustConfig(tb testing.TB, dialect string) Config {
	tb.Helper()
	switch dialect {
	case dialectSQLite:
		return Config{DataDir: tb.TempDir()}
	case dialectPostgres:
		return Config{URL: storetest.PostgresDatabase(tb)}
	}
	tb.Fatalf("unknown dialect %q", dialect)
	return Config{}
}

// countQueries makes s count the SQL statements it issues, on every pool,
// and returns the counter. Call it before using s concurrently.
func countQueries(tb testing.TB, s *Store) *atomic.Int64 {
	tb.Helper()
	var n atomic.Int64
	count := func(db *gorm.DB) {
		if db.Statement.SQL.Len() > 0 {
			n.Add(1)
		}
	}
	dbs := []*gorm.DB{s.write}
	if s.read != s.write {
		dbs = append(dbs, s.read)
	}
	const name = "herd_test:count_queries"
	for _, db := range dbs {
		cb := db.Callback()
		for _, err := range []error{
			cb.Create().Register(name, count),
			cb.Query().Register(name, count),
			cb.Update().Register(name, count),
			cb.Delete().Register(name, count),
			cb.Row().Register(name, count),
			cb.Raw().Register(name, count),
		} {
			if err != nil {
				tb.Fatalf("register query counter: %v", err)
			}
		}
	}
	return &n
}

// mustWorkspace creates a workspace or fails tb.
func mustWorkspace(tb testing.TB, s *Store, name string) shared.Workspace {
	tb.Helper()
	w, err := s.CreateWorkspace(context.Background(), name)
	if err != nil {
		tb.Fatalf("create workspace: %v", err)
	}
	return w
}

// mustTask creates a task or fails tb.
func mustTask(tb testing.TB, s *Store, in shared.TaskCreateRequest) shared.Task {
	tb.Helper()
	task, err := s.CreateTask(context.Background(), in)
	if err != nil {
		tb.Fatalf("create task: %v", err)
	}
	return task
}

// mustSession creates a session of taskID and returns its id.
func mustSession(tb testing.TB, s *Store, taskID string) string {
	tb.Helper()
	session, err := s.CreateSession(context.Background(), taskID, "mock")
	if err != nil {
		tb.Fatalf("create session: %v", err)
	}
	return session.ID
}

// seedTasks inserts n tasks of workspaceID, each with one repository and a
// status summary, in one transaction of batched inserts. Task i is created at
// createdAt(i). It returns the ids in list order: newest first, then by id
// descending.
func seedTasks(tb testing.TB, s *Store, workspaceID string, n int, createdAt func(i int) time.Time) []string {
	tb.Helper()
	tasks := make([]taskRow, n)
	repos := make([]taskRepositoryRow, n)
	sums := make([]taskSummaryRow, n)
	for i := range n {
		at := dbTime(createdAt(i))
		tasks[i] = taskRow{
			ID: NewID(), WorkspaceID: workspaceID, Title: fmt.Sprintf("task %d", i),
			Description: "seeded", CreatedAt: at, UpdatedAt: at,
		}
		repos[i] = taskRepositoryRow{
			ID: NewID(), TaskID: tasks[i].ID, Path: fmt.Sprintf("/src/repo-%d", i),
			BaseBranch: "main", Branch: fmt.Sprintf("herd/task-%d", i), CreatedAt: at,
		}
		payload, err := json.Marshal(shared.TaskStatusSummary{
			Revision: 3, UpdatedAt: at,
			Git:               &shared.GitSummary{Additions: i, Deletions: 1, ChangedFiles: 2, Ahead: 1},
			PullRequest:       &shared.PullRequestSummary{Count: 1, OpenCount: 1, AggregateState: shared.PRPending, Number: i + 1},
			QueuedPromptCount: i % 3,
		})
		if err != nil {
			tb.Fatalf("encode summary: %v", err)
		}
		sums[i] = taskSummaryRow{TaskID: tasks[i].ID, WorkspaceID: workspaceID, Revision: 3, Payload: string(payload), UpdatedAt: at}
	}
	const batch = 500
	err := s.write.Transaction(func(tx *gorm.DB) error {
		if err := tx.CreateInBatches(tasks, batch).Error; err != nil {
			return err
		}
		if err := tx.CreateInBatches(repos, batch).Error; err != nil {
			return err
		}
		return tx.CreateInBatches(sums, batch).Error
	})
	if err != nil {
		tb.Fatalf("seed tasks: %v", err)
	}
	return listOrder(tasks)
}

// listOrder returns the ids of rows in task list order.
func listOrder(rows []taskRow) []string {
	sorted := append([]taskRow(nil), rows...)
	slices.SortFunc(sorted, func(a, b taskRow) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	ids := make([]string, len(sorted))
	for i, r := range sorted {
		ids[i] = r.ID
	}
	return ids
}
