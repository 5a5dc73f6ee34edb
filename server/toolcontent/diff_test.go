package toolcontent

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// apply applies a unified diff to old, checking every context and removed
// line against it, and returns the new text's lines.
func apply(t *testing.T, old, diff string) []string {
	t.Helper()
	a := splitLines(old)
	var out []string
	at := 0 // next line of a to copy
	for _, l := range splitLines(diff) {
		if strings.HasPrefix(l, "@@ ") {
			var os, ol, ns, nl int
			_, err := fmt.Sscanf(l, "@@ -%d,%d +%d,%d @@", &os, &ol, &ns, &nl)
			require.NoError(t, err, l)
			start := os - 1
			if ol == 0 {
				start = os
			}
			require.GreaterOrEqual(t, start, at, "hunks in order: %s", l)
			out = append(out, a[at:start]...)
			at = start
			wantNew := len(out) + 1
			if nl == 0 {
				wantNew = len(out)
			}
			require.Equal(t, wantNew, ns, "new start of %s", l)
			continue
		}
		switch l[0] {
		case ' ', '-':
			require.Less(t, at, len(a))
			require.Equal(t, a[at], l[1:], "a context or removed line matches the old text")
			if l[0] == ' ' {
				out = append(out, l[1:])
			}
			at++
		case '+':
			out = append(out, l[1:])
		default:
			t.Fatalf("line %q", l)
		}
	}
	return append(out, a[at:]...)
}

func numbered(n int, f func(i int) string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(f(i) + "\n")
	}
	return b.String()
}

func TestUnifiedShowsAChangeWithThreeLinesOfContext(t *testing.T) {
	old := numbered(10, strconv.Itoa)
	new := strings.Replace(old, "5\n", "five\n", 1)
	body, added, removed := Unified(old, new)
	assert.Equal(t, "@@ -3,7 +3,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n", body)
	assert.Equal(t, 1, added)
	assert.Equal(t, 1, removed)
}

func TestUnifiedOfANewFileAddsEveryLine(t *testing.T) {
	body, added, removed := Unified("", "one\ntwo\n")
	assert.Equal(t, "@@ -0,0 +1,2 @@\n+one\n+two\n", body)
	assert.Equal(t, 2, added)
	assert.Zero(t, removed)
	body, _, _ = Unified("same\n", "same\n")
	assert.Empty(t, body, "no change, no hunk")
}

func TestUnifiedSplitsDistantChangesIntoHunks(t *testing.T) {
	old := numbered(40, strconv.Itoa)
	new := strings.Replace(strings.Replace(old, "\n3\n", "\nthree\n", 1), "\n30\n", "\n", 1)
	body, _, _ := Unified(old, new)
	assert.Equal(t, 2, strings.Count(body, "@@ -"), body)
	assert.Equal(t, splitLines(new), apply(t, old, body))
}

// Random edits of random texts: the diff always turns the old text into
// the new one, and is minimal enough to keep unchanged lines as context.
func TestUnifiedAlwaysAppliesToTheNewText(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		old := numbered(r.IntN(60), func(int) string { return strconv.Itoa(r.IntN(8)) })
		lines := splitLines(old)
		for range r.IntN(8) {
			i := r.IntN(len(lines) + 1)
			switch r.IntN(3) {
			case 0:
				lines = append(lines[:i], append([]string{"new" + strconv.Itoa(r.IntN(5))}, lines[i:]...)...)
			case 1:
				if i < len(lines) {
					lines = append(lines[:i], lines[i+1:]...)
				}
			default:
				if i < len(lines) {
					lines[i] = "changed"
				}
			}
		}
		new := ""
		if len(lines) > 0 {
			new = strings.Join(lines, "\n") + "\n"
		}
		body, added, removed := Unified(old, new)
		got := apply(t, old, body)
		if len(got) == 0 {
			got = nil
		}
		require.Equal(t, splitLines(new), got, "old %q new %q diff %q", old, new, body)
		assert.Equal(t, strings.Count(body, "\n+"), added)
		assert.Equal(t, len(splitLines(old))-removed+added, len(splitLines(new)))
	}
}

// Past the edit bound the changed middle is shown removed then added
// whole: still a correct diff, found in bounded time.
func TestUnifiedBeyondTheEditBoundReplacesTheMiddle(t *testing.T) {
	old := "head\n" + numbered(3000, func(i int) string { return "a" + strconv.Itoa(i) }) + "tail\n"
	new := "head\n" + numbered(3000, func(i int) string { return "b" + strconv.Itoa(i) }) + "tail\n"
	body, added, removed := Unified(old, new)
	assert.Equal(t, 3000, added)
	assert.Equal(t, 3000, removed)
	lines := splitLines(body)
	assert.Equal(t, " head", lines[1])
	assert.Equal(t, "-a0", lines[2])
	assert.Equal(t, "+b0", lines[3002], "every removal comes first")
	assert.Equal(t, splitLines(new), apply(t, old, body))
}
