package state

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

var taskScope = ReviewKey{TaskID: "t1", RepositoryID: "r1", Scope: shared.ReviewScopeTask}

// filesPage is the answer to a files page of taskScope.
func filesPage(from, to string, offset, total int, more bool, paths ...string) shared.ReviewFilesResponse {
	resp := shared.ReviewFilesResponse{TaskID: "t1", RepositoryID: "r1", Scope: shared.ReviewScopeTask,
		From: from, To: to, Offset: offset, Total: total, Additions: 10 * total, Deletions: total, More: more}
	for _, p := range paths {
		resp.Files = append(resp.Files, shared.ReviewFile{Path: p, Status: shared.FileModified, Additions: 10, Deletions: 1})
	}
	return resp
}

func paths(files []shared.ReviewFile) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Path)
	}
	return out
}

func TestLaterFilesPagesAskForTheFirstPagesTreesFromWhereTheListEnds(t *testing.T) {
	f := NewReviewFiles(taskScope)
	req, t1 := f.First(2)
	assert.Equal(t, shared.ReviewFilesRequest{TaskID: "t1", RepositoryID: "r1", Scope: shared.ReviewScopeTask, Limit: 2}, req,
		"the first page names no trees: the server compares with the working tree as it is now")
	_, _, ok := f.Next(2)
	assert.False(t, ok, "no next page before the first arrived")
	require.True(t, f.Apply(t1, filesPage("A", "B", 0, 3, true, "a.go", "b.go")))

	req, t2, ok := f.Next(2)
	require.True(t, ok)
	assert.Equal(t, "A", req.From)
	assert.Equal(t, "B", req.To)
	assert.Equal(t, 2, req.Offset)
	_, _, again := f.Next(2)
	assert.False(t, again, "one page at a time: a second press asks for nothing more")
	assert.True(t, f.Busy())
	assert.False(t, f.Refreshing(), "a next page continues the listing")

	require.True(t, f.Apply(t2, filesPage("A", "B", 2, 3, false, "c.go")))
	l := f.Listing()
	assert.Equal(t, []string{"a.go", "b.go", "c.go"}, paths(l.Files))
	assert.Equal(t, 3, l.Total)
	assert.False(t, l.More)
	_, _, ok = f.Next(2)
	assert.False(t, ok, "nothing follows the last page")
}

func TestAFilesPageThatDoesNotContinueTheListIsDropped(t *testing.T) {
	tests := []struct {
		name string
		page shared.ReviewFilesResponse
	}{
		{"other trees", filesPage("A", "C", 2, 3, false, "c.go")},
		{"a gap", filesPage("A", "B", 3, 4, false, "d.go")},
		{"a repeat", filesPage("A", "B", 1, 3, true, "b.go")},
		{"another repository", func() shared.ReviewFilesResponse {
			p := filesPage("A", "B", 2, 3, false, "c.go")
			p.RepositoryID = "r2"
			return p
		}()},
		{"another scope", func() shared.ReviewFilesResponse {
			p := filesPage("A", "B", 2, 3, false, "c.go")
			p.Scope = shared.ReviewScopeTurn
			return p
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewReviewFiles(taskScope)
			_, t1 := f.First(2)
			require.True(t, f.Apply(t1, filesPage("A", "B", 0, 3, true, "a.go", "b.go")))
			_, t2, _ := f.Next(2)
			assert.False(t, f.Apply(t2, tt.page))
			assert.Equal(t, []string{"a.go", "b.go"}, paths(f.Listing().Files))
			assert.False(t, f.Busy(), "the request ends rather than stay busy")
			assert.Contains(t, f.Err(), "refresh")
		})
	}
}

func TestARefreshSupersedesThePagesAskedBeforeIt(t *testing.T) {
	f := NewReviewFiles(taskScope)
	_, t1 := f.First(2)
	require.True(t, f.Apply(t1, filesPage("A", "B", 0, 3, true, "a.go", "b.go")))
	_, more, _ := f.Next(2)
	_, refresh := f.First(2)

	assert.False(t, f.Apply(more, filesPage("A", "B", 2, 3, false, "c.go")), "the page of the old comparison comes too late")
	require.True(t, f.Apply(refresh, filesPage("A", "D", 0, 1, false, "z.go")))
	assert.Equal(t, []string{"z.go"}, paths(f.Listing().Files), "the refresh replaced the list")
	assert.Equal(t, "D", f.Listing().To)

	_, older := f.First(2)
	assert.True(t, f.Refreshing())
	_, newer := f.First(2)
	f.Fail(older, "timed out")
	assert.Empty(t, f.Err(), "an older request's failure is not shown")
	assert.True(t, f.Busy())
	f.Fail(newer, "git failed")
	assert.Equal(t, "git failed", f.Err())
	assert.False(t, f.Busy())
	assert.Equal(t, []string{"z.go"}, paths(f.Listing().Files), "a failed refresh keeps what was listed")
}

// filePage is a page of a.go's diff.
func filePage(offset, next int, hunks ...shared.ReviewHunk) shared.ReviewFileResponse {
	return shared.ReviewFileResponse{Path: "a.go", Status: shared.FileModified, OldSize: 100, NewSize: 120,
		Offset: offset, NextOffset: next, Hunks: hunks}
}

func loadedDiff(t *testing.T, hunks ...shared.ReviewHunk) *ReviewDiff {
	t.Helper()
	d := NewReviewDiff(ReviewDiffKey{TaskID: "t1", RepositoryID: "r1", From: "A", To: "B", Path: "a.go"})
	_, tk := d.First(100)
	require.True(t, d.Apply(tk, filePage(0, 0, hunks...)))
	return d
}

// rowsOf shows rows as "mark old new text".
func rowsOf(rows []ReviewLine) []string {
	var out []string
	for _, r := range rows {
		out = append(out, strings.TrimSpace(string(r.Mark)+" "+itoa(r.Old)+" "+itoa(r.New)+" "+r.Text))
	}
	return out
}

func itoa(n int) string {
	if n == 0 {
		return "."
	}
	return strings.TrimSpace(number(n))
}

func TestDiffRowsAreNumberedOnEachSideTheyBelongTo(t *testing.T) {
	d := loadedDiff(t,
		shared.ReviewHunk{Header: "@@ -10,4 +10,4 @@ func main() {", OldStart: 10, NewStart: 10,
			Lines: []string{" ctx := x", "-run(ctx)", "+if err := run(ctx); err != nil {", " }", "\\ No newline at end of file"}},
		shared.ReviewHunk{Header: "@@ -40 +40,2 @@", OldStart: 40, NewStart: 40, Lines: []string{"+a", "+b", " c"}},
	)
	assert.Equal(t, []string{
		"@ . . @@ -10,4 +10,4 @@ func main() {",
		"10 10 ctx := x",
		"- 11 . run(ctx)",
		"+ . 11 if err := run(ctx); err != nil {",
		"12 12 }",
		`\ . .  No newline at end of file`,
		"@ . . @@ -40 +40,2 @@",
		"+ . 40 a",
		"+ . 41 b",
		"40 42 c",
	}, rowsOf(d.Lines()))
	assert.Equal(t, 1, d.Lines()[9].Hunk)
	assert.False(t, d.More())
}

func TestADiffPagedInContinuesItsHunkWithoutASecondHeader(t *testing.T) {
	d := NewReviewDiff(ReviewDiffKey{TaskID: "t1", RepositoryID: "r1", From: "A", To: "B", Path: "a.go"})
	req, t1 := d.First(3)
	assert.Equal(t, shared.ReviewFileRequest{TaskID: "t1", RepositoryID: "r1", From: "A", To: "B", Path: "a.go", Limit: 3}, req)
	require.True(t, d.Apply(t1, filePage(0, 3, shared.ReviewHunk{Header: "@@ -1,3 +1,5 @@", OldStart: 1, NewStart: 1, Lines: []string{" a", "+b", "+c"}})))
	assert.True(t, d.More())

	req, t2, ok := d.Next(3)
	require.True(t, ok)
	assert.Equal(t, 3, req.Offset)
	_, _, again := d.Next(3)
	assert.False(t, again, "one page at a time")
	assert.False(t, d.Apply(t2, filePage(5, 0)), "a page that does not start where the rows end is dropped")
	assert.False(t, d.Busy(), "and the request ends, with the reason, rather than stay busy")
	assert.Contains(t, d.Err(), "refresh")
	assert.Len(t, d.Lines(), 4, "what was shown stays")

	_, t2, ok = d.Next(3)
	require.True(t, ok, "asked again")
	require.True(t, d.Apply(t2, filePage(3, 0, shared.ReviewHunk{Header: "@@ -1,3 +1,5 @@", OldStart: 2, NewStart: 4, Continued: true, Lines: []string{"+d", " e", "-f"}})))
	assert.Equal(t, []string{"@ . . @@ -1,3 +1,5 @@", "1 1 a", "+ . 2 b", "+ . 3 c", "+ . 4 d", "2 5 e", "- 3 . f"}, rowsOf(d.Lines()))
	for _, r := range d.Lines() {
		assert.Zero(t, r.Hunk, "one hunk across the pages")
	}
	assert.False(t, d.More())
	_, _, ok = d.Next(3)
	assert.False(t, ok, "the diff is whole")
}

func TestADiffAnswerForAnotherFileOrAnOlderRequestIsDropped(t *testing.T) {
	d := NewReviewDiff(ReviewDiffKey{Path: "a.go"})
	_, older := d.First(10)
	_, newer := d.First(10)
	assert.False(t, d.Apply(older, filePage(0, 0)), "an older request's answer")
	assert.True(t, d.Busy(), "leaves the newer one in flight")
	assert.True(t, d.Apply(newer, filePage(0, 0, shared.ReviewHunk{Header: "@@ -1 +1 @@", OldStart: 1, NewStart: 1, Lines: []string{"-x", "+y"}})))
	assert.Len(t, d.Lines(), 3)

	_, again := d.First(10)
	other := filePage(0, 0)
	other.Path = "b.go"
	assert.False(t, d.Apply(again, other), "another file's diff")
	assert.NotEmpty(t, d.Err())
	assert.Len(t, d.Lines(), 3)
}

func TestABinaryOrTooLargeFileIsNamedWithItsSizes(t *testing.T) {
	d := NewReviewDiff(ReviewDiffKey{Path: "a.go"})
	_, tk := d.First(10)
	resp := filePage(0, 0)
	resp.TooLarge, resp.OldSize, resp.NewSize = true, 9<<20, 10<<20
	require.True(t, d.Apply(tk, resp))
	assert.True(t, d.File().TooLarge)
	assert.Equal(t, int64(10<<20), d.File().NewSize)
	assert.Empty(t, d.Lines())
}

func TestALineCutOnTheWireIsMarked(t *testing.T) {
	long := "+" + strings.Repeat("x", shared.MaxReviewLineBytes-1)
	d := loadedDiff(t, shared.ReviewHunk{Header: "@@ -1 +1,2 @@", OldStart: 1, NewStart: 1, Cut: true, Lines: []string{long, "+short"}})
	assert.True(t, d.Lines()[1].Cut)
	assert.False(t, d.Lines()[2].Cut)
}

// twoHunks is a diff of two hunks: rows 1–5 and 7–8.
func twoHunks(t *testing.T) *ReviewDiff {
	return loadedDiff(t,
		shared.ReviewHunk{Header: "@@ -1,3 +1,3 @@", OldStart: 1, NewStart: 1, Lines: []string{" a", "-b", "+B", " c", "\\ No newline at end of file"}},
		shared.ReviewHunk{Header: "@@ -9 +9,2 @@", OldStart: 9, NewStart: 9, Lines: []string{"+x", " y"}},
	)
}

func TestClickingLineNumbersSelectsALineAndShiftClickARangeInItsHunk(t *testing.T) {
	d := twoHunks(t)
	var s LineSelection
	s = d.Click(s, 0, false)
	assert.False(t, s.Set, "a hunk's header is not a line")
	s = d.Click(s, 2, false)
	assert.Equal(t, LineSelection{Anchor: 2, Head: 2, Set: true}, s)
	s = d.Click(s, 4, true)
	first, last := s.Bounds()
	assert.Equal(t, [2]int{2, 4}, [2]int{first, last})
	s = d.Click(s, 1, true)
	first, last = s.Bounds()
	assert.Equal(t, [2]int{1, 2}, [2]int{first, last}, "the anchor stays; the range follows the last click")
	assert.True(t, s.Has(1) && s.Has(2) && !s.Has(3))

	s = d.Click(s, 8, true)
	assert.Equal(t, LineSelection{Anchor: 8, Head: 8, Set: true}, s, "a range stays in one hunk: another hunk's line starts anew")
	s = d.Click(s, 5, false)
	assert.Equal(t, LineSelection{Anchor: 8, Head: 8, Set: true}, s, "git's note is not a line")
	s = d.Click(s, 8, false)
	assert.False(t, s.Set, "clicking the one line selected clears it")
}

func TestASecondTapExtendsAndATapAfterARangeStartsAnew(t *testing.T) {
	d := twoHunks(t)
	s := d.Tap(LineSelection{}, 1)
	s = d.Tap(s, 3)
	first, last := s.Bounds()
	assert.Equal(t, [2]int{1, 3}, [2]int{first, last})
	s = d.Tap(s, 2)
	assert.Equal(t, LineSelection{Anchor: 2, Head: 2, Set: true}, s)
	assert.False(t, d.Tap(s, 2).Set, "a tap on the one line selected clears it")
}

func TestACommentQuotesItsRowsWithTheirMarksOnTheSideTheyHold(t *testing.T) {
	d := twoHunks(t)
	tests := []struct {
		name        string
		first, last int
		want        shared.ReviewComment
	}{
		{"a changed line pair is on the new side", 2, 3,
			shared.ReviewComment{Path: "a.go", Side: shared.SideNew, StartLine: 2, EndLine: 2, Code: "-b\n+B"}},
		{"a removed line alone is on the old side", 2, 2,
			shared.ReviewComment{Path: "a.go", Side: shared.SideOld, StartLine: 2, EndLine: 2, Code: "-b"}},
		{"context and additions", 1, 4,
			shared.ReviewComment{Path: "a.go", Side: shared.SideNew, StartLine: 1, EndLine: 3, Code: " a\n-b\n+B\n c"}},
		{"git's note is quoted, not numbered", 4, 5,
			shared.ReviewComment{Path: "a.go", Side: shared.SideNew, StartLine: 3, EndLine: 3, Code: " c\n\\ No newline at end of file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := d.Comment(tt.first, tt.last)
			require.True(t, ok)
			assert.Equal(t, tt.want, c)
		})
	}
	_, ok := d.Comment(5, 6)
	assert.False(t, ok, "no numbered line in the range")

	c, _ := d.Comment(2, 3)
	row, ok := d.Row(c)
	assert.True(t, ok)
	assert.Equal(t, 3, row, "a comment shows after its last line on its side")
	c, _ = d.Comment(2, 2)
	row, _ = d.Row(c)
	assert.Equal(t, 2, row, "an old-side comment finds its removed line")
	_, ok = d.Row(shared.ReviewComment{Path: "b.go", Side: shared.SideNew, StartLine: 1, EndLine: 1})
	assert.False(t, ok, "another file's comment has no row here")
}

func TestALongQuoteKeepsWholeLinesAndCountsTheRest(t *testing.T) {
	line := "+" + strings.Repeat("y", 99)
	lines := make([]string, 50)
	for i := range lines {
		lines[i] = line
	}
	q := Quote(lines, shared.MaxReviewQuoteBytes)
	assert.LessOrEqual(t, len(q), shared.MaxReviewQuoteBytes)
	kept := strings.Split(q, "\n")
	require.Len(t, kept, 21, "20 lines of 100 bytes and the note fit 2 KiB")
	assert.Equal(t, "… 30 more lines", kept[20])
	for _, l := range kept[:len(kept)-1] {
		assert.Equal(t, line, l)
	}

	huge := "+" + strings.Repeat("é", shared.MaxReviewQuoteBytes)
	q = Quote([]string{huge, "+next"}, shared.MaxReviewQuoteBytes)
	assert.LessOrEqual(t, len(q), shared.MaxReviewQuoteBytes)
	assert.True(t, strings.HasSuffix(q, " (cut)\n… 1 more line"), q[len(q)-40:])
	assert.True(t, strings.HasPrefix(q, "+éé"))
	assert.NotContains(t, q, "\uFFFD")
	assert.Equal(t, "+a\n-b", Quote([]string{"+a", "-b"}, 5), "what fits is quoted whole")
}
