package coalescer

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/herd-dev/herd/server/clock/clocktest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// record is an Output with the fake time the Sink received it.
type record struct {
	Output
	at time.Time
}

// harness runs one Coalescer with a fake clock and a recording Sink inside
// a synctest bubble.
type harness struct {
	t      *testing.T
	clock  *clocktest.Fake
	c      *Coalescer
	cancel context.CancelFunc
	ran    chan struct{} // closed when Run has returned
	runErr error         // Run's result, once ran is closed

	mu   sync.Mutex
	outs []record // guarded by mu
	seen int      // outputs already returned by settle
}

// startHarness starts a Coalescer configured by cfg (Sink and Clock are
// filled in) and stops it when the test ends. It must run in a bubble.
func startHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	h := &harness{t: t, clock: clocktest.New(), ran: make(chan struct{})}
	cfg.Clock = h.clock
	if cfg.Sink == nil {
		cfg.Sink = h.record
	}
	c, err := New(cfg)
	require.NoError(t, err)
	h.c = c
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() {
		h.runErr = c.Run(ctx)
		close(h.ran)
	}()
	t.Cleanup(h.stop)
	return h
}

func (h *harness) record(o Output) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.outs = append(h.outs, record{Output: o, at: h.clock.Now()})
}

// stop closes the Coalescer and waits for Run, which must succeed; it is
// idempotent.
func (h *harness) stop() {
	h.c.Close()
	h.cancel()
	require.NoError(h.t, h.wait())
}

// wait waits for Run to return and returns its result.
func (h *harness) wait() error {
	<-h.ran
	return h.runErr
}

// advance moves the clock by d once Run is idle, and waits for Run to
// handle the timers that fired.
func (h *harness) advance(d time.Duration) {
	synctest.Wait()
	h.clock.Advance(d)
	synctest.Wait()
}

// settle waits until Run is idle and returns the outputs since the last
// settle.
func (h *harness) settle() []Output {
	synctest.Wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	var outs []Output
	for _, r := range h.outs[h.seen:] {
		outs = append(outs, r.Output)
	}
	h.seen = len(h.outs)
	return outs
}

// records returns every output so far with its time.
func (h *harness) records() []record {
	synctest.Wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.outs)
}

func (h *harness) chunk(kind Kind, text string) {
	h.t.Helper()
	require.NoError(h.t, h.c.Chunk(context.Background(), kind, text))
}

func (h *harness) barrier(event any) {
	h.t.Helper()
	require.NoError(h.t, h.c.Barrier(context.Background(), event))
}

// reassemble joins each message's texts, by key.
func reassemble(outs []Output) map[string]string {
	b := map[string]*strings.Builder{}
	for _, o := range outs {
		if o.Op == OpBarrier {
			continue
		}
		if b[o.Key] == nil {
			b[o.Key] = &strings.Builder{}
		}
		b[o.Key].WriteString(o.Text)
	}
	texts := make(map[string]string, len(b))
	for k, v := range b {
		texts[k] = v.String()
	}
	return texts
}

func open(key string, kind Kind, text string) Output {
	return Output{Op: OpOpen, Key: key, Kind: kind, Text: text}
}

func appendTo(key string, kind Kind, text string) Output {
	return Output{Op: OpAppend, Key: key, Kind: kind, Text: text}
}

func barrierOf(event any) Output {
	return Output{Op: OpBarrier, Event: event}
}
