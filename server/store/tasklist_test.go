package store

import (
	"context"
	"encoding/base64"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/herd-dev/herd/shared"
)

// seedStart is the creation time of the oldest seeded task.
var seedStart = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// inGroupsOf gives every size consecutive tasks the same creation time, so
// that pages must break ties by id.
func inGroupsOf(size int) func(i int) time.Time {
	return func(i int) time.Time { return seedStart.Add(time.Duration(i/size) * time.Millisecond) }
}

// listAll follows next_cursor from the first page to the last and returns
// every listed id in order.
func listAll(t *testing.T, s *Store, q shared.TaskListRequest) []string {
	t.Helper()
	var ids []string
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatal("pagination does not end")
		}
		page, err := s.ListTasks(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if q.Limit > 0 && len(page.Tasks) > q.Limit {
			t.Fatalf("page of %d tasks exceeds limit %d", len(page.Tasks), q.Limit)
		}
		for _, task := range page.Tasks {
			ids = append(ids, task.ID)
		}
		if page.NextCursor == "" {
			return ids
		}
		q.Cursor = page.NextCursor
	}
}

func TestListTasksPagesReturnEveryTaskOnceNewestFirst(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := MustOpen(t, dialect)
		w := mustWorkspace(t, s, "w")
		want := seedTasks(t, s, w.ID, 25, inGroupsOf(3))

		for _, limit := range []int{1, 7, 24, 25, 26} {
			got := listAll(t, s, shared.TaskListRequest{WorkspaceID: w.ID, Limit: limit})
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("limit %d listed\n%v\nwant\n%v", limit, got, want)
			}
		}
	})
}

func TestListTasksCarriesRepositoriesAndSummaries(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		w := mustWorkspace(t, s, "w")
		var want []shared.Task
		for i, paths := range [][]string{{}, {"/a", "/b"}, {}, {"/c", "/d", "/e"}, {"/f"}} {
			in := shared.TaskCreateRequest{WorkspaceID: w.ID, Title: fmt.Sprintf("task %d", i)}
			for _, p := range paths {
				in.Repositories = append(in.Repositories, shared.RepositoryInput{Path: p, BaseBranch: "main"})
			}
			want = append([]shared.Task{mustTask(t, s, in)}, want...)
		}
		page, err := s.ListTasks(ctx, shared.TaskListRequest{WorkspaceID: w.ID})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(page.Tasks, want) {
			t.Fatalf("listed\n%+v\nwant, as created, newest first\n%+v", page.Tasks, want)
		}
		if page.NextCursor != "" {
			t.Fatalf("single page has next_cursor %q", page.NextCursor)
		}
	})
}

// A task whose summary row is missing is read without a summary, never
// with an empty one that reads as "no session", and the reads report it
// so the summary can be rebuilt.
func TestReadsReportAMissingSummary(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		var reported []string
		s.OnMissingSummary(func(id string) { reported = append(reported, id) })
		w := mustWorkspace(t, s, "w")
		whole := mustTask(t, s, shared.TaskCreateRequest{WorkspaceID: w.ID, Title: "whole"})
		task := mustTask(t, s, shared.TaskCreateRequest{WorkspaceID: w.ID, Title: "t"})
		if err := s.write.Exec("DELETE FROM task_status_summaries WHERE task_id = ?", task.ID).Error; err != nil {
			t.Fatal(err)
		}
		page, err := s.ListTasks(ctx, shared.TaskListRequest{WorkspaceID: w.ID})
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range page.Tasks {
			if (got.StatusSummary == nil) != (got.ID == task.ID) {
				t.Errorf("task %s listed with summary %+v", got.Title, got.StatusSummary)
			}
		}
		got, err := s.GetTask(ctx, task.ID)
		if err != nil || got.StatusSummary != nil {
			t.Fatalf("get = %+v, %v; want no summary", got.StatusSummary, err)
		}
		if !reflect.DeepEqual(reported, []string{task.ID, task.ID}) {
			t.Fatalf("reported %v, want the task without a summary (not %s) once per read", reported, whole.ID)
		}
	})
}

func TestListTasksLeavesOutArchivedTasksUnlessAsked(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		w := mustWorkspace(t, s, "w")
		all := seedTasks(t, s, w.ID, 10, inGroupsOf(1))
		var active []string
		for i, id := range all {
			if i%3 == 0 {
				if _, err := s.ArchiveTask(ctx, id); err != nil {
					t.Fatal(err)
				}
				continue
			}
			active = append(active, id)
		}

		if got := listAll(t, s, shared.TaskListRequest{WorkspaceID: w.ID, Limit: 4}); !reflect.DeepEqual(got, active) {
			t.Fatalf("default listing\n%v\nwant the unarchived\n%v", got, active)
		}
		if got := listAll(t, s, shared.TaskListRequest{WorkspaceID: w.ID, Limit: 4, IncludeArchived: true}); !reflect.DeepEqual(got, all) {
			t.Fatalf("listing with archived\n%v\nwant\n%v", got, all)
		}
	})
}

func TestListTasksOnlyListsTheGivenWorkspace(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		mine := mustWorkspace(t, s, "mine")
		other := mustWorkspace(t, s, "other")
		want := seedTasks(t, s, mine.ID, 3, inGroupsOf(1))
		seedTasks(t, s, other.ID, 4, inGroupsOf(1))
		if got := listAll(t, s, shared.TaskListRequest{WorkspaceID: mine.ID}); !reflect.DeepEqual(got, want) {
			t.Fatalf("listed %v, want %v", got, want)
		}

		empty := mustWorkspace(t, s, "empty")
		page, err := s.ListTasks(ctx, shared.TaskListRequest{WorkspaceID: empty.ID})
		if err != nil {
			t.Fatal(err)
		}
		if page.Tasks == nil || len(page.Tasks) != 0 || page.NextCursor != "" {
			t.Fatalf("empty workspace listed %#v", page)
		}
	})
}

func TestListTasksErrors(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		w := mustWorkspace(t, s, "w")
		enc := base64.RawURLEncoding.EncodeToString
		tests := []struct {
			name string
			q    shared.TaskListRequest
			want shared.Code
		}{
			{"no workspace", shared.TaskListRequest{}, shared.CodeBadRequest},
			{"unknown workspace", shared.TaskListRequest{WorkspaceID: "missing"}, shared.CodeNotFound},
			{"negative limit", shared.TaskListRequest{WorkspaceID: w.ID, Limit: -1}, shared.CodeBadRequest},
			{"cursor not base64", shared.TaskListRequest{WorkspaceID: w.ID, Cursor: "!!"}, shared.CodeBadRequest},
			{"cursor without id", shared.TaskListRequest{WorkspaceID: w.ID, Cursor: enc([]byte("12,"))}, shared.CodeBadRequest},
			{"cursor without separator", shared.TaskListRequest{WorkspaceID: w.ID, Cursor: enc([]byte("12"))}, shared.CodeBadRequest},
			{"cursor time not a number", shared.TaskListRequest{WorkspaceID: w.ID, Cursor: enc([]byte("noon,abc"))}, shared.CodeBadRequest},
			{"cursor time out of range", shared.TaskListRequest{WorkspaceID: w.ID, Cursor: enc([]byte("9223372036854775807,abc"))}, shared.CodeBadRequest},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if _, err := s.ListTasks(ctx, tt.q); shared.ErrorCode(err) != tt.want {
					t.Fatalf("error %v, want %s", err, tt.want)
				}
			})
		}
	})
}

func TestPageSize(t *testing.T) {
	for _, tt := range []struct{ limit, want int }{
		{0, shared.DefaultTaskPage},
		{1, 1},
		{shared.MaxTaskPage, shared.MaxTaskPage},
		{shared.MaxTaskPage + 1, shared.MaxTaskPage},
	} {
		if got, err := pageSize(tt.limit); err != nil || got != tt.want {
			t.Errorf("pageSize(%d) = %d, %v; want %d", tt.limit, got, err, tt.want)
		}
	}
	if _, err := pageSize(-1); shared.ErrorCode(err) != shared.CodeBadRequest {
		t.Errorf("pageSize(-1) error %v, want bad_request", err)
	}
}

// TestLoadingTasksTakesAConstantNumberOfQueries is the budget "loading N
// tasks with summaries does not grow with N".
func TestLoadingTasksTakesAConstantNumberOfQueries(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		queries := countQueries(t, s)

		counts := map[int]int64{}
		for _, n := range []int{10, 1000} {
			w := mustWorkspace(t, s, "w")
			seedTasks(t, s, w.ID, n, inGroupsOf(7))
			queries.Store(0)
			page, err := s.ListTasks(ctx, shared.TaskListRequest{WorkspaceID: w.ID, Limit: shared.MaxTaskPage})
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Tasks) != n {
				t.Fatalf("listed %d tasks, want %d", len(page.Tasks), n)
			}
			for _, task := range page.Tasks {
				if len(task.Repositories) != 1 || task.StatusSummary == nil || task.StatusSummary.Revision != 3 {
					t.Fatalf("task %s listed without its repository or summary: %+v", task.ID, task)
				}
			}
			counts[n] = queries.Load()

			queries.Store(0)
			if _, err := s.GetTask(ctx, page.Tasks[0].ID); err != nil {
				t.Fatal(err)
			}
			if got := queries.Load(); got != 3 {
				t.Errorf("GetTask issued %d queries, want 3", got)
			}
		}
		if counts[10] != counts[1000] || counts[10] != 3 {
			t.Fatalf("ListTasks issued %d queries for 10 tasks and %d for 1,000; want 3 for both", counts[10], counts[1000])
		}
	})
}

// BenchmarkListTasks10k loads 10,000 tasks, each with a repository and a
// summary, in one page from SQLite. Budget: 200 ms per op.
func BenchmarkListTasks10k(b *testing.B) {
	ctx := context.Background()
	s := MustOpen(b, dialectSQLite)
	w := mustWorkspace(b, s, "bench")
	const n = 10000
	seedTasks(b, s, w.ID, n, inGroupsOf(3))
	queries := countQueries(b, s)
	q := shared.TaskListRequest{WorkspaceID: w.ID, Limit: n}

	b.ReportAllocs()
	queries.Store(0)
	for b.Loop() {
		page, err := s.ListTasks(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		if len(page.Tasks) != n {
			b.Fatalf("listed %d tasks, want %d", len(page.Tasks), n)
		}
	}
	b.ReportMetric(float64(queries.Load())/float64(b.N), "queries/op")
}

func FuzzDecodeCursor(f *testing.F) {
	f.Add(encodeCursor(seedStart, NewID()))
	f.Add("")
	f.Add("!!")
	f.Add(base64.RawURLEncoding.EncodeToString([]byte("-1,x")))
	f.Fuzz(func(t *testing.T, cursor string) {
		at, id, err := decodeCursor(cursor)
		if err != nil {
			if shared.ErrorCode(err) != shared.CodeBadRequest {
				t.Fatalf("decodeCursor error %v is not bad_request", err)
			}
			return
		}
		at2, id2, err := decodeCursor(encodeCursor(at, id))
		if err != nil || at2 != at || id2 != id {
			t.Fatalf("cursor %q decodes to (%v, %q) but re-encodes to (%v, %q, %v)", cursor, at, id, at2, id2, err)
		}
	})
}
