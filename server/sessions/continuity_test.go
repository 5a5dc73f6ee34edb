package sessions

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/mockagent/mocktest"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// statePublisher is a Publisher that keeps the state and configuration
// events and counts settled turns.
type statePublisher struct {
	mu      sync.Mutex
	states  []shared.SessionStateEvent
	configs []shared.SessionConfigEvent
	settled int
}

func (p *statePublisher) PublishSession(_, action string, payload any, _ bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev := payload.(type) {
	case shared.SessionStateEvent:
		p.states = append(p.states, ev)
	case shared.TurnSettledEvent:
		if action == shared.NotifySessionTurnSettled {
			p.settled++
		}
	case shared.SessionConfigEvent:
		p.configs = append(p.configs, ev)
	}
}

func (p *statePublisher) PublishWorkspace(string, string, any) {}

// waitSettled waits until n turns have settled.
func (p *statePublisher) waitSettled(t *testing.T, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.settled >= n
	}, 30*time.Second, 10*time.Millisecond, "turn %d did not settle", n)
}

// lastState returns the newest state event published.
func (p *statePublisher) lastState() shared.SessionStateEvent {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.states) == 0 {
		return shared.SessionStateEvent{}
	}
	return p.states[len(p.states)-1]
}

// startManager starts a Manager on st whose every profile is profile, as
// one herd process; it is closed when the test ends, or earlier by the
// test, as a restart does.
func startManager(t *testing.T, st *store.Store, dir string, profile agent.Profile) (*Manager, *statePublisher) {
	t.Helper()
	pub := &statePublisher{}
	m, err := New(Config{
		Store:      st,
		Profile:    func(context.Context, string) (agent.Profile, error) { return profile, nil },
		ScratchDir: filepath.Join(dir, "scratch"),
	})
	require.NoError(t, err)
	t.Cleanup(m.Close)
	require.NoError(t, m.Start(context.Background(), pub))
	return m, pub
}

// A session's agent is gone after herd restarts. The next prompt starts a
// new agent process, which continues the agent's own session when the
// agent can (the mock's history scenario answers with the prompts its
// session has seen); when it cannot, the fresh session is announced in the
// transcript and in the session's header, never silently.
func TestTheNextPromptAfterARestartContinuesTheAgentSession(t *testing.T) {
	const first = "remember the apple"
	for _, tc := range []struct {
		name string
		// before and after are the mock's flags in the first and the
		// restarted herd; stateDir is replaced by a directory.
		before, after []string
		history       string // the answer of the history scenario
		lost          string // in ContextLost; "" when restored
	}{
		{"resume", []string{"--state-dir", "A"}, []string{"--state-dir", "A"}, "history: " + first, ""},
		{"load replays history that is not stored again", []string{"--state-dir", "A", "--restore", "load"}, []string{"--state-dir", "A", "--restore", "load"}, "history: " + first, ""},
		{"an agent that cannot continue", nil, nil, "history: ", "neither session/resume nor session/load"},
		{"an agent that keeps no way back", []string{"--state-dir", "A", "--restore", "none"}, []string{"--state-dir", "A", "--restore", "none"}, "history: ", "neither session/resume nor session/load"},
		{"an agent that refuses to resume", []string{"--state-dir", "A"}, []string{"--state-dir", "B"}, "history: ", "session/resume: agent error -32602"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st, task, dir := mustTask(t)
			args := func(flags []string) []string {
				out := make([]string, len(flags))
				for i, f := range flags {
					if f == "A" || f == "B" {
						f = filepath.Join(dir, "mock-state-"+f)
					}
					out[i] = f
				}
				return out
			}

			m1, pub1 := startManager(t, st, dir, mocktest.Profile(args(tc.before)...))
			session, err := m1.Create(ctx, shared.SessionCreateRequest{TaskID: task.ID, Prompt: first})
			require.NoError(t, err)
			pub1.waitSettled(t, 1)
			before, err := st.GetSession(ctx, session.ID)
			require.NoError(t, err)
			require.NotEmpty(t, before.AgentSessionID, "the agent's session id is kept")
			require.Empty(t, before.ContextLost)
			m1.Close() // herd stops; its agent with it

			m2, pub2 := startManager(t, st, dir, mocktest.Profile(args(tc.after)...))
			_, err = m2.AddMessage(ctx, session.ID, "c-2", "/scenario history")
			require.NoError(t, err)
			pub2.waitSettled(t, 1)

			msgs, _, err := st.ListMessages(ctx, session.ID, 0, 0)
			require.NoError(t, err)
			var kinds []string
			for _, msg := range msgs {
				kinds = append(kinds, string(msg.Type)+": "+msg.Content)
			}
			after, err := st.GetSession(ctx, session.ID)
			require.NoError(t, err)
			if tc.lost == "" {
				require.Equal(t, []string{"user: " + first, "agent: " + first, "user: /scenario history", "agent: " + tc.history}, kinds,
					"the transcript holds each turn once")
				require.Equal(t, before.AgentSessionID, after.AgentSessionID, "the same agent session continues")
				require.Empty(t, after.ContextLost)
				return
			}
			require.Len(t, kinds, 5, "transcript %q", kinds)
			require.Equal(t, []string{"user: " + first, "agent: " + first, "user: /scenario history"}, kinds[:3])
			require.True(t, strings.HasPrefix(kinds[3], "status: Context not restored"), "notice %q", kinds[3])
			require.Contains(t, kinds[3], tc.lost)
			require.Equal(t, "agent: "+tc.history, kinds[4], "the fresh agent session remembers nothing")
			require.NotEqual(t, before.AgentSessionID, after.AgentSessionID)
			require.Contains(t, after.ContextLost, tc.lost, "the session's header says the context was lost")
			require.Greater(t, after.StateRevision, before.StateRevision)
			require.Contains(t, pub2.lastState().ContextLost, tc.lost, "clients are told with the session's state")
		})
	}
}

// An agent that dies between turns costs no turn: the session keeps
// waiting for input, the transcript says what happened, and the next
// prompt starts the agent again on the same agent session. One that cannot
// continue its session fails the session, as a crash does.
func TestAnAgentThatDiesWhileIdleIsContinuedByTheNextPrompt(t *testing.T) {
	for _, tc := range []struct {
		name   string
		flags  []string
		failed bool
	}{
		{"resumable", []string{"--state-dir", "STATE"}, false},
		{"not resumable", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st, task, dir := mustTask(t)
			flags := append([]string(nil), tc.flags...)
			for i, f := range flags {
				if f == "STATE" {
					flags[i] = filepath.Join(dir, "mock-state")
				}
			}
			m, pub := startManager(t, st, dir, mocktest.Profile(flags...))
			const first = "remember the plum"
			session, err := m.Create(ctx, shared.SessionCreateRequest{TaskID: task.ID, Prompt: first})
			require.NoError(t, err)
			pub.waitSettled(t, 1)
			m.mu.Lock()
			r := m.runs[session.ID]
			m.mu.Unlock()
			exec := r.execution()
			require.NotNil(t, exec)
			require.NoError(t, syscall.Kill(exec.Pid(), syscall.SIGKILL), "the agent dies between turns")
			if tc.failed {
				require.Eventually(t, func() bool {
					s, err := st.GetSession(ctx, session.ID)
					return err == nil && s.State == shared.SessionFailed
				}, 30*time.Second, 10*time.Millisecond, "an agent that cannot continue fails the session")
				return
			}
			require.Eventually(t, func() bool {
				msgs, _, err := st.ListMessages(ctx, session.ID, 0, 0)
				return err == nil && len(msgs) > 0 && msgs[len(msgs)-1].Type == shared.MessageStatus &&
					strings.Contains(msgs[len(msgs)-1].Content, "The agent stopped while waiting for a prompt (agent exited: signal: killed")
			}, 30*time.Second, 10*time.Millisecond, "the transcript tells of the exit")
			before, err := st.GetSession(ctx, session.ID)
			require.NoError(t, err)
			require.Equal(t, shared.SessionWaitingForInput, before.State, "no turn was lost: the session still waits")

			_, err = m.AddMessage(ctx, session.ID, "c-2", "/scenario history")
			require.NoError(t, err)
			pub.waitSettled(t, 2)
			msgs, _, err := st.ListMessages(ctx, session.ID, 0, 0)
			require.NoError(t, err)
			require.Equal(t, "history: "+first, msgs[len(msgs)-1].Content, "the agent remembers the turn before it died")
			after, err := st.GetSession(ctx, session.ID)
			require.NoError(t, err)
			require.Equal(t, before.AgentSessionID, after.AgentSessionID)
			require.Empty(t, after.ContextLost)
		})
	}
}
