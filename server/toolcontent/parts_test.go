package toolcontent

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/shared"
)

func TestSmallPartsTravelWhole(t *testing.T) {
	old := "a\nb\n"
	parts := Build([]agent.ToolContent{
		{Type: agent.ToolText, Text: "ok\n"},
		{Type: agent.ToolDiff, Path: "/w/f", OldText: &old, NewText: "a\nc\n"},
		{Type: agent.ToolDiff, Path: "/w/new", NewText: "x"},
		{Type: agent.ToolTerminal, TerminalID: "term-1"},
	})
	require.Len(t, parts, 4)
	w := parts[0].Wire()
	assert.Equal(t, shared.ToolContent{Type: shared.ToolContentText, Body: "ok\n", Size: 3, Lines: 1}, w)
	w = parts[1].Wire()
	assert.Equal(t, "@@ -1,2 +1,2 @@\n a\n-b\n+c\n", w.Body)
	assert.Equal(t, 4, w.Lines)
	assert.Equal(t, 1, w.Added)
	assert.Equal(t, 1, w.Removed)
	assert.False(t, w.NewFile || w.Truncated)
	w = parts[2].Wire()
	assert.True(t, w.NewFile, "no old text: a new file")
	assert.Equal(t, "@@ -0,0 +1,1 @@\n+x\n", w.Body)
	assert.Equal(t, shared.ToolContent{Type: shared.ToolContentTerminal, TerminalID: "term-1"}, parts[3].Wire())
}

func TestALargeTextTravelsAsItsFirstBytes(t *testing.T) {
	text := strings.Repeat("é", 1<<20) // 2 MiB
	p := Build([]agent.ToolContent{{Type: agent.ToolText, Text: text}})[0]
	assert.Equal(t, text, p.Body, "kept whole")
	w := p.Wire()
	assert.True(t, w.Truncated)
	assert.LessOrEqual(t, len(w.Body), shared.ToolTextWireBytes)
	assert.Greater(t, len(w.Body), shared.ToolTextWireBytes-utf8.UTFMax)
	assert.True(t, utf8.ValidString(w.Body), "cut on a character boundary")
	assert.True(t, strings.HasPrefix(text, w.Body))
	assert.Equal(t, len(text), w.Size)
}

func TestALongDiffTravelsAsItsFirstLines(t *testing.T) {
	p := Build([]agent.ToolContent{{Type: agent.ToolDiff, Path: "big", NewText: numbered(5000, func(int) string { return "line" })}})[0]
	w := p.Wire()
	assert.Equal(t, 5001, w.Lines, "a hunk header and 5,000 added lines")
	assert.Equal(t, 5000, w.Added)
	assert.True(t, w.Truncated)
	assert.Equal(t, shared.ToolDiffWireLines, strings.Count(w.Body, "\n"))
	assert.True(t, strings.HasPrefix(p.Body, w.Body))

	wide := Build([]agent.ToolContent{{Type: agent.ToolDiff, Path: "wide", NewText: strings.Repeat("x", 100<<10)}})[0].Wire()
	assert.LessOrEqual(t, len(wide.Body), shared.ToolDiffWireBytes, "a long line is bounded in bytes too")
	assert.True(t, wide.Truncated)
}

func TestACallKeepsAtMostTheStoredBoundAndSaysSo(t *testing.T) {
	big := strings.Repeat("0123456789\n", shared.ToolStoredBytes/11+10)
	parts := Build([]agent.ToolContent{
		{Type: agent.ToolText, Text: "first"},
		{Type: agent.ToolDiff, Path: "huge", NewText: big},
		{Type: agent.ToolText, Text: "after"},
	})
	total := 0
	for _, p := range parts {
		total += len(p.Body)
	}
	assert.LessOrEqual(t, total, shared.ToolStoredBytes)
	assert.False(t, parts[0].Meta.Cut)
	assert.True(t, parts[1].Meta.Cut)
	assert.True(t, strings.HasSuffix(parts[1].Body, "\n"), "a diff is cut at a line's end")
	assert.Equal(t, len(parts[1].Body), parts[1].Meta.Size, "the size is what is kept")
	assert.True(t, parts[2].Meta.Cut)
	assert.Empty(t, parts[2].Body)
}
