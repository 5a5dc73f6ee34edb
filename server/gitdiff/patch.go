package gitdiff

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/herd-dev/herd/shared"
)

// lineCap is the longest token lineSplitter hands over: one byte more than
// a line may keep, so that a token longer than shared.MaxReviewLineBytes
// says its line was longer and is cut.
const lineCap = shared.MaxReviewLineBytes + 1

// lineSplitter is a bufio.SplitFunc, in split, that hands over git's
// output line by line without the "\n" (a "\r" before it is the line's
// own), and hands over only the first lineCap bytes of a longer line,
// skipping the rest of it. A line of any length (up to
// shared.MaxReviewFileBytes, for a file File diffs) therefore passes the
// scanner as one token of at most lineCap bytes, and the scanner's buffer
// never grows beyond a few of them, where a plain line scanner would need
// gitcli.Runner.Limit above the longest line or fail.
type lineSplitter struct {
	skipping bool // in the rest of a line already handed over in part
}

func (s *lineSplitter) split(data []byte, atEOF bool) (advance int, token []byte, err error) {
	i := bytes.IndexByte(data, '\n')
	switch {
	case s.skipping && i >= 0:
		s.skipping = false
		return i + 1, nil, nil
	case s.skipping:
		return len(data), nil, nil
	case i >= 0 && i <= lineCap:
		return i + 1, data[:i], nil
	case len(data) >= lineCap:
		// Skip the line's rest: its newline comes in this data, at i, or
		// later.
		if i >= 0 {
			return i + 1, data[:lineCap], nil
		}
		s.skipping = true
		return len(data), data[:lineCap], nil
	case atEOF && len(data) > 0:
		return len(data), data, nil
	}
	return 0, nil, nil
}

// patchReader reads the patches git diff-tree -p writes, line by line,
// and keeps one page of one file's in resp: those after the first skip,
// up to and including the last-th, counted from one. Git writes two
// patches for a type change (the old file deleted, the new one added);
// their hunks follow each other in one count. It skips the header lines
// ("diff --git", "index", "---", "+++" and the like) and keeps the lines
// of hunks whose index, counted from the file's first hunk's first line,
// is in the page.
//
// A hunk's header gives the number of lines it holds on each side, which
// tells its lines from the headers that follow it, whatever the lines
// hold: a removed line "-- a" reads "--- a".
type patchReader struct {
	offset, limit int
	resp          *shared.ReviewFileResponse
	skip, last    int // the patches before the file's, and its last one
	patch         int // the patches begun so far

	n       int    // diff lines read so far: the next line's index
	header  string // the current hunk's header
	first   int    // the index of the current hunk's first line
	inPage  bool   // the current hunk has a ReviewHunk in the page
	inHunk  bool   // the next line may be one of the current hunk's
	oldLeft int    // lines the current hunk still holds on the old side
	newLeft int    // and on the new side
	oldLine int    // the old side's number of the next line
	newLine int    // and the new side's
	lines   int    // lines in the page
	bytes   int    // text in the page: lines and headers
	err     error
}

// line takes the next line of git's output. It returns false to stop git:
// once the page is full and a line shows that more follow, for a binary
// file, or when the patch is not what git writes.
func (r *patchReader) line(l []byte) bool {
	if r.inHunk && (r.oldLeft > 0 || r.newLeft > 0 || len(l) > 0 && l[0] == '\\') {
		return r.body(l)
	}
	r.inHunk = false
	switch {
	case bytes.HasPrefix(l, []byte("diff --git ")):
		r.patch++
		return r.patch <= r.last // the rest is other files'
	case bytes.HasPrefix(l, []byte("@@ ")):
		return r.hunk(l)
	case r.patch <= r.skip:
	case bytes.HasPrefix(l, []byte("Binary files ")) && bytes.HasSuffix(l, []byte(" differ")):
		// A binary side: nothing of the file is sent, even the lines of
		// a text side of a type change.
		r.resp.Binary = true
		r.resp.Hunks = r.resp.Hunks[:0]
		r.resp.NextOffset = 0
		return false
	}
	return true
}

// hunk starts a hunk at its header, "@@ -OLD[,N] +NEW[,N] @@ CONTEXT".
func (r *patchReader) hunk(l []byte) bool {
	h := string(l)
	ranges, _, ok := strings.Cut(h[len("@@ "):], " @@")
	oldRange, newRange, ok2 := strings.Cut(ranges, " ")
	if !ok || !ok2 || !strings.HasPrefix(oldRange, "-") || !strings.HasPrefix(newRange, "+") {
		return r.fail("hunk header", l)
	}
	var ok3, ok4 bool
	r.oldLine, r.oldLeft, ok3 = parseRange(oldRange[1:])
	r.newLine, r.newLeft, ok4 = parseRange(newRange[1:])
	if !ok3 || !ok4 {
		return r.fail("hunk header", l)
	}
	r.header = cut(h)
	r.first, r.inPage, r.inHunk = r.n, false, true
	return true
}

// parseRange parses one side of a hunk header, "START[,COUNT]", and
// returns the number of the side's first line and the count. A side of
// no lines names the line before them; the number returned is the next,
// as shared.ReviewHunk wants for lines a side does not hold.
func parseRange(s string) (start, count int, ok bool) {
	a, b, hasCount := strings.Cut(s, ",")
	start, err := strconv.Atoi(a)
	if err != nil || start < 0 {
		return 0, 0, false
	}
	count = 1
	if hasCount {
		if count, err = strconv.Atoi(b); err != nil || count < 0 {
			return 0, 0, false
		}
	}
	if count == 0 {
		start++
	}
	return start, count, true
}

// body takes one line of the current hunk.
func (r *patchReader) body(l []byte) bool {
	mark := byte(' ') // an empty line is an empty context line (diff.suppressBlankEmpty)
	if len(l) > 0 {
		mark = l[0]
	}
	oldStep, newStep := 0, 0
	switch mark {
	case ' ':
		oldStep, newStep = 1, 1
	case '-':
		oldStep = 1
	case '+':
		newStep = 1
	case '\\':
	default:
		return r.fail("line in a hunk", l)
	}
	if r.oldLeft < oldStep || r.newLeft < newStep {
		return r.fail("line beyond its hunk", l)
	}
	if r.patch > r.skip {
		index := r.n
		r.n++
		if index >= r.offset && !r.keep(index, l) {
			return false
		}
	}
	r.oldLine, r.newLine = r.oldLine+oldStep, r.newLine+newStep
	r.oldLeft, r.newLeft = r.oldLeft-oldStep, r.newLeft-newStep
	return true
}

// keep adds the line of index to the page, or reports false when the page
// is full, the line showing that more follow.
func (r *patchReader) keep(index int, l []byte) bool {
	text := " "
	if len(l) > 0 {
		text = cut(string(l))
	}
	cost := len(text)
	if !r.inPage {
		cost += len(r.header)
	}
	if r.lines == r.limit || r.lines > 0 && r.bytes+cost > shared.MaxReviewPageBytes {
		r.resp.NextOffset = index
		return false
	}
	if !r.inPage {
		r.resp.Hunks = append(r.resp.Hunks, shared.ReviewHunk{
			Header: r.header, OldStart: r.oldLine, NewStart: r.newLine, Continued: index > r.first,
		})
		r.inPage = true
	}
	h := &r.resp.Hunks[len(r.resp.Hunks)-1]
	h.Lines = append(h.Lines, text)
	h.Cut = h.Cut || len(l) > shared.MaxReviewLineBytes
	r.lines++
	r.bytes += cost
	return true
}

// cut returns s, or its start when s is longer than
// shared.MaxReviewLineBytes: as much of it as fits without splitting a
// UTF-8 sequence. Text that is not UTF-8 is cut at the bound.
func cut(s string) string {
	if len(s) <= shared.MaxReviewLineBytes {
		return s
	}
	n := shared.MaxReviewLineBytes
	for back := 0; back < utf8.UTFMax-1 && n > 0 && !utf8.RuneStart(s[n]); back++ {
		n--
	}
	if !utf8.RuneStart(s[n]) {
		n = shared.MaxReviewLineBytes
	}
	return s[:n]
}

func (r *patchReader) fail(what string, l []byte) bool {
	r.err = fmt.Errorf("git diff-tree -p: unexpected %s %q", what, l[:min(len(l), 200)])
	return false
}

// finish returns what went wrong, if anything, once git's output ended or
// the reader stopped it.
func (r *patchReader) finish() error {
	switch {
	case r.err != nil:
	case r.patch <= r.skip:
		r.err = fmt.Errorf("git diff-tree -p: output ends before the file's patch")
	case r.resp.NextOffset == 0 && !r.resp.Binary && (r.oldLeft > 0 || r.newLeft > 0):
		r.err = fmt.Errorf("git diff-tree -p: output ends inside a hunk")
	}
	return r.err
}
