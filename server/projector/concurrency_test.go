package projector

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// fixture is a task the concurrency test changes.
type fixture struct {
	id       string
	sessions []string
	repos    []string
}

// Several projectors over one database, and many goroutines changing
// source rows and marking tasks on any of them: no revision of a task is
// published twice, each projector publishes a task's revisions in
// increasing order, and once every projector has flushed, each stored
// summary is what Derive makes of the final sources.
func TestConcurrentProjectorsPublishEachRevisionOnceAndConverge(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testDB) {
		const (
			tasks      = 6
			projectors = 3
			workers    = 8
			steps      = 60
		)
		ctx := context.Background()
		fixtures := make([]fixture, tasks)
		for i := range fixtures {
			task := db.task(t, "/a", "/b")
			f := fixture{id: task.ID}
			for range 2 {
				f.sessions = append(f.sessions, db.session(t, task.ID).ID)
			}
			for _, r := range task.Repositories {
				f.repos = append(f.repos, r.ID)
			}
			fixtures[i] = f
		}
		pubs := make([]*recorder, projectors)
		ps := make([]*Projector, projectors)
		for i := range ps {
			pubs[i] = &recorder{}
			ps[i] = start(t, db, pubs[i], func(c *Config) { c.Debounce, c.BatchSize = time.Millisecond, 4 })
		}

		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(w), 2026))
				for step := range steps {
					f := fixtures[rng.IntN(tasks)]
					if err := change(ctx, db, ps[rng.IntN(projectors)], rng, f, fmt.Sprintf("%d-%d", w, step)); err != nil {
						t.Errorf("worker %d step %d: %v", w, step, err)
						return
					}
					ps[rng.IntN(projectors)].Mark(f.id)
					if rng.IntN(8) == 0 {
						if err := ps[rng.IntN(projectors)].Flush(ctx); err != nil {
							t.Errorf("flush: %v", err)
						}
					}
				}
			})
		}
		wg.Wait()
		for _, p := range ps {
			require.NoError(t, p.Flush(ctx))
		}

		once := map[string]map[int64]bool{}
		newest := map[string]int64{}
		for i, pub := range pubs {
			last := map[string]int64{}
			for _, e := range pub.all() {
				id, rev := e.event.TaskID, e.event.StatusSummary.Revision
				require.Greater(t, rev, last[id], "projector %d published revision %d of task %s after %d", i, rev, id, last[id])
				last[id] = rev
				if once[id] == nil {
					once[id] = map[int64]bool{}
				}
				require.False(t, once[id][rev], "revision %d of task %s published twice", rev, id)
				once[id][rev] = true
				newest[id] = max(newest[id], rev)
			}
		}
		for _, f := range fixtures {
			db.requireConverged(t, f.id)
			require.Equal(t, newest[f.id], db.stored(t, f.id).Revision, "stored revision of task %s is the newest published", f.id)
		}
		var stats Stats
		for _, p := range ps {
			s := p.Stats()
			stats.Written += s.Written
			stats.Conflicts += s.Conflicts
		}
		t.Logf("%d summaries written, %d writes lost to another projector", stats.Written, stats.Conflicts)
	})
}

// change makes one random change to a source row of f.
func change(ctx context.Context, db *testDB, p *Projector, rng *rand.Rand, f fixture, tag string) error {
	session := f.sessions[rng.IntN(len(f.sessions))]
	switch rng.IntN(9) {
	case 0:
		activity := []shared.ForegroundActivity{"", shared.ActivityGenerating, shared.ActivityBackground}[rng.IntN(3)]
		_, _, err := db.SetActivity(ctx, session, shared.SessionCreated, store.Activity{Foreground: activity, Subagents: rng.IntN(3)})
		return err
	case 1:
		typ := []shared.MessageType{shared.MessagePermissionRequest, shared.MessageClarificationRequest}[rng.IntN(2)]
		_, err := db.AppendMessage(ctx, store.NewMessage{SessionID: session, Type: typ, Status: shared.MessagePending, PendingID: "req-" + tag})
		return err
	case 2:
		pending, err := db.PendingRequests(ctx, session)
		if err != nil || len(pending) == 0 {
			return err
		}
		_, err = db.ResolveRequest(ctx, session, pending[0].PendingID, shared.MessageComplete, nil)
		if shared.ErrorCode(err) == shared.CodeNotFound {
			return nil // another worker resolved it first
		}
		return err
	case 3:
		_, err := db.AppendMessage(ctx, store.NewMessage{SessionID: session, Type: shared.MessageError, Status: shared.MessageComplete, Content: "error " + tag})
		return err
	case 4:
		_, err := db.AppendMessage(ctx, store.NewMessage{SessionID: session, Type: shared.MessageAgent, Status: shared.MessageComplete, Content: "answer " + tag})
		return err
	case 5:
		_, _, err := db.AddUserMessage(ctx, session, "prompt-"+tag, "later")
		return err
	case 6:
		o := store.GitObservation{Additions: rng.IntN(50), Deletions: rng.IntN(50), ChangedFiles: rng.IntN(9), Ahead: rng.IntN(3), Behind: rng.IntN(3)}
		if rng.IntN(4) == 0 {
			o = store.GitObservation{Error: "git failed"}
		}
		return db.RecordGitObservation(ctx, f.repos[rng.IntN(len(f.repos))], o)
	case 7:
		_, err := db.UpsertPullRequest(ctx, store.PullRequest{
			TaskID: f.id, Repository: "o/" + f.id, Number: 1 + rng.IntN(3), URL: "u",
			State:       []string{store.PullRequestOpen, store.PullRequestClosed}[rng.IntN(2)],
			ChecksState: []string{"", store.ChecksPending, store.ChecksSuccess, store.ChecksFailure}[rng.IntN(4)],
			ReviewState: []string{"", store.ReviewRequired, store.ReviewApproved, store.ReviewChangesRequested}[rng.IntN(4)],
		})
		return err
	default:
		srcs, err := db.SummarySources(ctx, []string{f.id})
		if err != nil || len(srcs) == 0 || srcs[0].NewestError == nil {
			return err
		}
		return p.Dismiss(ctx, f.id, srcs[0].NewestError.MessageID)
	}
}

// The race a compare-and-update alone misses: projector B reads the
// sources while a permission request is pending and stalls; the request is
// resolved and projector A, reading the same revision, finds nothing to
// change; then B stores its stale summary under the next revision. B's
// own re-projection after its write must restore the truth.
func TestAStaleWriteAfterAnotherProjectorsNoOpIsCorrected(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testDB) {
		ctx := context.Background()
		task := db.task(t)
		s := db.session(t, task.ID)
		a := start(t, db, &recorder{})
		markAndFlush(t, a, task.ID)
		settled := db.stored(t, task.ID)
		require.Empty(t, settled.PendingAction)

		loaded, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		spy := &spySources{afterLoad: func() {
			once.Do(func() {
				close(loaded)
				<-release
			})
		}}
		bPub := &recorder{}
		b := startSpied(t, db, bPub, spy)

		db.message(t, s.ID, shared.MessagePermissionRequest, shared.MessagePending, "p", "")
		b.Mark(task.ID)
		flushed := make(chan error, 1)
		go func() { flushed <- b.Flush(ctx) }()
		<-loaded // B holds sources with the request pending

		_, err := db.ResolveRequest(ctx, s.ID, "p", shared.MessageComplete, nil)
		require.NoError(t, err)
		markAndFlush(t, a, task.ID)
		require.Equal(t, settled, db.stored(t, task.ID), "A found nothing to change")

		close(release)
		require.NoError(t, <-flushed)
		stale := bPub.forTask(task.ID)
		require.NotEmpty(t, stale)
		require.Equal(t, shared.PendingPermission, stale[0].PendingAction, "B did write its stale summary")
		db.requireConverged(t, task.ID)
		require.Empty(t, db.stored(t, task.ID).PendingAction)
	})
}
