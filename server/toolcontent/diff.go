package toolcontent

import (
	"fmt"
	"strings"
)

// maxEditCost bounds the Myers search: past this many edits (inserted
// plus deleted lines, after the common head and tail are set aside) the
// changed middle is shown as removed then added whole. The search costs
// O((N+M)·D) time and O(D²) memory for D ≤ maxEditCost, so no diff an
// agent sends can stall the server.
const maxEditCost = 1000

// contextLines is how many unchanged lines a hunk shows around a change.
const contextLines = 3

// op is one line of an edit script.
type op struct {
	kind byte // ' ', '-' or '+'
	line string
}

// Unified returns the unified diff of old and new text ("@@ -a,b +c,d @@"
// hunk headers, then ' ', '-' and '+' lines, each ending in "\n"), with
// the number of lines added and removed. A text
// without a final newline is compared as if it had one.
func Unified(old, new string) (body string, added, removed int) {
	a, b := splitLines(old), splitLines(new)
	script := edits(a, b)
	var out strings.Builder
	for i := 0; i < len(script); {
		// Find the next change; a hunk runs from contextLines before it
		// to contextLines after the last change within 2·contextLines.
		for i < len(script) && script[i].kind == ' ' {
			i++
		}
		if i == len(script) {
			break
		}
		start := max(i-contextLines, 0)
		end := i
		for j := i; j < len(script); j++ {
			if script[j].kind != ' ' {
				end = j + 1
			} else if j-end >= 2*contextLines {
				break
			}
		}
		end = min(end+contextLines, len(script))
		oldStart, newStart := 1, 1
		for _, o := range script[:start] {
			if o.kind != '+' {
				oldStart++
			}
			if o.kind != '-' {
				newStart++
			}
		}
		oldLen, newLen := 0, 0
		for _, o := range script[start:end] {
			if o.kind != '+' {
				oldLen++
			}
			if o.kind != '-' {
				newLen++
			}
		}
		if oldLen == 0 {
			oldStart-- // the unified format's convention for an empty side
		}
		if newLen == 0 {
			newStart--
		}
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n", oldStart, oldLen, newStart, newLen)
		for _, o := range script[start:end] {
			out.WriteByte(o.kind)
			out.WriteString(o.line)
			out.WriteByte('\n')
			switch o.kind {
			case '+':
				added++
			case '-':
				removed++
			}
		}
		i = end
	}
	return out.String(), added, removed
}

// splitLines splits s into lines without their newlines.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// edits returns an edit script turning a into b: the common head and tail
// unchanged, the middle by a bounded Myers search.
func edits(a, b []string) []op {
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	script := make([]op, 0, len(a)+len(b)-head-tail)
	for _, l := range a[:head] {
		script = append(script, op{' ', l})
	}
	script = append(script, middle(a[head:len(a)-tail], b[head:len(b)-tail])...)
	for _, l := range a[len(a)-tail:] {
		script = append(script, op{' ', l})
	}
	return script
}

// middle diffs a and b (which differ at both ends) by Myers' greedy
// algorithm, or, past maxEditCost, as all of a removed then all of b added.
func middle(a, b []string) []op {
	n, m := len(a), len(b)
	whole := func() []op {
		out := make([]op, 0, n+m)
		for _, l := range a {
			out = append(out, op{'-', l})
		}
		for _, l := range b {
			out = append(out, op{'+', l})
		}
		return out
	}
	if n == 0 || m == 0 {
		return whole()
	}
	limit := min(n+m, maxEditCost)
	off := limit
	v := make([]int, 2*limit+2)
	var trace [][]int
	for d := 0; d <= limit; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1] // down: insert
			} else {
				x = v[off+k-1] + 1 // right: delete
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
				return backtrack(a, b, trace)
			}
		}
		// Keep only the diagonals this round reached: O(d) per round.
		trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
	}
	return whole()
}

// backtrack walks the rounds of the search back from the end, giving the
// edit script. trace[d][k+d] is the furthest x on diagonal k in round d.
func backtrack(a, b []string, trace [][]int) []op {
	x, y := len(a), len(b)
	var rev []op
	for d := len(trace) - 1; d > 0; d-- {
		prev := trace[d-1]
		at := func(k int) int { return prev[k+d-1] } // round d-1 spans -(d-1)..d-1
		k := x - y
		var pk int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := at(pk)
		py := px - pk
		for x > px && y > py {
			x, y = x-1, y-1
			rev = append(rev, op{' ', a[x]})
		}
		if x == px {
			y--
			rev = append(rev, op{'+', b[y]})
		} else {
			x--
			rev = append(rev, op{'-', a[x]})
		}
	}
	for x > 0 && y > 0 {
		x, y = x-1, y-1
		rev = append(rev, op{' ', a[x]})
	}
	out := make([]op, len(rev))
	for i, o := range rev {
		out[len(rev)-1-i] = o
	}
	return out
}
