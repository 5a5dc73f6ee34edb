package store

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/herd-dev/herd/server/store/storetest"
	"github.com/herd-dev/herd/shared"
)

// BenchmarkSummarySources loads the sources of 200 tasks, each with two
// sessions, a pending request, an error answered by an agent message, a
// queued prompt, two repositories and a pull request: one projector batch.
// The primary session has a complete answer whose first line is longer
// than a preview keeps, so its excerpt is as long as excerpts get.
// The "history" case gives every repository 1,000 earlier observations,
// the newest 5 of them failed, to show that finding the latest success
// does not read a repository's whole history.
func BenchmarkSummarySources(b *testing.B) {
	for _, dialect := range []string{dialectSQLite, dialectPostgres} {
		for _, history := range []int{0, 1000} {
			b.Run(fmt.Sprintf("%s/history=%d", dialect, history), func(b *testing.B) {
				if dialect == dialectPostgres && os.Getenv(storetest.PostgresURLEnv) == "" {
					b.Skip(storetest.PostgresURLEnv + " is not set")
				}
				benchmarkSummarySources(b, MustOpen(b, dialect), 200, history)
			})
		}
	}
}

func benchmarkSummarySources(b *testing.B, s *Store, n, history int) {
	ctx := context.Background()
	w := mustWorkspace(b, s, "bench")
	ids := make([]string, n)
	var repos []string
	for i := range ids {
		task := sourceTask(b, s, w.ID, "/a", "/b")
		ids[i] = task.ID
		for _, r := range task.Repositories {
			repos = append(repos, r.ID)
		}
		first, second := mustSession(b, s, task.ID), mustSession(b, s, task.ID)
		mustAppend(b, s, first, shared.MessageAgent, shared.MessageComplete, "", strings.Repeat("Looking into it. ", 60)+"\nMore.")
		mustAppend(b, s, first, shared.MessagePermissionRequest, shared.MessagePending, "p", "Edit notes.txt")
		mustAppend(b, s, second, shared.MessageError, shared.MessageComplete, "", "rate limited")
		mustAppend(b, s, second, shared.MessageAgent, shared.MessageComplete, "", "retrying")
		if _, _, err := s.AddUserMessage(ctx, first, fmt.Sprintf("c-%d", i), "next"); err != nil {
			b.Fatal(err)
		}
		if _, err := s.UpsertPullRequest(ctx, PullRequest{TaskID: task.ID, Repository: "o/r", Number: i + 1, URL: "u", State: PullRequestOpen}); err != nil {
			b.Fatal(err)
		}
	}
	seedObservations(b, s, repos, history)

	queries := countQueries(b, s)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		srcs, err := s.SummarySources(ctx, ids)
		if err != nil {
			b.Fatal(err)
		}
		if len(srcs) != n || srcs[0].Repositories[0].Observation == nil || len(srcs[0].AgentLine) != previewSourceChars {
			b.Fatalf("loaded %d sources: %+v", len(srcs), srcs[0])
		}
	}
	b.ReportMetric(float64(queries.Load())/float64(b.N), "queries/op")
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
}

// seedObservations gives each repository history+1 observations in batched
// inserts, the newest 5 failed when there is a history.
func seedObservations(b *testing.B, s *Store, repos []string, history int) {
	base := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	rows := make([]gitObservationRow, 0, len(repos)*(history+1))
	for _, repo := range repos {
		for i := range history + 1 {
			r := gitObservationRow{ID: NewID(), TaskRepositoryID: repo, ObservedAt: base.Add(time.Duration(i) * time.Second), Additions: i}
			if history > 0 && i > history-5 {
				r.Error = "index.lock exists"
			}
			rows = append(rows, r)
		}
	}
	err := s.write.Transaction(func(tx *gorm.DB) error { return tx.CreateInBatches(rows, 500).Error })
	if err != nil {
		b.Fatalf("seed observations: %v", err)
	}
	// Planner statistics, as autovacuum (PostgreSQL) or a periodic
	// ANALYZE (SQLite) would have them after the table grew.
	if err := s.write.Exec("ANALYZE").Error; err != nil {
		b.Fatalf("analyze: %v", err)
	}
}
