package gateway

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOutboxDrainsControlBeforeSemantic(t *testing.T) {
	o := newOutbox(4, 4)
	require.True(t, o.push(laneSemantic, []byte("n1")))
	require.True(t, o.push(laneSemantic, []byte("n2")))
	require.True(t, o.push(laneControl, []byte("r1")))
	var got []string
	for {
		f, ok := o.next()
		if !ok {
			break
		}
		got = append(got, string(f))
	}
	require.Equal(t, []string{"r1", "n1", "n2"}, got)
}

func TestOutboxLanesAreBoundedIndependently(t *testing.T) {
	o := newOutbox(2, 3)
	for range 3 {
		require.True(t, o.push(laneSemantic, []byte("n")))
	}
	require.False(t, o.push(laneSemantic, []byte("n")), "a full semantic lane reports overflow")
	require.True(t, o.push(laneControl, []byte("r")), "a full semantic lane never blocks responses")
	require.True(t, o.push(laneControl, []byte("r")))
	require.False(t, o.push(laneControl, []byte("r")), "a full control lane reports overflow")
}

func TestOutboxWakesTheWriterOnce(t *testing.T) {
	o := newOutbox(4, 4)
	o.push(laneSemantic, []byte("a"))
	o.push(laneControl, []byte("b"))
	require.Len(t, o.wake, 1, "the wake signal coalesces")
}

func TestClosedOutboxRefusesAndFreesFrames(t *testing.T) {
	o := newOutbox(4, 4)
	o.push(laneSemantic, []byte("a"))
	o.close()
	_, ok := o.next()
	require.False(t, ok)
	require.False(t, o.push(laneControl, []byte("b")))
}
