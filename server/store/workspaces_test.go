package store

import (
	"context"
	"reflect"
	"testing"

	"github.com/herd-dev/herd/shared"
)

func TestWorkspacesCreateGetAndListOldestFirst(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)

		empty, err := s.ListWorkspaces(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if empty == nil || len(empty) != 0 {
			t.Fatalf("ListWorkspaces on an empty database = %#v, want an empty non-nil slice", empty)
		}

		first := mustWorkspace(t, s, "first")
		second := mustWorkspace(t, s, "second")
		if first.ID == "" || first.Name != "first" || first.CreatedAt.IsZero() {
			t.Fatalf("created workspace %+v", first)
		}

		got, err := s.GetWorkspace(ctx, second.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, second) {
			t.Fatalf("GetWorkspace = %+v, want %+v", got, second)
		}

		all, err := s.ListWorkspaces(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := []shared.Workspace{first, second}; !reflect.DeepEqual(all, want) {
			t.Fatalf("ListWorkspaces = %+v, want %+v", all, want)
		}
	})
}

func TestWorkspaceErrors(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		if _, err := s.GetWorkspace(ctx, "missing"); shared.ErrorCode(err) != shared.CodeNotFound {
			t.Errorf("GetWorkspace(missing) error %v, want not_found", err)
		}
		if _, err := s.CreateWorkspace(ctx, "  "); shared.ErrorCode(err) != shared.CodeBadRequest {
			t.Errorf("CreateWorkspace(blank) error %v, want bad_request", err)
		}
	})
}
