package state

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

func TestDiffLinesAreNumberedOnBothSides(t *testing.T) {
	lines := DiffLines("@@ -1,3 +1,4 @@\n one\n-two\n+2\n+and a half\n three\n")
	require.Len(t, lines, 6)
	assert.Equal(t, DiffLine{Kind: DiffHunk, Text: "@@ -1,3 +1,4 @@"}, lines[0])
	assert.Equal(t, DiffLine{Kind: DiffContext, Old: 1, New: 1, Text: "one"}, lines[1])
	assert.Equal(t, DiffLine{Kind: DiffRemoved, Old: 2, Text: "two"}, lines[2])
	assert.Equal(t, DiffLine{Kind: DiffAdded, New: 2, Text: "2"}, lines[3])
	assert.Equal(t, DiffLine{Kind: DiffAdded, New: 3, Text: "and a half"}, lines[4])
	assert.Equal(t, DiffLine{Kind: DiffContext, Old: 3, New: 4, Text: "three"}, lines[5])

	created := DiffLines("@@ -0,0 +1,2 @@\n+a\n+b\n")
	assert.Equal(t, 1, created[1].New)
	assert.Equal(t, 2, created[2].New)
	assert.Empty(t, DiffLines(""))
	odd := DiffLines("@@ garbage\n?what\n")
	assert.Equal(t, DiffLine{Kind: DiffContext, Text: "?what"}, odd[1], "unknown lines show whole, as context")
}

func TestAFetchedBodyShowsOnlyForThePartItWasFetchedFor(t *testing.T) {
	f := NewToolFetches()
	part := shared.ToolContent{Type: shared.ToolContentText, Body: "abc", Size: 6, Truncated: true}
	body, whole := f.Body("m", 0, part)
	assert.Equal(t, "abc", body)
	assert.False(t, whole)

	rev := f.Rev("m")
	require.True(t, f.Start("m", 0))
	assert.False(t, f.Start("m", 0), "one fetch at a time")
	assert.True(t, f.Busy("m", 0))
	assert.NotEqual(t, rev, f.Rev("m"))
	f.Done("m", 0, "abcdef", nil)
	assert.False(t, f.Busy("m", 0))
	body, whole = f.Body("m", 0, part)
	assert.Equal(t, "abcdef", body)
	assert.True(t, whole)

	grown := part
	grown.Size = 9
	body, whole = f.Body("m", 0, grown)
	assert.Equal(t, "abc", body, "the part grew since: its first bytes again")
	assert.False(t, whole)
	other := part
	other.Body = "xyz"
	body, _ = f.Body("m", 0, other)
	assert.Equal(t, "xyz", body, "the part was replaced")

	require.True(t, f.Start("m", 1))
	f.Done("m", 1, "", errors.New("not_found: gone"))
	assert.Equal(t, "not_found: gone", f.Err("m", 1))
	assert.True(t, f.Start("m", 1), "a failed fetch can be tried again")
	assert.Empty(t, f.Err("m", 1))

	small := shared.ToolContent{Body: "all", Size: 3}
	body, whole = f.Body("n", 0, small)
	assert.Equal(t, "all", body)
	assert.True(t, whole, "an untruncated part is whole as it is")
}

func TestFetchedBodiesAreBoundedToTheNewestCalls(t *testing.T) {
	f := NewToolFetches()
	part := shared.ToolContent{Body: "a", Size: 2, Truncated: true}
	for i := range maxFetchedTools + 1 {
		id := fmt.Sprint("m", i)
		f.Start(id, 0)
		f.Done(id, 0, "ab", nil)
	}
	_, whole := f.Body("m0", 0, part)
	assert.False(t, whole, "the call fetched longest ago was dropped")
	_, whole = f.Body(fmt.Sprint("m", maxFetchedTools), 0, part)
	assert.True(t, whole)
}

func TestALongDiffStartsCollapsedUntilThePersonChooses(t *testing.T) {
	f := NewToolFetches()
	short := shared.ToolContent{Type: shared.ToolContentDiff, Lines: DiffCollapseLines}
	long := shared.ToolContent{Type: shared.ToolContentDiff, Lines: DiffCollapseLines + 1}
	assert.True(t, f.Expanded("m", 0, short))
	assert.False(t, f.Expanded("m", 1, long))
	rev := f.Rev("m")
	f.SetExpanded("m", 1, true)
	assert.True(t, f.Expanded("m", 1, long))
	assert.NotEqual(t, rev, f.Rev("m"), "the card re-renders")
	f.SetExpanded("m", 0, false)
	assert.False(t, f.Expanded("m", 0, short), "a short diff the person closed stays closed")
}

func TestDiffRunsGroupLinesOfOneKind(t *testing.T) {
	runs := DiffRuns(DiffLines("@@ -1,3 +1,4 @@\n one\n-two\n+2\n+and a half\n three\n@@ -9,1 +10,1 @@\n-x\n"))
	require.Len(t, runs, 7)
	assert.Equal(t, DiffRun{Kind: DiffHunk, Text: "@@ -1,3 +1,4 @@\n", Lines: 1}, runs[0])
	assert.Equal(t, DiffRun{Kind: DiffContext, Gutter: "   1    1\n", Text: "one\n", Lines: 1}, runs[1])
	assert.Equal(t, DiffRun{Kind: DiffRemoved, Gutter: "   2     \n", Text: "two\n", Lines: 1}, runs[2])
	assert.Equal(t, DiffRun{Kind: DiffAdded, Gutter: "        2\n        3\n", Text: "2\nand a half\n", Lines: 2}, runs[3])
	assert.Equal(t, DiffHunk, runs[5].Kind, "a hunk header starts a run of its own")
	assert.Equal(t, "x\n", runs[6].Text)
	assert.Empty(t, DiffRuns(nil))
}

func TestTextChunksCutAtLineBreaksAndJoinToTheText(t *testing.T) {
	lines := strings.Repeat("0123456789 héllo\n", 5000)
	chunks := TextChunks(lines, 1024)
	if strings.Join(chunks, "") != lines {
		t.Fatal("the pieces do not join to the text")
	}
	for i, c := range chunks {
		if len(c) > 1024 || !utf8.ValidString(c) {
			t.Fatalf("piece %d: %d bytes, valid %v", i, len(c), utf8.ValidString(c))
		}
		if i < len(chunks)-1 && !strings.HasSuffix(c, "\n") {
			t.Fatalf("piece %d does not end at a line break", i)
		}
	}
	// One long line is cut on character boundaries.
	long := strings.Repeat("é", 3000)
	pieces := TextChunks(long, 1001)
	if strings.Join(pieces, "") != long || len(pieces) != 6 {
		t.Fatalf("%d pieces", len(pieces))
	}
	for _, p := range pieces {
		if !utf8.ValidString(p) {
			t.Fatal("a piece cut a character")
		}
	}
	if got := TextChunks("short", 1024); len(got) != 1 || got[0] != "short" {
		t.Fatalf("short text = %q", got)
	}
	if got := TextChunks("€", 2); strings.Join(got, "") != "€" {
		t.Fatalf("a bound below one character = %q", got)
	}
}
