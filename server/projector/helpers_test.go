package projector

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/server/store/dbtest"
	"github.com/herd-dev/herd/server/store/storetest"
	"github.com/herd-dev/herd/shared"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// forEachDialect runs fn as one subtest per database.
func forEachDialect(t *testing.T, fn func(t *testing.T, db *testDB)) {
	t.Helper()
	for _, d := range dbtest.Dialects {
		t.Run(d, func(t *testing.T) { fn(t, openDB(t, d)) })
	}
}

// testDB is a fresh database with a Store on it and a raw connection to
// it.
type testDB struct{ *dbtest.DB }

// openDB opens a testDB on a fresh database of dialect (see dbtest.Open).
func openDB(tb testing.TB, dialect string) *testDB { return &testDB{dbtest.Open(tb, dialect)} }

// task creates a task with the given repository paths.
func (db *testDB) task(tb testing.TB, repos ...string) shared.Task {
	tb.Helper()
	in := shared.TaskCreateRequest{WorkspaceID: db.Workspace.ID, Title: "t"}
	for _, p := range repos {
		in.Repositories = append(in.Repositories, shared.RepositoryInput{Path: p, BaseBranch: "main"})
	}
	task, err := db.CreateTask(context.Background(), in)
	require.NoError(tb, err)
	return task
}

// session creates a session of a task.
func (db *testDB) session(tb testing.TB, taskID string) shared.Session {
	tb.Helper()
	s, err := db.CreateSession(context.Background(), taskID, "mock")
	require.NoError(tb, err)
	return s
}

// message appends a message to a session.
func (db *testDB) message(tb testing.TB, sessionID string, typ shared.MessageType, status shared.MessageState, pendingID, content string) shared.Message {
	tb.Helper()
	m, err := db.AppendMessage(context.Background(), store.NewMessage{
		SessionID: sessionID, Type: typ, Status: status, PendingID: pendingID, Content: content,
	})
	require.NoError(tb, err)
	return m
}

// sources reads the sources of one task.
func (db *testDB) sources(tb testing.TB, taskID string) store.SummarySource {
	tb.Helper()
	srcs, err := db.SummarySources(context.Background(), []string{taskID})
	require.NoError(tb, err)
	require.Len(tb, srcs, 1)
	return srcs[0]
}

// stored returns a task's stored summary, which must exist.
func (db *testDB) stored(tb testing.TB, taskID string) shared.TaskStatusSummary {
	tb.Helper()
	src := db.sources(tb, taskID)
	require.NotNil(tb, src.Current, "summary of task %s", taskID)
	require.Equal(tb, src.Revision, src.Current.Revision, "row and payload revisions of task %s", taskID)
	return *src.Current
}

// requireConverged checks that a task's stored summary is what Derive
// makes of its current sources.
func (db *testDB) requireConverged(tb testing.TB, taskID string) {
	tb.Helper()
	src := db.sources(tb, taskID)
	require.NotNil(tb, src.Current, "summary of task %s", taskID)
	want, got := Derive(src), *src.Current
	got.Revision, got.UpdatedAt = 0, time.Time{}
	require.True(tb, sameSummary(want, got), "task %s stored\n%+v\nwant\n%+v", taskID, got, want)
}

// published is one publication a recorder saw.
type published struct {
	workspaceID, action string
	event               shared.StatusSummaryEvent
}

// recorder is a Publisher that keeps every publication and signals each
// on ch when ch is not nil.
type recorder struct {
	mu     sync.Mutex
	events []published
	ch     chan published
	// onPublish, when set, runs inside PublishWorkspace.
	onPublish func(shared.StatusSummaryEvent)
}

func (r *recorder) PublishWorkspace(workspaceID, action string, payload any) {
	e := published{workspaceID: workspaceID, action: action, event: payload.(shared.StatusSummaryEvent)}
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
	if r.onPublish != nil {
		r.onPublish(e.event)
	}
	if r.ch != nil {
		r.ch <- e
	}
}

// all returns the publications so far.
func (r *recorder) all() []published {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]published(nil), r.events...)
}

// forTask returns the summaries published for a task, in order.
func (r *recorder) forTask(taskID string) []shared.TaskStatusSummary {
	var out []shared.TaskStatusSummary
	for _, e := range r.all() {
		if e.event.TaskID == taskID {
			out = append(out, e.event.StatusSummary)
		}
	}
	return out
}

// start returns a started Projector over db, closed when tb ends.
func start(tb testing.TB, db *testDB, pub Publisher, mutate ...func(*Config)) *Projector {
	tb.Helper()
	return startSpied(tb, db, pub, nil, mutate...)
}

// startSpied is start with the projector's store seen through spy (when
// not nil) and retry delays of a few milliseconds.
func startSpied(tb testing.TB, db *testDB, pub Publisher, spy *spySources, mutate ...func(*Config)) *Projector {
	tb.Helper()
	cfg := Config{Store: db.Store}
	for _, m := range mutate {
		m(&cfg)
	}
	p, err := New(cfg)
	require.NoError(tb, err)
	if spy != nil {
		spy.sources, p.st = p.st, spy
		p.firstBackoff, p.lastBackoff = time.Millisecond, 5*time.Millisecond
	}
	p.Start(pub)
	tb.Cleanup(p.Close)
	return p
}

// spySources records the largest batch loaded, can fail loads on demand,
// and runs afterLoad, when set, after each successful load.
type spySources struct {
	sources
	largest   atomic.Int64
	failLoads atomic.Bool
	afterLoad func()
}

var errInjected = errors.New("injected failure: database unavailable")

func (s *spySources) SummarySources(ctx context.Context, ids []string) ([]store.SummarySource, error) {
	if s.failLoads.Load() {
		return nil, errInjected
	}
	for {
		l := s.largest.Load()
		if int64(len(ids)) <= l || s.largest.CompareAndSwap(l, int64(len(ids))) {
			break
		}
	}
	srcs, err := s.sources.SummarySources(ctx, ids)
	if err == nil && s.afterLoad != nil {
		s.afterLoad()
	}
	return srcs, err
}

// markAndFlush marks tasks and waits for their projection.
func markAndFlush(tb testing.TB, p *Projector, taskIDs ...string) {
	tb.Helper()
	for _, id := range taskIDs {
		p.Mark(id)
	}
	require.NoError(tb, p.Flush(context.Background()))
}

// logBuffer is a concurrency-safe buffer for a test logger.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// logger returns a logger writing text to b.
func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, nil))
}
