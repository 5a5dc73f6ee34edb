package sessions

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/mockagent/mocktest"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// turnStart is one call of TurnWatch.TurnStarting, with what the watch saw
// of the turn when it was called.
type turnStart struct {
	taskID, sessionID, turnID string
	// promptSent says the turn's prompt was stored as sent by then,
	// announced that the turn's start was published; found is what the
	// file the prompts have the agent write held.
	promptSent, announced bool
	found                 string
}

// turnWatch records each turn's start and what it found.
type turnWatch struct {
	st   *store.Store
	pub  *startPublisher
	file string // the file the prompts have the agent write

	mu     sync.Mutex
	starts []turnStart
}

func (w *turnWatch) TurnStarting(ctx context.Context, taskID, sessionID, turnID string) {
	latest, sent, err := w.st.LatestPrompt(ctx, sessionID)
	found, _ := os.ReadFile(w.file)
	announced := w.pub.announced(turnID)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.starts = append(w.starts, turnStart{
		taskID: taskID, sessionID: sessionID, turnID: turnID,
		promptSent: err == nil && sent && latest == turnID, announced: announced, found: string(found),
	})
}

func (w *turnWatch) taken() []turnStart {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]turnStart(nil), w.starts...)
}

// startPublisher is a statePublisher that also keeps the turns whose
// start it published.
type startPublisher struct {
	statePublisher
	mu      sync.Mutex
	started map[string]bool
}

func (p *startPublisher) PublishSession(sessionID, action string, payload any, replaceable bool) {
	if ev, ok := payload.(shared.TurnStartedEvent); ok {
		p.mu.Lock()
		p.started[ev.TurnID] = true
		p.mu.Unlock()
	}
	p.statePublisher.PublishSession(sessionID, action, payload, replaceable)
}

func (p *startPublisher) announced(turnID string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.started[turnID]
}

// startWatched starts a manager of the mock agent, whose sessions run in
// scratch and tell watch of every turn's start, publishing to pub.
func startWatched(t *testing.T, st *store.Store, scratch string, pub Publisher, watch TurnWatch) *Manager {
	t.Helper()
	profile := mocktest.Profile()
	m, err := New(Config{
		Store:      st,
		Profile:    func(context.Context, string) (agent.Profile, error) { return profile, nil },
		ScratchDir: scratch,
		Turns:      watch,
	})
	require.NoError(t, err)
	t.Cleanup(m.Close)
	require.NoError(t, m.Start(context.Background(), pub))
	return m
}

// Each turn tells the watch of its start once its prompt is stored as
// sent, before the agent acts on it (the file the prompt writes is not
// there yet) and before the turn's start is published. The turn id is
// the prompt's message id.
func TestATurnsStartIsToldBeforeTheAgentActsOnItsPrompt(t *testing.T) {
	ctx := context.Background()
	st, task, dir := mustTask(t)
	scratch := filepath.Join(dir, "scratch")
	pub := &startPublisher{started: map[string]bool{}}
	watch := &turnWatch{st: st, pub: pub, file: filepath.Join(scratch, task.ID, "a.txt")}
	m := startWatched(t, st, scratch, pub, watch)

	session, err := m.Create(ctx, shared.SessionCreateRequest{TaskID: task.ID, Prompt: "/scenario write a.txt one"})
	require.NoError(t, err)
	pub.waitSettled(t, 1)
	require.FileExists(t, watch.file, "the agent wrote once the watch returned")
	added, err := m.AddMessage(ctx, session.ID, "c-2", "/scenario write a.txt two")
	require.NoError(t, err)
	pub.waitSettled(t, 2)

	starts := watch.taken()
	require.Len(t, starts, 2, "one call per turn")
	first := starts[0]
	assert.Equal(t, task.ID, first.taskID)
	assert.Equal(t, session.ID, first.sessionID)
	assert.True(t, first.promptSent, "the prompt was stored as sent first")
	assert.Empty(t, first.found, "the agent had not acted on the prompt")
	assert.False(t, first.announced, "the turn's start was not published yet")
	assert.True(t, pub.announced(first.turnID), "it was once the watch returned")
	second := starts[1]
	assert.Equal(t, added.Message.ID, second.turnID, "the turn is the prompt's message")
	assert.True(t, second.promptSent)
	assert.Equal(t, "one", second.found, "the worktree as the first turn left it")
	body, err := os.ReadFile(watch.file)
	require.NoError(t, err)
	assert.Equal(t, "two", string(body))
}

// heldWatch holds each turn's start until released, telling held when it
// does.
type heldWatch struct {
	held    chan struct{}
	release chan struct{}
}

func (w *heldWatch) TurnStarting(context.Context, string, string, string) {
	w.held <- struct{}{}
	<-w.release
}

// A cancel that arrives while a turn's start is being recorded, before
// its prompt reached the agent, cancels the turn: the agent is never sent
// the prompt (the file it would write is not there), and the turn ends
// cancelled rather than running to its end.
func TestACancelBeforeThePromptReachesTheAgentCancelsTheTurn(t *testing.T) {
	ctx := context.Background()
	st, task, dir := mustTask(t)
	scratch := filepath.Join(dir, "scratch")
	pub := &statePublisher{}
	watch := &heldWatch{held: make(chan struct{}), release: make(chan struct{})}
	m := startWatched(t, st, scratch, pub, watch)

	session, err := m.Create(ctx, shared.SessionCreateRequest{TaskID: task.ID, Prompt: "/scenario write a.txt one"})
	require.NoError(t, err)
	<-watch.held
	_, err = m.Cancel(ctx, session.ID)
	require.NoError(t, err)
	close(watch.release)
	pub.waitSettled(t, 1)

	assert.NoFileExists(t, filepath.Join(scratch, task.ID, "a.txt"), "the prompt never reached the agent")
	messages, _, err := st.ListMessages(ctx, session.ID, 0, 50)
	require.NoError(t, err)
	var outcomes []shared.TurnOutcome
	for _, msg := range messages {
		if msg.Metadata != nil && msg.Metadata.Turn != nil {
			outcomes = append(outcomes, msg.Metadata.Turn.Outcome)
		}
	}
	assert.Equal(t, []shared.TurnOutcome{shared.TurnCancelled}, outcomes)
	stored, err := st.GetSession(ctx, session.ID)
	require.NoError(t, err)
	assert.Equal(t, shared.SessionWaitingForInput, stored.State, "the session settles and takes the next prompt")
}
