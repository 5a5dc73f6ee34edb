package sessions

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/mockagent/mocktest"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/server/store/storetest"
	"github.com/herd-dev/herd/shared"
)

// outage is a database a test can take away and give back: a SQLite file
// another process locks, or a PostgreSQL server that stops.
type outage struct {
	st    *store.Store
	begin func()
	end   func()
}

// outages lists one outage per database.
var outages = map[string]func(t *testing.T) outage{
	"sqlite": func(t *testing.T) outage {
		dir := t.TempDir()
		st, err := store.Open(context.Background(), store.Config{DataDir: dir, BusyTimeout: 50 * time.Millisecond})
		require.NoError(t, err)
		t.Cleanup(func() { st.Close() })
		var release func()
		return outage{
			st:    st,
			begin: func() { release = storetest.LockSQLite(t, filepath.Join(dir, "herd.db")) },
			end:   func() { release() },
		}
	},
	"postgres": func(t *testing.T) outage {
		pg := storetest.OwnPostgres(t)
		st, err := store.Open(context.Background(), store.Config{URL: pg.CreateDatabase("herd")})
		require.NoError(t, err)
		t.Cleanup(func() { st.Close() })
		return outage{st: st, begin: pg.Stop, end: pg.Start}
	},
}

// sessionRig is a manager with the mock agent over a database that can go
// away, and one idle session of a task.
type sessionRig struct {
	outage
	m       *Manager
	pub     *recorder
	reg     *prometheus.Registry
	session shared.Session
}

func newSessionRig(t *testing.T, db string) *sessionRig {
	t.Helper()
	return newRigOn(t, outages[db](t))
}

// newRigOn is newSessionRig over o's database.
func newRigOn(t *testing.T, o outage) *sessionRig {
	t.Helper()
	ctx := context.Background()
	ws, err := o.st.CreateWorkspace(ctx, "w")
	require.NoError(t, err)
	task, err := o.st.CreateTask(ctx, shared.TaskCreateRequest{WorkspaceID: ws.ID, Title: "t"})
	require.NoError(t, err)
	mock := mocktest.Profile()
	rig := &sessionRig{outage: o, pub: &recorder{}, reg: prometheus.NewRegistry()}
	rig.m, err = New(Config{
		Store:      o.st,
		Profile:    func(context.Context, string) (agent.Profile, error) { return mock, nil },
		ScratchDir: t.TempDir(),
		Registerer: rig.reg,
	})
	require.NoError(t, err)
	t.Cleanup(rig.m.Close)
	require.NoError(t, rig.m.Start(ctx, rig.pub))
	rig.session, err = rig.m.Create(ctx, shared.SessionCreateRequest{TaskID: task.ID})
	require.NoError(t, err)
	rig.waitState(t, shared.SessionWaitingForInput)
	return rig
}

// waitState waits until the session is in state as a client sees it: the
// state stored and its session.state_changed published (which follows the
// manager taking the state in, so a prompt sent now meets it).
func (rig *sessionRig) waitState(t *testing.T, state shared.SessionState) {
	t.Helper()
	require.Eventually(t, func() bool {
		s, err := rig.st.GetSession(context.Background(), rig.session.ID)
		return err == nil && s.State == state && rig.lastState() == string(state)
	}, 60*time.Second, 10*time.Millisecond, "session never reached %s", state)
}

// lastState is the state of the session's newest session.state_changed.
func (rig *sessionRig) lastState() string {
	rig.pub.mu.Lock()
	defer rig.pub.mu.Unlock()
	prefix := rig.session.ID + " " + shared.NotifySessionStateChanged + " "
	for i := len(rig.pub.events) - 1; i >= 0; i-- {
		if state, ok := strings.CutPrefix(rig.pub.events[i], prefix); ok {
			return state
		}
	}
	return ""
}

// waitStreaming waits until the session's agent has streamed a few words
// of an answer.
func (rig *sessionRig) waitStreaming(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool {
		msgs, _, _ := rig.st.ListMessages(context.Background(), rig.session.ID, 0, 500)
		for _, m := range msgs {
			if m.Type == shared.MessageAgent && len(m.Content) > 20 {
				return true
			}
		}
		return false
	}, 30*time.Second, 5*time.Millisecond, "the stream never started")
}

// settled counts the session's settled turns.
func (rig *sessionRig) settled() int {
	rig.pub.mu.Lock()
	defer rig.pub.mu.Unlock()
	n := 0
	for _, e := range rig.pub.events {
		if strings.HasPrefix(e, rig.session.ID+" "+shared.NotifySessionTurnSettled+" ") {
			n++
		}
	}
	return n
}

// retried returns how many session writes found the database unavailable.
func (rig *sessionRig) retried(t *testing.T) float64 {
	t.Helper()
	families, err := rig.reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() == "herd_session_write_retries_total" {
			return counterValue(f.GetMetric())
		}
	}
	return 0
}

func counterValue(ms []*dto.Metric) float64 {
	var sum float64
	for _, m := range ms {
		sum += m.GetCounter().GetValue()
	}
	return sum
}

// transcript returns the session's messages.
func (rig *sessionRig) transcript(t *testing.T) []shared.Message {
	t.Helper()
	msgs, _, err := rig.st.ListMessages(context.Background(), rig.session.ID, 0, 500)
	require.NoError(t, err)
	return msgs
}

// numbers is the text of `/scenario stream n`: "0 1 … n-1 ".
func numbers(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%d ", i)
	}
	return b.String()
}

// An agent's stream that runs through a database outage is stored whole:
// the writes wait for the database (and the agent for them) instead of
// dropping chunks, so the message ends complete with every byte in order.
// A prompt sent during the outage is refused as unavailable, never taken
// and lost; the one queued before it runs once the database is back.
func TestStreamThroughADatabaseOutageIsStoredWhole(t *testing.T) {
	for db := range outages {
		t.Run(db, func(t *testing.T) {
			ctx := context.Background()
			rig := newSessionRig(t, db)
			const chunks = 3000
			_, err := rig.m.AddMessage(ctx, rig.session.ID, "c-stream", fmt.Sprintf("/scenario stream %d 1", chunks))
			require.NoError(t, err)
			queued, err := rig.m.AddMessage(ctx, rig.session.ID, "c-after", "after the outage")
			require.NoError(t, err)
			require.Equal(t, shared.OutcomeQueued, queued.Outcome)
			rig.waitStreaming(t)

			rig.begin()
			time.Sleep(1500 * time.Millisecond) // the outage's length, not a synchronisation
			_, err = rig.m.AddMessage(ctx, rig.session.ID, "c-during", "during the outage")
			assert.Equal(t, shared.CodeUnavailable, shared.ErrorCode(err), "a prompt during the outage: %v", err)
			rig.end()

			require.Eventually(t, func() bool { return rig.settled() == 2 }, 60*time.Second, 10*time.Millisecond)
			rig.waitState(t, shared.SessionWaitingForInput)
			assert.Positive(t, rig.retried(t), "the outage was met by the stream's writes")

			var agentTexts []string
			for _, m := range rig.transcript(t) {
				if m.Type == shared.MessageAgent {
					agentTexts = append(agentTexts, m.Content)
					assert.Equal(t, shared.MessageComplete, m.Status, "message %s", m.ID)
				}
				assert.NotEqual(t, "c-during", m.ClientMessageID, "the refused prompt was not stored")
			}
			require.Len(t, agentTexts, 2, "the stream's answer and the queued prompt's")
			assertWhole(t, numbers(chunks), agentTexts[0])
			assert.Equal(t, "after the outage", agentTexts[1])
		})
	}
}

// assertWhole checks a stored stream byte for byte, naming where it first
// differs instead of printing both.
func assertWhole(t *testing.T, want, got string) {
	t.Helper()
	if got == want {
		return
	}
	at := 0
	for at < min(len(got), len(want)) && got[at] == want[at] {
		at++
	}
	t.Errorf("the stream stored %d of %d bytes and first differs at byte %d: %q",
		len(got), len(want), at, got[max(0, at-20):min(len(got), at+20)])
}

// A turn that ends while the database is away still settles: the session
// leaves RUNNING once the database is back (not only after a restart), and
// the prompt queued behind the turn runs. The turn's end falls inside the
// outage: nothing settles until the database is back.
func TestTurnEndingDuringADatabaseOutageSettles(t *testing.T) {
	for db := range outages {
		t.Run(db, func(t *testing.T) {
			ctx := context.Background()
			rig := newSessionRig(t, db)
			_, err := rig.m.AddMessage(ctx, rig.session.ID, "c-sleep", "/scenario sleep 1500")
			require.NoError(t, err)
			_, err = rig.m.AddMessage(ctx, rig.session.ID, "c-next", "next")
			require.NoError(t, err)
			rig.waitState(t, shared.SessionRunning)

			rig.begin()
			time.Sleep(3 * time.Second) // the turn ends well inside the outage
			require.Zero(t, rig.settled(), "no turn could settle while the database was away")
			rig.end()

			require.Eventually(t, func() bool { return rig.settled() == 2 }, 60*time.Second, 10*time.Millisecond,
				"both turns settle once the database is back")
			rig.waitState(t, shared.SessionWaitingForInput)
			assert.Positive(t, rig.retried(t))
			var texts []string
			for _, m := range rig.transcript(t) {
				if m.Type == shared.MessageAgent {
					texts = append(texts, m.Content)
				}
			}
			assert.Equal(t, []string{"next"}, texts)
		})
	}
}
