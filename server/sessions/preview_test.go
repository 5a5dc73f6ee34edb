package sessions

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/mockagent/mocktest"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// seen is what the store held for a task's preview when the task was
// marked: the primary session's state and its two lines.
type seen struct {
	state             shared.SessionState
	agent, promptLine string
}

// sightMarker is a projector stand-in that reads the preview's sources the
// moment it is marked, as a projection started right then would.
type sightMarker struct {
	t  *testing.T
	st *store.Store
	mu sync.Mutex
	// sights holds one entry per mark, in marking order.
	sights []seen
}

func (m *sightMarker) Mark(taskID string) {
	srcs, err := m.st.SummarySources(context.Background(), []string{taskID})
	if err != nil || len(srcs) != 1 || len(srcs[0].Sessions) != 1 {
		m.t.Errorf("read the sources of task %s: %v (%d)", taskID, err, len(srcs))
		return
	}
	src := srcs[0]
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sights = append(m.sights, seen{state: src.Sessions[0].State, agent: src.AgentLine, promptLine: src.PromptLine})
}

// all returns the sights so far.
func (m *sightMarker) all() []seen {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.sights)
}

// promptAndSettle starts a manager whose projector is a sightMarker, has
// its session wait for input, sends prompt, waits for the turn to end
// with end_turn and returns what every mark of the turn saw.
func promptAndSettle(t *testing.T, prompt string) []seen {
	t.Helper()
	ctx := context.Background()
	st, task, _ := mustTask(t)
	marker := &sightMarker{t: t, st: st}
	pub := &recorder{}
	mock := mocktest.Profile()
	m, err := New(Config{
		Store:      st,
		Profile:    func(context.Context, string) (agent.Profile, error) { return mock, nil },
		ScratchDir: t.TempDir(),
		Projector:  marker,
	})
	require.NoError(t, err)
	t.Cleanup(m.Close)
	require.NoError(t, m.Start(ctx, pub))
	session, err := m.Create(ctx, shared.SessionCreateRequest{TaskID: task.ID})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		return pub.has(session.ID + " " + shared.NotifySessionStateChanged + " " + string(shared.SessionWaitingForInput))
	}, 60*time.Second, 10*time.Millisecond)
	before := len(marker.all())

	_, err = m.AddMessage(ctx, session.ID, "c-1", prompt)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		return pub.has(session.ID + " " + shared.NotifySessionTurnSettled + " " + string(shared.TurnEndTurn))
	}, 60*time.Second, 10*time.Millisecond, "the turn never settled")
	return marker.all()[before:]
}

// A prompt that has been sent is marked while the turn runs, so the row
// can show it before the agent says anything; here the agent says nothing
// for 300 ms and nothing else marks the task meanwhile.
func TestASentPromptIsMarkedWhileTheTurnRuns(t *testing.T) {
	const prompt = "/scenario sleep 300"
	sights := promptAndSettle(t, prompt)
	require.Contains(t, sights, seen{state: shared.SessionRunning, promptLine: prompt}, "marks of the turn: %+v", sights)
}

// An answer the agent ends before its turn does (at the model cycle's end,
// then the turn is held open) is marked while the session runs.
func TestAnAnswerEndedMidTurnIsMarkedWhileTheTurnRuns(t *testing.T) {
	const prompt = "/scenario claude-replay stream 300"
	sights := promptAndSettle(t, prompt)
	require.Contains(t, sights, seen{state: shared.SessionRunning, agent: "Hello from the scripted model.", promptLine: prompt},
		"marks of the turn: %+v", sights)
}

// The answer a turn's end finishes is marked with the settled state only:
// no mark sees it while the session still runs, so no projection can
// publish the answer and then, apart, the settled session.
func TestAnAnswerEndedWithTheTurnIsMarkedOnceSettled(t *testing.T) {
	const prompt = "/scenario stream 3"
	sights := promptAndSettle(t, prompt)
	answered := seen{state: shared.SessionRunning, agent: "0 1 2", promptLine: prompt}
	require.NotContains(t, sights, answered, "marks of the turn: %+v", sights)
	require.Equal(t, seen{state: shared.SessionWaitingForInput, agent: "0 1 2", promptLine: prompt}, sights[len(sights)-1],
		"marks of the turn: %+v", sights)
}
