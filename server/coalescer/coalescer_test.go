package coalescer

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/clock/clocktest"
)

func TestFirstChunkOpensAtOnceAndLaterChunksWaitForTheWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startHarness(t, Config{})
		h.chunk(KindAgent, "Hel")
		require.Equal(t, []Output{open("m1", KindAgent, "Hel")}, h.settle())

		h.chunk(KindAgent, "lo, ")
		h.chunk(KindAgent, "wor")
		require.Empty(t, h.settle())
		h.clock.Advance(99 * time.Millisecond)
		h.chunk(KindAgent, "ld")
		require.Empty(t, h.settle(), "nothing before the window ends")

		h.clock.Advance(time.Millisecond)
		require.Equal(t, []Output{appendTo("m1", KindAgent, "lo, world")}, h.settle())
		h.clock.Advance(time.Second)
		require.Empty(t, h.settle(), "nothing pending, nothing published")
	})
}

func TestQuietMessagePublishesItsNextChunkAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startHarness(t, Config{})
		h.chunk(KindThinking, "a")
		h.settle()
		h.clock.Advance(250 * time.Millisecond)
		h.chunk(KindThinking, "b")
		require.Equal(t, []Output{appendTo("m1", KindThinking, "b")}, h.settle())
		h.chunk(KindThinking, "c")
		require.Empty(t, h.settle(), "a new window started with the last publication")
		h.clock.Advance(100 * time.Millisecond)
		require.Equal(t, []Output{appendTo("m1", KindThinking, "c")}, h.settle())
	})
}

// The DESIGN budget: 30,000 tiny reasoning chunks, byte-exact, at most one
// publication per 100 ms window per message.
func TestBurstOf30000ReasoningChunksIsByteExactAndWindowed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startHarness(t, Config{})
		start := h.clock.Now()
		var want strings.Builder
		for i := range 30000 {
			text := strconv.Itoa(i) + " "
			want.WriteString(text)
			h.chunk(KindThinking, text)
			if (i+1)%10 == 0 {
				h.advance(time.Millisecond)
			}
		}
		elapsed := h.clock.Now().Sub(start)
		h.stop()

		recs := h.records()
		outs := make([]Output, len(recs))
		for i, r := range recs {
			outs[i] = r.Output
			if i > 0 {
				require.GreaterOrEqual(t, r.at.Sub(recs[i-1].at), DefaultWindow,
					"publications %d and %d are less than a window apart", i-1, i)
			}
		}
		windows := int(elapsed / DefaultWindow)
		require.LessOrEqual(t, len(outs), windows+1)
		require.Equal(t, OpOpen, outs[0].Op)
		require.Equal(t, map[string]string{"m1": want.String()}, reassemble(outs))
		t.Logf("30000 chunks over %v: %d publications", elapsed, len(outs))
	})
}

func TestAlternatingThinkingAndAgentChunksKeepTwoMessages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startHarness(t, Config{})
		var thinking, agent strings.Builder
		for i := range 200 {
			th, ag := "t"+strconv.Itoa(i), "a"+strconv.Itoa(i)
			thinking.WriteString(th)
			agent.WriteString(ag)
			h.chunk(KindThinking, th)
			h.chunk(KindAgent, ag)
			if i%20 == 19 {
				h.advance(10 * time.Millisecond)
			}
		}
		h.stop()
		outs := h.settle()
		opens := 0
		for _, o := range outs {
			if o.Op == OpOpen {
				opens++
			}
		}
		require.Equal(t, 2, opens)
		require.Len(t, outs, 4, "two messages, each opened and then published once in 100 ms")
		require.Equal(t, map[string]string{"m1": thinking.String(), "m2": agent.String()}, reassemble(outs))
	})
}

func TestBarrierFlushesPendingInOpenOrderThenPassesThrough(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startHarness(t, Config{})
		h.chunk(KindThinking, "plan")
		h.chunk(KindAgent, "Let me")
		require.Equal(t, []Output{
			open("m1", KindThinking, "plan"),
			open("m2", KindAgent, "Let me"),
		}, h.settle())

		h.chunk(KindAgent, " look")
		h.chunk(KindThinking, "ning")
		h.barrier("tool_call")
		require.Equal(t, []Output{
			appendTo("m1", KindThinking, "ning"),
			appendTo("m2", KindAgent, " look"),
			barrierOf("tool_call"),
		}, h.settle())

		h.chunk(KindAgent, "Found it")
		require.Equal(t, []Output{open("m3", KindAgent, "Found it")}, h.settle(),
			"the chunk after a barrier opens a new message at once, inside the old window")

		h.barrier("turn_complete")
		h.barrier("shutdown")
		require.Equal(t, []Output{barrierOf("turn_complete"), barrierOf("shutdown")}, h.settle())
	})
}

func TestBarrierFedWithChunksInOnePassKeepsTheirOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The Sink holds Run on the first output, so that everything fed
		// meanwhile is taken in Run's next pass.
		var h *harness
		gate := make(chan struct{})
		h = startHarness(t, Config{Sink: func(o Output) {
			h.record(o)
			if o.Text == "x" {
				<-gate
			}
		}})
		h.chunk(KindThinking, "x")
		synctest.Wait()
		h.chunk(KindAgent, "a")
		h.chunk(KindAgent, "b")
		h.barrier(1)
		h.chunk(KindThinking, "c")
		h.chunk(KindAgent, "d")
		close(gate)
		require.Equal(t, []Output{
			open("m1", KindThinking, "x"),
			open("m2", KindAgent, "ab"),
			barrierOf(1),
			open("m3", KindThinking, "c"),
			open("m4", KindAgent, "d"),
		}, h.settle())
	})
}

func TestEmptyChunksNeverOpenAMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startHarness(t, Config{})
		h.chunk(KindAgent, "")
		h.chunk(KindThinking, "")
		h.barrier("tool_call")
		h.chunk(KindAgent, "")
		h.clock.Advance(time.Second)
		require.Equal(t, []Output{barrierOf("tool_call")}, h.settle())
		h.chunk(KindAgent, "x")
		require.Equal(t, []Output{open("m1", KindAgent, "x")}, h.settle())
	})
}

func TestCancelFlushesPendingThenStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startHarness(t, Config{})
		h.chunk(KindAgent, "a")
		h.settle()
		h.chunk(KindAgent, "b")
		h.chunk(KindThinking, "t")
		require.Equal(t, []Output{open("m2", KindThinking, "t")}, h.settle())
		h.chunk(KindThinking, "u")
		h.cancel()
		require.NoError(t, h.wait())
		require.Equal(t, []Output{appendTo("m1", KindAgent, "b"), appendTo("m2", KindThinking, "u")}, h.settle(),
			"shutdown flushes in open order")
		require.ErrorIs(t, h.c.Chunk(context.Background(), KindAgent, "c"), ErrClosed)
		require.ErrorIs(t, h.c.Barrier(context.Background(), "x"), ErrClosed)
		h.clock.Advance(time.Second)
		require.Empty(t, h.settle())
	})
}

func TestCloseFlushesPendingAndRejectsLaterInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startHarness(t, Config{})
		h.chunk(KindThinking, "a")
		h.settle()
		h.chunk(KindThinking, "b")
		h.c.Close()
		require.Equal(t, []Output{appendTo("m1", KindThinking, "b")}, h.settle())
		require.ErrorIs(t, h.c.Chunk(context.Background(), KindThinking, "c"), ErrClosed)
		h.c.Close()
	})
}

func TestCloseBeforeRunLetsRunPublishAcceptedInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var outs []Output
		c, err := New(Config{Sink: func(o Output) { outs = append(outs, o) }, Clock: clocktest.New()})
		require.NoError(t, err)
		require.NoError(t, c.Chunk(context.Background(), KindAgent, "a"))
		require.NoError(t, c.Barrier(context.Background(), "end"))
		c.Close()
		require.NoError(t, c.Run(context.Background()))
		require.Equal(t, []Output{open("m1", KindAgent, "a"), barrierOf("end")}, outs)
		require.ErrorIs(t, c.Run(context.Background()), ErrRunning)
	})
}

func TestNewKeyNamesMessages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		next := 0
		h := startHarness(t, Config{NewKey: func() string {
			next++
			return "msg-" + strconv.Itoa(next)
		}})
		h.chunk(KindAgent, "a")
		h.barrier(nil)
		h.chunk(KindAgent, "b")
		require.Equal(t, []Output{open("msg-1", KindAgent, "a"), barrierOf(nil), open("msg-2", KindAgent, "b")}, h.settle())
	})
}

func TestChunkOfUnknownKindIsRejected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startHarness(t, Config{})
		err := h.c.Chunk(context.Background(), Kind("tool"), "x")
		require.ErrorContains(t, err, `unknown kind "tool"`)
		require.Empty(t, h.settle())
	})
}

func TestNewValidatesConfig(t *testing.T) {
	sink := func(Output) {}
	for name, tc := range map[string]struct {
		cfg  Config
		want string
	}{
		"missing sink":      {Config{}, "Config.Sink is required"},
		"negative window":   {Config{Sink: sink, Window: -time.Second}, "Config.Window is negative"},
		"negative max size": {Config{Sink: sink, MaxPendingBytes: -1}, "Config.MaxPendingBytes is negative"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := New(tc.cfg)
			require.ErrorContains(t, err, tc.want)
		})
	}
	c, err := New(Config{Sink: sink})
	require.NoError(t, err)
	require.Equal(t, DefaultWindow, c.window)
	require.Equal(t, DefaultMaxPendingBytes, c.max)
}

func TestMetricsCountChunksPublicationsAndReasons(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		metrics, err := NewMetrics(reg)
		require.NoError(t, err)
		h := startHarness(t, Config{Metrics: metrics})

		h.chunk(KindAgent, "a") // open
		h.settle()
		h.chunk(KindAgent, "b")
		h.chunk(KindAgent, "c")
		h.advance(100 * time.Millisecond) // window: "bc"
		h.chunk(KindThinking, "t")        // open
		h.settle()
		h.chunk(KindThinking, "u")
		h.settle()
		h.barrier("tool_call")  // barrier: "u"
		h.chunk(KindAgent, "d") // open
		h.settle()
		h.chunk(KindAgent, "e")
		h.settle()
		h.stop() // shutdown: "e"

		for name, want := range map[string]float64{
			"herd_coalescer_chunks_total":             7,
			"herd_coalescer_coalesced_chunks_total":   1,
			"herd_coalescer_bytes_total":              7,
			"herd_coalescer_barriers_total":           1,
			"herd_coalescer_backpressure_waits_total": 0,
		} {
			require.Equal(t, want, counterValue(t, reg, name, ""), name)
		}
		for reason, want := range map[string]float64{"open": 3, "window": 1, "barrier": 1, "shutdown": 1} {
			require.Equal(t, want, counterValue(t, reg, "herd_coalescer_publications_total", reason), reason)
		}
		_, err = NewMetrics(reg)
		require.ErrorContains(t, err, "register coalescer metrics")
	})
}

// counterValue returns the value of counter name, with reason label value
// reason if it is not empty.
func counterValue(t *testing.T, reg *prometheus.Registry, name, reason string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := m.GetLabel()
			if reason == "" || len(labels) == 1 && labels[0].GetValue() == reason {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no counter %s{reason=%q}", name, reason)
	return 0
}

// benchmarkChunks feeds tiny chunks of the kinds in order, in turn, through a
// Coalescer with the system clock, the default window and a Sink that does
// nothing, and reports chunks per second; the budget is 1,000,000 on one
// core.
func benchmarkChunks(b *testing.B, order ...Kind) {
	c, err := New(Config{Sink: func(Output) {}})
	if err != nil {
		b.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- c.Run(context.Background()) }()
	ctx := context.Background()
	n := 0
	for b.Loop() {
		if err := c.Chunk(ctx, order[n%len(order)], "tok "); err != nil {
			b.Fatal(err)
		}
		n++
	}
	c.Close()
	if err := <-ran; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "chunks/s")
}

func BenchmarkCoalescerChunks(b *testing.B) {
	benchmarkChunks(b, KindThinking)
}

func BenchmarkCoalescerChunksAlternating(b *testing.B) {
	benchmarkChunks(b, KindThinking, KindAgent)
}
