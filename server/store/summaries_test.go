package store

import (
	"context"
	"sync"
	"testing"

	"github.com/herd-dev/herd/shared"
)

// A semantic no-op writes nothing; concurrent changes each get their own
// revision and none is lost.
func TestUpdateSummaryIsMonotonicAndSkipsNoOps(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		task := mustTask(t, s, shared.TaskCreateRequest{WorkspaceID: mustWorkspace(t, s, "w").ID, Title: "t"})

		same := func(x shared.TaskStatusSummary) shared.TaskStatusSummary { return x }
		got, _, changed, err := s.UpdateSummary(ctx, task.ID, same)
		if err != nil || changed || got.Revision != 1 {
			t.Fatalf("no-op update = %+v, changed %v, %v", got, changed, err)
		}

		var wg sync.WaitGroup
		var mu sync.Mutex
		revisions := map[int64]bool{}
		for range 8 {
			wg.Go(func() {
				sum, ws, changed, err := s.UpdateSummary(ctx, task.ID, func(x shared.TaskStatusSummary) shared.TaskStatusSummary {
					x.QueuedPromptCount++
					return x
				})
				if err != nil || !changed || ws != task.WorkspaceID {
					t.Errorf("update = %+v, %v, %v", sum, changed, err)
					return
				}
				mu.Lock()
				revisions[sum.Revision] = true
				mu.Unlock()
			})
		}
		wg.Wait()
		if len(revisions) != 8 {
			t.Fatalf("8 concurrent updates produced %d distinct revisions", len(revisions))
		}
		final, err := s.GetTask(ctx, task.ID)
		if err != nil || final.StatusSummary.Revision != 9 || final.StatusSummary.QueuedPromptCount != 8 {
			t.Fatalf("final summary = %+v, %v", final.StatusSummary, err)
		}
	})
}
