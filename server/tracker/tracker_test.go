package tracker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/herd-dev/herd/shared"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder collects published changes in order.
type recorder struct {
	mu      sync.Mutex
	changes []Change
	fail    atomic.Bool
}

func (r *recorder) publish(_ context.Context, c Change) error {
	if r.fail.Load() {
		return errors.New("publish failed")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changes = append(r.changes, c)
	return nil
}

func (r *recorder) all() []Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Change(nil), r.changes...)
}

// mustTracker returns a tracker publishing into a recorder; Close runs at
// cleanup, so every publication has happened once a test reads after
// calling flush.
func mustTracker(t *testing.T, handoff bool) (*Tracker, *recorder) {
	t.Helper()
	rec := &recorder{}
	tr, err := New(Config{Publish: rec.publish, Handoff: handoff})
	require.NoError(t, err)
	t.Cleanup(tr.Close)
	return tr, rec
}

var (
	claude = Capabilities{AttestsBackground: true, Handoff: true}
	coarse = Capabilities{}
)

// launch is the attested launch frame of a background workload.
func launch(toolID string, kind WorkKind, workID string) Frame {
	return Frame{Kind: FrameToolCall, ToolID: toolID, Attested: true, Work: kind, WorkID: workID, Lifecycle: LifecycleStarted}
}

// finish is the attested terminal frame of a background workload.
func finish(toolID string, kind WorkKind, workID string) Frame {
	return Frame{Kind: FrameToolUpdate, ToolID: toolID, Attested: true, Work: kind, WorkID: workID, Lifecycle: LifecycleFinished}
}

var humanYield = Frame{Kind: FrameCycleEnd, Origin: OriginHuman}

// backgroundIdle runs a dispatched turn that launches two subagents and a
// shell, then yields at the end of its human-origin cycle.
func backgroundIdle(t *testing.T, tr *Tracker, caps Capabilities) (Exec, Claim) {
	t.Helper()
	e := tr.Attach("s1", "t1", caps)
	c, err := tr.Claim("s1", "t1")
	require.NoError(t, err)
	require.True(t, tr.Dispatched(c))
	tr.Frame(e, Frame{Kind: FrameOutput})
	tr.Frame(e, launch("task-1", WorkSubagent, "agent-1"))
	tr.Frame(e, launch("task-2", WorkSubagent, "agent-2"))
	tr.Frame(e, launch("bash-1", WorkShell, "shell-1"))
	tr.Frame(e, humanYield)
	return e, c
}

func TestSpec001Scenarios(t *testing.T) {
	t.Run("experiment off: a RUNNING session idle over background work queues the prompt", func(t *testing.T) {
		tr, _ := mustTracker(t, false)
		backgroundIdle(t, tr, claude)
		_, err := tr.Handoff("s1")
		assert.Equal(t, shared.CodePromptInProgress, shared.ErrorCode(err))
		_, err = tr.Claim("s1", "t1")
		assert.Equal(t, shared.CodePromptInProgress, shared.ErrorCode(err))
		act, n := tr.ActivityOf(tr.View("s1"), shared.SessionRunning)
		assert.Equal(t, shared.ActivityGenerating, act, "coarse: RUNNING is generating")
		assert.Equal(t, 2, n)
	})
	t.Run("experiment on: an attested generation-matched handoff dispatches the successor", func(t *testing.T) {
		tr, _ := mustTracker(t, true)
		_, first := backgroundIdle(t, tr, claude)
		act, _ := tr.ActivityOf(tr.View("s1"), shared.SessionRunning)
		assert.Equal(t, shared.ActivityBackground, act)
		next, err := tr.Handoff("s1")
		require.NoError(t, err)
		assert.Equal(t, first.Generation()+1, next.Generation())
		assert.False(t, tr.Complete(first), "the handed-off claim is stale")
		act, _ = tr.ActivityOf(tr.View("s1"), shared.SessionRunning)
		assert.Equal(t, shared.ActivityGenerating, act, "the successor owns the foreground")
		assert.True(t, tr.Current(next))
	})
	t.Run("experiment on: non-Claude providers still queue", func(t *testing.T) {
		tr, _ := mustTracker(t, true)
		backgroundIdle(t, tr, coarse)
		_, err := tr.Handoff("s1")
		assert.Equal(t, shared.CodePromptInProgress, shared.ErrorCode(err))
		act, n := tr.ActivityOf(tr.View("s1"), shared.SessionRunning)
		assert.Equal(t, shared.ActivityGenerating, act)
		assert.Zero(t, n, "nothing is attested")
	})
	t.Run("experiment on: a Claude adapter without handoff shows background but queues", func(t *testing.T) {
		tr, _ := mustTracker(t, true)
		backgroundIdle(t, tr, Capabilities{AttestsBackground: true})
		_, err := tr.Handoff("s1")
		assert.Equal(t, shared.CodePromptInProgress, shared.ErrorCode(err))
		act, _ := tr.ActivityOf(tr.View("s1"), shared.SessionRunning)
		assert.Equal(t, shared.ActivityBackground, act)
	})
	t.Run("a rendered or reloaded RUNNING session shows generating, not background", func(t *testing.T) {
		tr, _ := mustTracker(t, false)
		backgroundIdle(t, tr, claude)
		act, _ := tr.ActivityOf(tr.View("s1"), shared.SessionRunning)
		assert.Equal(t, shared.ActivityGenerating, act)
	})
	t.Run("two subagents and a shell count two; activity follows the coarse state", func(t *testing.T) {
		tr, _ := mustTracker(t, false)
		backgroundIdle(t, tr, claude)
		for state, want := range map[shared.SessionState]shared.ForegroundActivity{
			shared.SessionRunning: shared.ActivityGenerating, shared.SessionWaitingForInput: "",
		} {
			act, n := tr.ActivityOf(tr.View("s1"), state)
			assert.Equal(t, want, act, state)
			assert.Equal(t, 2, n, state)
		}
	})
	t.Run("a session that leaves RUNNING omits its activity though work stays registered", func(t *testing.T) {
		tr, _ := mustTracker(t, true)
		_, c := backgroundIdle(t, tr, claude)
		require.True(t, tr.Complete(c))
		for _, state := range []shared.SessionState{
			shared.SessionWaitingForInput, shared.SessionCompleted, shared.SessionIdle,
			shared.SessionFailed, shared.SessionCancelled,
		} {
			act, n := tr.ActivityOf(tr.View("s1"), state)
			assert.Empty(t, act, state)
			assert.Equal(t, 2, n)
		}
		assert.True(t, tr.View("s1").Background)
	})
	t.Run("teardown releases orphaned tool ownership and background work", func(t *testing.T) {
		tr, rec := mustTracker(t, false)
		e, c := backgroundIdle(t, tr, claude)
		tr.Frame(e, Frame{Kind: FrameToolCall, ToolID: "read-1"})
		require.True(t, tr.Complete(c))
		tr.Detach(e)
		assert.Equal(t, View{}, tr.View("s1"))
		assert.Empty(t, tr.records, "the record retired")
		tr.Close()
		changes := rec.all()
		require.NotEmpty(t, changes)
		assert.Equal(t, View{}, changes[len(changes)-1].View)
	})
}

func TestCheckAndClaimRaceInTheBackgroundIdleWindow(t *testing.T) {
	for _, handoff := range []bool{false, true} {
		t.Run(fmt.Sprintf("experiment=%v", handoff), func(t *testing.T) {
			tr, _ := mustTracker(t, handoff)
			_, c := backgroundIdle(t, tr, claude)
			if !handoff {
				// Without the experiment the window opens when the turn ends.
				require.True(t, tr.Complete(c))
			}
			const callers = 16
			var wins, busy atomic.Int32
			var wg sync.WaitGroup
			for range callers {
				wg.Go(func() {
					var err error
					if handoff {
						_, err = tr.Handoff("s1")
					} else {
						_, err = tr.Claim("s1", "t1")
					}
					switch {
					case err == nil:
						wins.Add(1)
					case shared.ErrorCode(err) == shared.CodePromptInProgress:
						busy.Add(1)
					}
				})
			}
			wg.Wait()
			assert.Equal(t, int32(1), wins.Load())
			assert.Equal(t, int32(callers-1), busy.Load())
		})
	}
}

func TestHandoffNeedsTheClaimsOwnHumanYield(t *testing.T) {
	tr, _ := mustTracker(t, true)
	e := tr.Attach("s1", "t1", claude)
	c, err := tr.Claim("s1", "t1")
	require.NoError(t, err)
	tr.Frame(e, launch("task-1", WorkSubagent, "agent-1"))
	tr.Frame(e, humanYield)
	_, err = tr.Handoff("s1")
	assert.Error(t, err, "not dispatched yet")

	require.True(t, tr.Dispatched(c))
	tr.Frame(e, Frame{Kind: FrameOutput}) // the foreground speaks again
	_, err = tr.Handoff("s1")
	assert.Error(t, err, "the foreground is generating")

	tr.Frame(e, Frame{Kind: FrameCycleEnd, Origin: "task-notification"})
	next, err := tr.Handoff("s1")
	require.NoError(t, err, "the yield of this generation still stands")
	_, err = tr.Handoff("s1")
	assert.Error(t, err, "the successor has not yielded: one handoff per yield")
	assert.True(t, tr.Dispatched(next))
}

func TestStaleClaimsChangeNothing(t *testing.T) {
	tr, _ := mustTracker(t, false)
	e := tr.Attach("s1", "t1", claude)
	old, err := tr.Claim("s1", "t1")
	require.NoError(t, err)
	require.True(t, tr.Complete(old))
	newer, err := tr.Claim("s1", "t1")
	require.NoError(t, err)

	assert.False(t, tr.Complete(old), "a delayed completion")
	assert.False(t, tr.Release(old), "a delayed release")
	assert.False(t, tr.Dispatched(old))
	assert.True(t, tr.View("s1").Claimed)
	assert.True(t, tr.Current(newer))

	// A claim of a retired record is stale in its successor.
	require.True(t, tr.Complete(newer))
	tr.Detach(e)
	successor, err := tr.Claim("s1", "t1")
	require.NoError(t, err)
	assert.Equal(t, uint64(1), successor.Generation(), "a fresh record")
	assert.False(t, tr.Complete(newer))
	assert.True(t, tr.Current(successor))
}

func TestReleaseReopensTheGateUnlessNewerOutputArrived(t *testing.T) {
	tr, _ := mustTracker(t, false)
	e := tr.Attach("s1", "t1", claude)
	c, err := tr.Claim("s1", "t1")
	require.NoError(t, err)
	require.True(t, tr.Release(c))
	assert.Equal(t, View{Attested: true, Handoff: true}, tr.View("s1"))

	c, err = tr.Claim("s1", "t1")
	require.NoError(t, err)
	tr.Frame(e, Frame{Kind: FrameOutput}) // e.g. a task-notification cycle
	require.True(t, tr.Release(c))
	v := tr.View("s1")
	assert.False(t, v.Claimed, "the gate is open")
	assert.True(t, v.Generating, "newer foreground output keeps the foreground")
}

func TestTerminalFramesAreIdempotentAndOrderSafe(t *testing.T) {
	tr, _ := mustTracker(t, false)
	e := tr.Attach("s1", "t1", claude)
	tr.Frame(e, launch("task-1", WorkSubagent, "agent-1"))
	tr.Frame(e, launch("task-1", WorkSubagent, "agent-1")) // duplicate launch
	tr.Frame(e, launch("task-2", WorkSubagent, "agent-2"))
	assert.Equal(t, 2, tr.View("s1").Subagents)

	tr.Frame(e, finish("task-1", WorkSubagent, "agent-1"))
	tr.Frame(e, finish("task-1", WorkSubagent, "agent-1"))
	assert.Equal(t, 1, tr.View("s1").Subagents, "a duplicate terminal frame is a no-op")

	tr.Frame(e, finish("task-3", WorkSubagent, "agent-3"))
	tr.Frame(e, launch("task-3", WorkSubagent, "agent-3"))
	assert.Equal(t, 1, tr.View("s1").Subagents, "a launch after its terminal frame stays dead")

	tr.Frame(e, finish("task-2", WorkSubagent, "agent-2"))
	assert.Equal(t, View{Attested: true, Handoff: true}, tr.View("s1"))
}

func TestOnlyAttestedProvenanceRegistersWork(t *testing.T) {
	tr, _ := mustTracker(t, false)
	unattested := tr.Attach("s1", "t1", Capabilities{})
	tr.Frame(unattested, launch("task-1", WorkSubagent, "agent-1"))
	assert.False(t, tr.View("s1").Background, "an adapter that does not attest")

	tr2, _ := mustTracker(t, false)
	e := tr2.Attach("s1", "t1", claude)
	shaped := launch("task-1", WorkSubagent, "agent-1")
	shaped.Attested = false // a card shaped like background work
	tr2.Frame(e, shaped)
	assert.False(t, tr2.View("s1").Background, "a tool-card shape")
}

func TestToolOwnershipNeedsPositiveEvidence(t *testing.T) {
	tr, _ := mustTracker(t, false)
	e := tr.Attach("s1", "t1", claude)
	tr.Frame(e, launch("task-1", WorkSubagent, "agent-1"))
	require.False(t, tr.View("s1").Generating)

	tr.Frame(e, Frame{Kind: FrameToolCall, ToolID: "read-1", Attested: true, Parent: "task-1"})
	tr.Frame(e, Frame{Kind: FrameToolUpdate, ToolID: "read-1"}) // lineage omitted on the update
	assert.False(t, tr.View("s1").Generating, "a child of background work")

	tr.Frame(e, Frame{Kind: FrameToolCall, ToolID: "grep-1", Attested: true, Parent: "unknown"})
	tr.Frame(e, Frame{Kind: FrameToolUpdate, ToolID: "never-seen"})
	assert.False(t, tr.View("s1").Generating, "unknown lineage keeps the activity")

	tr.Frame(e, Frame{Kind: FrameToolCall, ToolID: "edit-1"})
	assert.True(t, tr.View("s1").Generating, "a top-level tool is foreground")

	// Tool ids reused by a successor execution are not evidence.
	tr.Frame(e, Frame{Kind: FrameCycleEnd, Origin: "task-notification"})
	successor := tr.Attach("s1", "t1", claude)
	tr.Detach(e)
	tr.Frame(successor, Frame{Kind: FrameToolUpdate, ToolID: "edit-1"})
	assert.False(t, tr.View("s1").Generating)
	tr.Frame(e, Frame{Kind: FrameOutput})
	assert.False(t, tr.View("s1").Generating, "a detached execution's frame")
}

func TestCoarseProvidersOutputOutsideAClaimIsNotForeground(t *testing.T) {
	tr, _ := mustTracker(t, false)
	e := tr.Attach("s1", "t1", coarse)
	tr.Frame(e, Frame{Kind: FrameOutput})
	tr.Frame(e, Frame{Kind: FrameToolCall, ToolID: "x"})
	assert.False(t, tr.View("s1").Generating)
}

func TestRemoveDetachesWhateverTheRecordHolds(t *testing.T) {
	tr, rec := mustTracker(t, false)
	e, c := backgroundIdle(t, tr, claude)
	tr.Remove("s1")
	assert.Equal(t, View{}, tr.View("s1"))
	assert.False(t, tr.Complete(c))
	tr.Frame(e, launch("task-9", WorkSubagent, "agent-9"))
	tr.Detach(e)
	assert.Empty(t, tr.records)
	tr.Close()
	for _, ch := range rec.all() {
		assert.NotEqual(t, 3, ch.View.Subagents, "nothing of the removed record after removal")
	}
}

func TestPublicationIsOrderedPerTaskAndSkipsRepeats(t *testing.T) {
	tr, rec := mustTracker(t, false)
	e := tr.Attach("s1", "t1", claude)
	for i := range 50 {
		tr.Frame(e, launch(fmt.Sprint("task-", i), WorkSubagent, fmt.Sprint("agent-", i)))
	}
	for i := range 50 {
		tr.Frame(e, finish(fmt.Sprint("task-", i), WorkSubagent, fmt.Sprint("agent-", i)))
	}
	tr.Close()
	changes := rec.all()
	require.Len(t, changes, 101, "attach, 50 launches, 50 finishes")
	for i, c := range changes[1:51] {
		assert.Equal(t, i+1, c.View.Subagents)
	}
	for i, c := range changes[51:] {
		assert.Equal(t, 49-i, c.View.Subagents)
	}
}

func TestBaselineAdvancesOnlyAfterASuccessfulPublish(t *testing.T) {
	rec := &recorder{}
	var calls atomic.Int32
	failFirst := func(ctx context.Context, c Change) error {
		if calls.Add(1) == 2 {
			return errors.New("store unavailable")
		}
		return rec.publish(ctx, c)
	}
	tr, err := New(Config{Publish: failFirst})
	require.NoError(t, err)
	e := tr.Attach("s1", "t1", claude)                     // A, published
	tr.Frame(e, launch("task-1", WorkSubagent, "agent-1")) // B, publish fails
	tr.Frame(e, finish("task-1", WorkSubagent, "agent-1")) // A again: the subscriber holds it
	tr.Frame(e, launch("task-2", WorkSubagent, "agent-2")) // C, published
	tr.Close()
	changes := rec.all()
	require.Len(t, changes, 2)
	assert.Equal(t, View{Attested: true, Handoff: true}, changes[0].View)
	assert.Equal(t, View{Background: true, Subagents: 1, Attested: true, Handoff: true}, changes[1].View)
}

func TestReentrantPublicationQueuesBehind(t *testing.T) {
	var tr *Tracker
	var mu sync.Mutex
	var seen []int
	var e Exec
	publish := func(_ context.Context, c Change) error {
		mu.Lock()
		seen = append(seen, c.View.Subagents)
		mu.Unlock()
		if c.View.Subagents == 1 {
			// Publishing causes another change of the same task.
			tr.Frame(e, finish("task-1", WorkSubagent, "agent-1"))
		}
		return nil
	}
	var err error
	tr, err = New(Config{Publish: publish})
	require.NoError(t, err)
	e = tr.Attach("s1", "t1", claude)
	tr.Frame(e, launch("task-1", WorkSubagent, "agent-1"))
	tr.Close()
	assert.Equal(t, []int{0, 1, 0}, seen)
}

func TestConcurrentFramesPromptsAndTeardownStress(t *testing.T) {
	tr, rec := mustTracker(t, true)
	const sessions, rounds = 8, 200
	var wg sync.WaitGroup
	for s := range sessions {
		session, task := fmt.Sprint("s", s), fmt.Sprint("t", s%3)
		wg.Go(func() {
			for round := range rounds {
				e := tr.Attach(session, task, claude)
				var inner sync.WaitGroup
				inner.Go(func() {
					for i := range 5 {
						id := fmt.Sprint(round, "-", i)
						tr.Frame(e, launch(id, WorkSubagent, id))
						tr.Frame(e, Frame{Kind: FrameOutput})
						tr.Frame(e, humanYield)
						if i%2 == 0 {
							tr.Frame(e, finish(id, WorkSubagent, id))
						}
					}
				})
				inner.Go(func() {
					for range 3 {
						c, err := tr.Claim(session, task)
						if err != nil {
							if next, err := tr.Handoff(session); err == nil {
								tr.Complete(next)
							}
							continue
						}
						tr.Dispatched(c)
						if round%2 == 0 {
							tr.Complete(c)
						} else {
							tr.Release(c)
						}
					}
				})
				inner.Wait()
				tr.Detach(e)
			}
		})
	}
	wg.Wait()
	for s := range sessions {
		assert.Equal(t, View{}, tr.View(fmt.Sprint("s", s)))
	}
	assert.Empty(t, tr.records)
	tr.Close()
	last := map[string]View{}
	for _, c := range rec.all() {
		last[c.SessionID] = c.View
	}
	for id, v := range last {
		assert.Equal(t, View{}, v, "the last published view of %s", id)
	}
}
