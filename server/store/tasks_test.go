package store

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/herd-dev/herd/shared"
)

func ptr[T any](v T) *T { return &v }

func TestCreateTaskStoresRepositoriesAndAFirstSummary(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		w := mustWorkspace(t, s, "w")

		task := mustTask(t, s, shared.TaskCreateRequest{
			WorkspaceID: w.ID,
			Title:       "Fix the flaky test",
			Description: "It fails on Tuesdays.",
			Repositories: []shared.RepositoryInput{
				{Path: "/src/api", BaseBranch: "main"},
				{Path: "/src/web"},
			},
		})
		if task.ID == "" || task.WorkspaceID != w.ID || task.Archived || task.PrimarySessionID != "" {
			t.Fatalf("created task %+v", task)
		}
		if !task.UpdatedAt.Equal(task.CreatedAt) {
			t.Errorf("new task updated_at %v, want created_at %v", task.UpdatedAt, task.CreatedAt)
		}
		if len(task.Repositories) != 2 || task.Repositories[0].Path != "/src/api" ||
			task.Repositories[0].BaseBranch != "main" || task.Repositories[1].Path != "/src/web" {
			t.Fatalf("repositories %+v, want /src/api (main) then /src/web", task.Repositories)
		}
		want := shared.TaskStatusSummary{Revision: 1, UpdatedAt: task.CreatedAt}
		if task.StatusSummary == nil || !reflect.DeepEqual(*task.StatusSummary, want) {
			t.Fatalf("summary %+v, want %+v", task.StatusSummary, want)
		}

		got, err := s.GetTask(ctx, task.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, task) {
			t.Fatalf("GetTask returned\n%+v\nCreateTask returned\n%+v", got, task)
		}
	})
}

func TestCreateTaskWithoutRepositoriesHasAnEmptyList(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := MustOpen(t, dialect)
		task := mustTask(t, s, shared.TaskCreateRequest{WorkspaceID: mustWorkspace(t, s, "w").ID, Title: "t"})
		if task.Repositories == nil || len(task.Repositories) != 0 {
			t.Fatalf("repositories %#v, want an empty non-nil slice", task.Repositories)
		}
		got, err := s.GetTask(context.Background(), task.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Repositories == nil || len(got.Repositories) != 0 {
			t.Fatalf("loaded repositories %#v, want an empty non-nil slice", got.Repositories)
		}
	})
}

func TestTaskRequestErrors(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		w := mustWorkspace(t, s, "w")
		task := mustTask(t, s, shared.TaskCreateRequest{WorkspaceID: w.ID, Title: "t"})

		tests := []struct {
			name string
			call func() error
			want shared.Code
		}{
			{"create in an unknown workspace", func() error {
				_, err := s.CreateTask(ctx, shared.TaskCreateRequest{WorkspaceID: "missing", Title: "t"})
				return err
			}, shared.CodeNotFound},
			{"create without workspace", func() error {
				_, err := s.CreateTask(ctx, shared.TaskCreateRequest{Title: "t"})
				return err
			}, shared.CodeBadRequest},
			{"create without title", func() error {
				_, err := s.CreateTask(ctx, shared.TaskCreateRequest{WorkspaceID: w.ID, Title: " "})
				return err
			}, shared.CodeBadRequest},
			{"create with a repository without path", func() error {
				_, err := s.CreateTask(ctx, shared.TaskCreateRequest{WorkspaceID: w.ID, Title: "t",
					Repositories: []shared.RepositoryInput{{BaseBranch: "main"}}})
				return err
			}, shared.CodeBadRequest},
			{"get an unknown task", func() error {
				_, err := s.GetTask(ctx, "missing")
				return err
			}, shared.CodeNotFound},
			{"update an unknown task", func() error {
				_, err := s.UpdateTask(ctx, shared.TaskUpdateRequest{TaskID: "missing", Title: ptr("x")})
				return err
			}, shared.CodeNotFound},
			{"update to an empty title", func() error {
				_, err := s.UpdateTask(ctx, shared.TaskUpdateRequest{TaskID: task.ID, Title: ptr("")})
				return err
			}, shared.CodeBadRequest},
			{"update to an unknown primary session", func() error {
				_, err := s.UpdateTask(ctx, shared.TaskUpdateRequest{TaskID: task.ID, PrimarySessionID: ptr("missing")})
				return err
			}, shared.CodeNotFound},
			{"archive an unknown task", func() error {
				_, err := s.ArchiveTask(ctx, "missing")
				return err
			}, shared.CodeNotFound},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if err := tt.call(); shared.ErrorCode(err) != tt.want {
					t.Fatalf("error %v, want %s", err, tt.want)
				}
			})
		}
	})
}

func TestUpdateTaskChangesOnlyGivenFields(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		task := mustTask(t, s, shared.TaskCreateRequest{
			WorkspaceID: mustWorkspace(t, s, "w").ID, Title: "old", Description: "keep me",
		})

		got, err := s.UpdateTask(ctx, shared.TaskUpdateRequest{TaskID: task.ID, Title: ptr("new")})
		if err != nil {
			t.Fatal(err)
		}
		if got.Title != "new" || got.Description != "keep me" {
			t.Fatalf("after update title=%q description=%q, want new and keep me", got.Title, got.Description)
		}
		if !got.UpdatedAt.After(task.UpdatedAt) {
			t.Errorf("updated_at %v not after %v", got.UpdatedAt, task.UpdatedAt)
		}
		if !got.CreatedAt.Equal(task.CreatedAt) || !reflect.DeepEqual(got.StatusSummary, task.StatusSummary) {
			t.Errorf("update touched created_at or the summary: %+v", got)
		}

		got, err = s.UpdateTask(ctx, shared.TaskUpdateRequest{TaskID: task.ID, Description: ptr("")})
		if err != nil {
			t.Fatal(err)
		}
		if got.Title != "new" || got.Description != "" {
			t.Fatalf("after clearing description title=%q description=%q", got.Title, got.Description)
		}
	})
}

func TestUpdateTaskPrimarySessionMustBelongToTheTask(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		w := mustWorkspace(t, s, "w")
		task := mustTask(t, s, shared.TaskCreateRequest{WorkspaceID: w.ID, Title: "mine"})
		other := mustTask(t, s, shared.TaskCreateRequest{WorkspaceID: w.ID, Title: "other"})
		own := mustSession(t, s, task.ID)
		foreign := mustSession(t, s, other.ID)

		got, err := s.UpdateTask(ctx, shared.TaskUpdateRequest{TaskID: task.ID, PrimarySessionID: &own})
		if err != nil {
			t.Fatal(err)
		}
		if got.PrimarySessionID != own {
			t.Fatalf("primary session %q, want %q", got.PrimarySessionID, own)
		}

		_, err = s.UpdateTask(ctx, shared.TaskUpdateRequest{TaskID: task.ID, Title: ptr("renamed"), PrimarySessionID: &foreign})
		if shared.ErrorCode(err) != shared.CodeNotFound {
			t.Fatalf("primary session of another task: error %v, want not_found", err)
		}
		unchanged, err := s.GetTask(ctx, task.ID)
		if err != nil {
			t.Fatal(err)
		}
		if unchanged.Title != "mine" || unchanged.PrimarySessionID != own {
			t.Fatalf("a refused update changed the task: %+v", unchanged)
		}

		cleared, err := s.UpdateTask(ctx, shared.TaskUpdateRequest{TaskID: task.ID, PrimarySessionID: ptr("")})
		if err != nil {
			t.Fatal(err)
		}
		if cleared.PrimarySessionID != "" {
			t.Fatalf("primary session %q after clearing", cleared.PrimarySessionID)
		}
	})
}

func TestArchiveTaskIsIdempotent(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		task := mustTask(t, s, shared.TaskCreateRequest{WorkspaceID: mustWorkspace(t, s, "w").ID, Title: "t"})

		archived, err := s.ArchiveTask(ctx, task.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !archived.Archived || !archived.UpdatedAt.After(task.UpdatedAt) {
			t.Fatalf("archived task %+v: want archived with a newer updated_at than %v", archived, task.UpdatedAt)
		}
		again, err := s.ArchiveTask(ctx, task.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(again, archived) {
			t.Fatalf("archiving twice changed the task:\n%+v\n%+v", again, archived)
		}
	})
}

func TestTimesRoundTripExactlyInUTC(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		w := mustWorkspace(t, s, "w")
		task := mustTask(t, s, shared.TaskCreateRequest{WorkspaceID: w.ID, Title: "t"})

		gotW, err := s.GetWorkspace(ctx, w.ID)
		if err != nil {
			t.Fatal(err)
		}
		gotT, err := s.GetTask(ctx, task.ID)
		if err != nil {
			t.Fatal(err)
		}
		for name, pair := range map[string][2]time.Time{
			"workspace created_at": {w.CreatedAt, gotW.CreatedAt},
			"task created_at":      {task.CreatedAt, gotT.CreatedAt},
			"task updated_at":      {task.UpdatedAt, gotT.UpdatedAt},
			"summary updated_at":   {task.StatusSummary.UpdatedAt, gotT.StatusSummary.UpdatedAt},
		} {
			written, read := pair[0], pair[1]
			if written != read || read.Location() != time.UTC || read.Nanosecond()%1000 != 0 {
				t.Errorf("%s: wrote %v, read %v; want the same UTC instant at microsecond precision", name, written, read)
			}
		}
	})
}

func TestDBTimeIsUTCMicroseconds(t *testing.T) {
	in := time.Date(2026, 11, 29, 13, 0, 0, 123456789, time.FixedZone("CET", 3600))
	want := time.Date(2026, 11, 29, 12, 0, 0, 123456000, time.UTC)
	if got := dbTime(in); got != want {
		t.Fatalf("dbTime(%v) = %v, want %v", in, got, want)
	}
}

// TestConcurrentCreateTask writes from 8 goroutines through two Stores on the
// same database, as two herd processes would: on SQLite the second Store's
// writer must wait for the first's lock instead of failing with "database is
// locked".
func TestConcurrentCreateTask(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		cfg := MustConfig(t, dialect)
		s := mustOpenConfig(t, cfg)
		stores := []*Store{s, mustOpenConfig(t, cfg)}
		w := mustWorkspace(t, s, "w")

		const workers, each = 8, 10
		var wg sync.WaitGroup
		errs := make(chan error, workers*each)
		for g := range workers {
			wg.Go(func() {
				for i := range each {
					_, err := stores[g%len(stores)].CreateTask(ctx, shared.TaskCreateRequest{
						WorkspaceID:  w.ID,
						Title:        fmt.Sprintf("worker %d task %d", g, i),
						Repositories: []shared.RepositoryInput{{Path: "/src"}},
					})
					if err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("concurrent CreateTask: %v", err)
		}

		page, err := s.ListTasks(ctx, shared.TaskListRequest{WorkspaceID: w.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Tasks) != workers*each {
			t.Fatalf("listed %d tasks, want %d", len(page.Tasks), workers*each)
		}
	})
}
