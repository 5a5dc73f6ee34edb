package coalescer

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

// feeder feeds chunks from its own goroutine, as an agent reader does.
type feeder struct {
	accepted atomic.Int64
	done     chan error // receives the first error, or nil after the last chunk
}

func feed(ctx context.Context, c *Coalescer, n int, text string) *feeder {
	f := &feeder{done: make(chan error, 1)}
	go func() {
		for range n {
			if err := c.Chunk(ctx, KindAgent, text); err != nil {
				f.done <- err
				return
			}
			f.accepted.Add(1)
		}
		f.done <- nil
	}()
	return f
}

// requireBlocked fails unless the feeder is waiting in Chunk.
func (f *feeder) requireBlocked(t *testing.T, n int) {
	t.Helper()
	synctest.Wait()
	select {
	case err := <-f.done:
		t.Fatalf("feeder finished (err %v) after %d of %d chunks; want it blocked", err, f.accepted.Load(), n)
	default:
	}
	require.Less(t, f.accepted.Load(), int64(n))
}

// finish advances h's clock a window at a time until the feeder is done,
// since bytes waiting for their window count against MaxPendingBytes too.
func (f *feeder) finish(h *harness) error {
	for {
		synctest.Wait()
		select {
		case err := <-f.done:
			return err
		default:
			h.advance(DefaultWindow)
		}
	}
}

// startSlow starts a harness whose Sink records each output and then waits
// until release is called; release is idempotent and also runs when the
// test ends.
func startSlow(t *testing.T, metrics *Metrics) (h *harness, release func()) {
	gate := make(chan struct{})
	h = startHarness(t, Config{MaxPendingBytes: 100, Metrics: metrics, Sink: func(o Output) {
		h.record(o)
		<-gate
	}})
	release = sync.OnceFunc(func() { close(gate) })
	t.Cleanup(release)
	return h, release
}

func TestSlowSinkBlocksOnlyItsOwnSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		metrics, err := NewMetrics(reg)
		require.NoError(t, err)
		slow, release := startSlow(t, metrics)
		fast := startHarness(t, Config{})

		const n = 50
		f := feed(context.Background(), slow.c, n, "0123456789")
		f.requireBlocked(t, n)
		require.Positive(t, counterValue(t, reg, "herd_coalescer_backpressure_waits_total", ""))

		var want strings.Builder
		for range 1000 {
			want.WriteString("abc")
			fast.chunk(KindThinking, "abc")
		}
		fast.advance(DefaultWindow)
		require.Equal(t, map[string]string{"m1": want.String()}, reassemble(fast.settle()),
			"another session streams while this one's sink is stuck")
		f.requireBlocked(t, n)

		release()
		require.NoError(t, f.finish(slow))
		slow.stop()
		require.Equal(t, map[string]string{"m1": strings.Repeat("0123456789", n)}, reassemble(slow.settle()))
	})
}

func TestWaitingChunkEndsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, release := startSlow(t, nil)
		ctx, cancel := context.WithCancel(context.Background())
		const n = 50
		f := feed(ctx, h.c, n, "0123456789")
		f.requireBlocked(t, n)

		cancel()
		require.ErrorIs(t, <-f.done, context.Canceled)
		release()
		h.stop()
		accepted := int(f.accepted.Load())
		require.Equal(t, map[string]string{"m1": strings.Repeat("0123456789", accepted)}, reassemble(h.settle()),
			"every accepted chunk is published, the refused one is not")
	})
}

func TestCloseReleasesWaitingChunk(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, release := startSlow(t, nil)
		const n = 50
		f := feed(context.Background(), h.c, n, "0123456789")
		f.requireBlocked(t, n)

		closed := make(chan struct{})
		go func() {
			h.c.Close()
			close(closed)
		}()
		require.ErrorIs(t, <-f.done, ErrClosed)
		synctest.Wait()
		select {
		case <-closed:
			t.Fatal("Close returned while Run was still publishing")
		default:
		}

		release()
		<-closed
		require.NoError(t, h.wait())
		accepted := int(f.accepted.Load())
		require.Equal(t, map[string]string{"m1": strings.Repeat("0123456789", accepted)}, reassemble(h.settle()))
	})
}
