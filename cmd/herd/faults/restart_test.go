package faults

import (
	"context"
	"testing"
	"time"

	"github.com/herd-dev/herd/shared"
)

// The load both restart scenarios put on the server before it goes down.
const (
	loadSessions = 8
	// loadChunks at loadGapMS apart make a stream of about ten seconds,
	// far longer than the run-up to the fault, so every stream is cut.
	loadChunks = 2000
	loadGapMS  = 5
	// loadQueued prompts wait behind each stream.
	loadQueued = 3
	// loadFired is how many more prompts are acknowledged while the
	// streams run, before the fault.
	loadFired = 24
	// shutdownTimeout is the servers' --shutdown-timeout.
	shutdownTimeout = 10 * time.Second
)

// loaded is a server under the restart scenarios' load, with prompts
// still being fired at it.
type loaded struct {
	h     *herd
	f     *fleet
	stop  context.CancelFunc
	fired chan struct{} // closed when the firing has stopped
}

// underLoad starts a server, streams in every session with prompts
// queued behind, and keeps firing prompts until the fault ends the
// connection.
func underLoad(t *testing.T) *loaded {
	t.Helper()
	h := startHerd(t, serveOptions{args: []string{"--shutdown-timeout", shutdownTimeout.String()}})
	f := newFleet(t, h, loadSessions, loadChunks)
	f.startStreams(loadGapMS, loadQueued)
	f.waitStreaming(40)
	ctx, stop := context.WithCancel(context.Background())
	l := &loaded{h: h, f: f, stop: stop, fired: make(chan struct{})}
	go func() {
		defer close(l.fired)
		f.fire(ctx, 4, 50*time.Millisecond)
	}()
	t.Cleanup(func() { stop(); <-l.fired })
	deadline := time.Now().Add(30 * time.Second)
	for f.ackedCount() < loadSessions*(1+loadQueued)+loadFired {
		if time.Now().After(deadline) {
			t.Fatalf("only %d prompts acknowledged within 30 s", f.ackedCount())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return l
}

// ackedCount is how many prompts have been acknowledged.
func (f *fleet) ackedCount() int {
	f.ledger.mu.Lock()
	defer f.ledger.mu.Unlock()
	return len(f.ledger.acked)
}

// recover restarts herd on the data directory of the server that went
// down, waits for every session to settle, retries the prompts left
// unanswered, waits again and counts.
func (l *loaded) recover(t *testing.T, rec *scenario, down time.Time, end streamEnd) {
	t.Helper()
	<-l.fired // the fault ended the connection, so every worker stopped
	h := startHerd(t, serveOptions{dataDir: l.h.dataDir})
	rec.millis("restart_until_ready", time.Since(down))
	l.f.connect(h)
	// Recovery alone must run every acknowledged prompt; the retries come
	// after, since a retry also dispatches what a crash left queued.
	settling := time.Now()
	rec.want("left_by_recovery", "0")
	rec.add("left_by_recovery", l.f.unsettled(l.f.settle(30*time.Second)))
	rec.millis("ready_until_settled", time.Since(settling))
	l.f.retry(rec)
	l.f.retryAcknowledged(rec)
	l.f.verify(rec, l.f.settle(60*time.Second), end)
}

// orphans counts the agent processes of a server that went down still
// alive a few seconds later.
func orphans(rec *scenario, agents []proc) {
	rec.want("orphans", "0")
	rec.add("orphans", len(survivors(agents, 5*time.Second)))
}

// Killing the server with SIGKILL while every session streams, with
// prompts queued and more being acknowledged, loses nothing it
// acknowledged: after a restart on the same data every acknowledged
// prompt is in its transcript once and runs once, the cut-off streams end
// failed with a prefix of their text no shorter than what the client was
// shown, nothing is left streaming or showing work, and the killed
// server's agents do not outlive it.
func TestKillMidStreamLosesNothingAcknowledged(t *testing.T) {
	rec := record(t)
	l := underLoad(t)
	agents := l.h.children()
	rec.want("agents_before_fault", "8")
	rec.add("agents_before_fault", len(agents))
	down := time.Now()
	l.h.kill9()
	orphans(rec, agents)
	l.recover(t, rec, down, streamEnd{cut: []shared.MessageState{shared.MessageFailed}})
	rec.want("streams_cut", "8")
}

// SIGTERM under the same load is a clean shutdown: herd exits with status
// 0 within its shutdown timeout, stops its agents, and after a restart the
// same counts hold as after a kill (streams stopped by herd end cancelled
// or failed).
func TestSigtermUnderLoadShutsDownCleanly(t *testing.T) {
	rec := record(t)
	l := underLoad(t)
	agents := l.h.children()
	rec.want("agents_before_fault", "8")
	rec.add("agents_before_fault", len(agents))
	rec.want("exit_late", "0")
	rec.want("exit_status_nonzero", "0")
	down := time.Now()
	took, exited := l.h.terminate(shutdownTimeout + 5*time.Second)
	rec.millis("sigterm_until_exit", took)
	if !exited {
		rec.add("exit_late", 1)
		t.Errorf("herd still runs %s after SIGTERM (shutdown timeout %s)", took, shutdownTimeout)
		l.h.kill9()
	} else if code := l.h.state.ExitCode(); code != 0 {
		rec.add("exit_status_nonzero", 1)
		t.Errorf("herd exited with %v after SIGTERM, want status 0:\n%s", l.h.state, l.h.log.tail(20))
	}
	orphans(rec, agents)
	l.recover(t, rec, down, streamEnd{cut: []shared.MessageState{shared.MessageCancelled, shared.MessageFailed}})
	rec.want("streams_cut", "8")
}
