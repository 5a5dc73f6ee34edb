package coalescer

import (
	"math/rand/v2"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// step is one input of a generated stream: a chunk, a barrier, or (with
// neither a kind nor barrier set) only a move of the clock.
type step struct {
	kind    Kind
	text    string
	barrier bool
	event   int
	advance time.Duration
	settle  bool // let Run catch up before the next step
}

// pieces are the units generated text is made of: ASCII, multi-byte UTF-8
// sequences of every length, a combining mark, and bytes that are not UTF-8
// at all, since chunks are opaque.
var pieces = []string{"a", "Z", " ", "\n", "é", "€", "語", "😀", "\u0301", "\xff", "\x00", "\xe2\x82"}

func genText(rng *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.String()
}

// split cuts s at random byte offsets, often inside a UTF-8 sequence, and
// sprinkles in empty chunks.
func split(rng *rand.Rand, s string) []string {
	var chunks []string
	for len(s) > 0 {
		n := min(rng.IntN(8), len(s))
		chunks = append(chunks, s[:n])
		s = s[n:]
	}
	return chunks
}

// genStream returns epochs of randomly interleaved agent and thinking
// chunks, separated by barriers, with random clock moves in between.
func genStream(rng *rand.Rand) []step {
	var steps []step
	epochs := 1 + rng.IntN(5)
	for e := range epochs {
		queues := [][]string{
			split(rng, genText(rng, rng.IntN(60))),
			split(rng, genText(rng, rng.IntN(60))),
		}
		for len(queues[0])+len(queues[1]) > 0 {
			q := rng.IntN(2)
			if len(queues[q]) == 0 {
				q = 1 - q
			}
			st := step{kind: kinds[q], text: queues[q][0]}
			queues[q] = queues[q][1:]
			if rng.IntN(6) == 0 {
				st.advance = time.Duration(rng.IntN(150)) * time.Millisecond
			}
			st.settle = rng.IntN(4) == 0
			steps = append(steps, st)
		}
		if e < epochs-1 || rng.IntN(2) == 0 {
			steps = append(steps, step{barrier: true, event: e, settle: rng.IntN(2) == 0})
		}
	}
	return steps
}

// runStream feeds steps to a fresh Coalescer, closes it, and returns its
// outputs. It must run in a bubble.
func runStream(t *testing.T, steps []step) []Output {
	h := startHarness(t, Config{})
	for _, st := range steps {
		switch {
		case st.barrier:
			h.barrier(st.event)
		case st.kind != "":
			h.chunk(st.kind, st.text)
		}
		if st.settle {
			synctest.Wait()
		}
		if st.advance > 0 {
			h.clock.Advance(st.advance)
		}
	}
	h.stop()
	return h.settle()
}

// verifyStream checks outs against the stream that produced them: the
// barriers in input order, and between two barriers at most one message per
// kind whose bytes are exactly that kind's chunks, opened before it is
// appended to and never continued past a barrier.
func verifyStream(t *testing.T, steps []step, outs []Output) {
	t.Helper()
	var wantBarriers []any
	want := []map[Kind]string{{}}
	for _, st := range steps {
		if st.barrier {
			wantBarriers = append(wantBarriers, st.event)
			want = append(want, map[Kind]string{})
			continue
		}
		if st.kind != "" {
			want[len(want)-1][st.kind] += st.text
		}
	}

	var gotBarriers []any
	got := []map[Kind][]string{{}} // keys opened per epoch and kind
	epochOf := map[string]int{}
	text := map[string]string{}
	for i, o := range outs {
		epoch := len(gotBarriers)
		switch o.Op {
		case OpBarrier:
			gotBarriers = append(gotBarriers, o.Event)
			got = append(got, map[Kind][]string{})
		case OpOpen:
			require.NotContains(t, epochOf, o.Key, "output %d opens %s twice", i, o.Key)
			require.NotEmpty(t, o.Text, "output %d", i)
			epochOf[o.Key] = epoch
			got[epoch][o.Kind] = append(got[epoch][o.Kind], o.Key)
			text[o.Key] = o.Text
		case OpAppend:
			require.Contains(t, epochOf, o.Key, "output %d appends to %s before opening it", i, o.Key)
			require.Equal(t, epoch, epochOf[o.Key], "output %d continues %s past a barrier", i, o.Key)
			require.NotEmpty(t, o.Text, "output %d", i)
			text[o.Key] += o.Text
		default:
			t.Fatalf("output %d has op %v", i, o.Op)
		}
	}
	require.Equal(t, wantBarriers, gotBarriers)
	for e := range want {
		for _, kind := range kinds {
			keys := got[e][kind]
			if want[e][kind] == "" {
				require.Empty(t, keys, "epoch %d, %s: no chunks, no message", e, kind)
				continue
			}
			require.Len(t, keys, 1, "epoch %d, %s: one message", e, kind)
			require.Equal(t, want[e][kind], text[keys[0]], "epoch %d, %s: exact bytes", e, kind)
		}
	}
}

func TestRandomStreamsReassembleExactly(t *testing.T) {
	const seed, iterations = 20260802, 400
	rng := rand.New(rand.NewPCG(seed, seed))
	for i := range iterations {
		steps := genStream(rng)
		synctest.Test(t, func(t *testing.T) {
			outs := runStream(t, steps)
			if t.Failed() {
				return
			}
			verifyStream(t, steps, outs)
		})
		if t.Failed() {
			t.Fatalf("seed %d, iteration %d, steps %+v", seed, i, steps)
		}
	}
}

// FuzzStreamsReassembleExactly decodes arbitrary bytes into a stream: each
// byte's low three bits pick the step and the rest size it.
func FuzzStreamsReassembleExactly(f *testing.F) {
	f.Add([]byte("\x00hello\x03wor\x06\x07\x01ld\x0f"))
	f.Add([]byte("\x08\xe2\x82\xac\x0b\x9f\x98\x80\x06\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var steps []step
		for len(data) > 0 {
			b := data[0]
			data = data[1:]
			n := min(int(b>>3), len(data))
			switch b & 7 {
			case 0, 1, 2:
				steps = append(steps, step{kind: KindAgent, text: string(data[:n])})
				data = data[n:]
			case 3, 4, 5:
				steps = append(steps, step{kind: KindThinking, text: string(data[:n])})
				data = data[n:]
			case 6:
				steps = append(steps, step{barrier: true, event: len(steps), settle: b&8 != 0})
			case 7:
				steps = append(steps, step{settle: true, advance: time.Duration(b>>3) * 10 * time.Millisecond})
			}
		}
		synctest.Test(t, func(t *testing.T) {
			verifyStream(t, steps, runStream(t, steps))
		})
	})
}
