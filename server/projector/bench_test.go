package projector

import (
	"context"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/server/store/storetest"
	"github.com/herd-dev/herd/shared"
)

// benchTasks is the number of tasks the benchmarks spread events over.
const benchTasks = 200

// counter is a Publisher that only counts.
type counter struct{ n atomic.Int64 }

func (c *counter) PublishWorkspace(string, string, any) { c.n.Add(1) }

// benchDialects runs fn on SQLite, and on PostgreSQL when
// HERD_TEST_POSTGRES_URL is set.
func benchDialects(b *testing.B, fn func(b *testing.B, db *testDB, tasks, sessions []string)) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		b.Run(dialect, func(b *testing.B) {
			if dialect == "postgres" && os.Getenv(storetest.PostgresURLEnv) == "" {
				b.Skip(storetest.PostgresURLEnv + " is not set")
			}
			db := openDB(b, dialect)
			tasks := make([]string, benchTasks)
			sessions := make([]string, benchTasks)
			for i := range tasks {
				task := db.task(b)
				tasks[i], sessions[i] = task.ID, db.session(b, task.ID).ID
			}
			fn(b, db, tasks, sessions)
		})
	}
}

// setSubagents changes a source of a session's task summary.
func setSubagents(ctx context.Context, db *testDB, session string, n int) error {
	_, _, err := db.SetActivity(ctx, session, shared.SessionCreated, store.Activity{Subagents: n})
	return err
}

// BenchmarkSourceEvents measures how many source events the projector
// absorbs: b.N marks spread over 200 tasks whose
// sources another goroutine keeps changing as fast as the database allows,
// timed from the first mark until Flush has projected the last one.
func BenchmarkSourceEvents(b *testing.B) {
	benchDialects(b, func(b *testing.B, db *testDB, tasks, sessions []string) {
		ctx := context.Background()
		pub := &counter{}
		p := start(b, db, pub)

		stop := make(chan struct{})
		var changes atomic.Int64
		var wg sync.WaitGroup
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := setSubagents(ctx, db, sessions[i%benchTasks], i/benchTasks%7); err != nil {
					b.Error(err)
					return
				}
				changes.Add(1)
			}
		})

		before := p.Stats()
		b.ResetTimer()
		begin := time.Now()
		for i := range b.N {
			p.Mark(tasks[i%benchTasks])
		}
		close(stop)
		wg.Wait()
		require.NoError(b, p.Flush(ctx))
		elapsed := time.Since(begin).Seconds()
		b.StopTimer()

		after := p.Stats()
		b.ReportMetric(float64(b.N)/elapsed, "events/s")
		b.ReportMetric(float64(after.Projected-before.Projected)/elapsed, "projections/s")
		b.ReportMetric(float64(after.Written-before.Written)/elapsed, "writes/s")
		b.ReportMetric(float64(changes.Load())/elapsed, "source-changes/s")
	})
}

// BenchmarkChangedTasks measures projection throughput when every
// projection writes: each op changes a source of all 200 tasks (untimed),
// marks them and flushes, which derives, stores and publishes 200 new
// summaries and re-checks each once.
func BenchmarkChangedTasks(b *testing.B) {
	benchDialects(b, func(b *testing.B, db *testDB, tasks, sessions []string) {
		ctx := context.Background()
		pub := &counter{}
		p := start(b, db, pub)
		markAndFlush(b, p, tasks...)
		before := p.Stats()
		b.ResetTimer()
		for i := range b.N {
			b.StopTimer()
			for _, s := range sessions {
				require.NoError(b, setSubagents(ctx, db, s, 1+i%7))
			}
			b.StartTimer()
			markAndFlush(b, p, tasks...)
		}
		b.StopTimer()
		after := p.Stats()
		elapsed := b.Elapsed().Seconds()
		require.Equal(b, uint64(b.N*benchTasks), after.Written-before.Written)
		b.ReportMetric(float64(after.Written-before.Written)/elapsed, "writes/s")
		b.ReportMetric(float64(after.Projected-before.Projected)/elapsed, "projections/s")
	})
}

// BenchmarkDerivePreview measures what the preview adds to a derivation:
// the primary session's agent line as long as the store keeps it (512
// bytes), cleaned and cut to shared.MaxPreviewBytes.
func BenchmarkDerivePreview(b *testing.B) {
	src := store.SummarySource{
		PrimarySessionID: "a",
		Sessions:         []shared.Session{{ID: "a", State: shared.SessionRunning, ForegroundActivity: shared.ActivityGenerating}},
		AgentLine:        "## " + strings.Repeat("Looking into  the\tfailing test. ", 16)[:509],
		PromptLine:       "Fix the login bug",
	}
	b.ReportAllocs()
	for b.Loop() {
		if Derive(src).Preview == "" {
			b.Fatal("no preview")
		}
	}
}
