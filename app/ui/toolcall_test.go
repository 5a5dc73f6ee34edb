package ui

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/herd-dev/herd/shared"
)

func toolMessage(meta shared.MessageMetadata) shared.Message {
	return shared.Message{ID: "t1", Seq: 1, Type: shared.MessageToolCall, Status: shared.MessageComplete, Content: "Edit notes.txt", Metadata: &meta}
}

// partOf returns the start tag of the element of part i.
func partOf(t *testing.T, markup string, i int) string {
	t.Helper()
	m := regexp.MustCompile(`<div\b[^>]*data-part="` + string(rune('0'+i)) + `"[^>]*>`).FindString(markup)
	if m == "" {
		t.Fatalf("no part %d", i)
	}
	return m
}

func TestAToolCallShowsItsKindLocationsAndADiff(t *testing.T) {
	markup := paneHTML(openView(shared.SessionWaitingForInput, toolMessage(shared.MessageMetadata{
		Kind:      "edit",
		Locations: []shared.ToolLocation{{Path: "/w/notes.txt", Line: 1}},
		Content: []shared.ToolContent{{Type: shared.ToolContentDiff, Path: "/w/notes.txt", Added: 2, Removed: 1, Lines: 6, Size: 50,
			Body: "@@ -1,3 +1,4 @@\n one\n-two\n+2\n+and a half\n three\n"}},
	})))
	assert.Contains(t, markup, `>Edit</span>`)
	assert.Contains(t, markup, ">/w/notes.txt:1</li>")
	assert.Regexp(t, `data-open[ >]`, partOf(t, markup, 0), "a short diff starts open (true renders bare here)")
	assert.Contains(t, markup, `<span class="diff-text">2
and a half
</span>`, "the added lines are one run")
	assert.Contains(t, markup, `class="diff-run diff-removed"`)
	assert.Contains(t, markup, `>        2
        3
</span>`, "its new line numbers beside it")
	assert.Contains(t, markup, ">+2</span>")
	assert.NotContains(t, markup, "Show all", "nothing was cut")
}

func TestALongDiffStartsCollapsedAndATruncatedOutputOffersTheRest(t *testing.T) {
	body := "@@ -0,0 +1,5000 @@\n" + strings.Repeat("+x\n", 79)
	markup := paneHTML(openView(shared.SessionWaitingForInput, toolMessage(shared.MessageMetadata{
		Kind: "execute",
		Content: []shared.ToolContent{
			{Type: shared.ToolContentDiff, Path: "big.txt", NewFile: true, Added: 5000, Lines: 5001, Size: 15019, Truncated: true, Body: body},
			{Type: shared.ToolContentText, Body: "000000 build\n", Size: 1_000_000, Lines: 16000, Truncated: true},
			{Type: shared.ToolContentText, Body: "kept", Size: 4, Cut: true},
		},
	})))
	assert.Contains(t, partOf(t, markup, 0), `data-open="false"`, "past the collapse bound")
	assert.Contains(t, markup, ">new file</span>")
	assert.NotContains(t, markup, "diff-run", "a collapsed diff renders no lines")
	assert.Contains(t, markup, `<pre class="tool-output">000000 build`)
	assert.Contains(t, markup, "Showing 13 bytes of 977 KB.")
	assert.Equal(t, 1, strings.Count(markup, ">Show all</button>"), "the output's; the collapsed diff offers its own once open")
	assert.Contains(t, markup, "the rest was not kept", "a part the server cut says so")
	assert.Contains(t, markup, `>Run</span>`)
}

func TestAnExpandedLongDiffShowsItsFirstLinesAndOffersTheRest(t *testing.T) {
	v := openView(shared.SessionWaitingForInput, toolMessage(shared.MessageMetadata{
		Content: []shared.ToolContent{{Type: shared.ToolContentDiff, Path: "big.txt", NewFile: true, Added: 5000, Lines: 5001, Size: 15019, Truncated: true,
			Body: "@@ -0,0 +1,5000 @@\n" + strings.Repeat("+x\n", 79)}},
	}))
	v.tools.SetExpanded("t1", 0, true)
	markup := paneHTML(v)
	assert.Equal(t, 2, strings.Count(markup, `class="diff-run`), "the hunk header and one run of 79 added lines")
	assert.Contains(t, markup, "Showing 80 of 5001 lines.")
	assert.Contains(t, markup, ">Show all</button>")
	assert.Regexp(t, `aria-expanded[ >]`, markup)
}

func TestAFetchedPartShowsWhole(t *testing.T) {
	v := openView(shared.SessionWaitingForInput, toolMessage(shared.MessageMetadata{
		Content: []shared.ToolContent{{Type: shared.ToolContentText, Body: "first ", Size: 12, Truncated: true}},
	}))
	v.tools.Start("t1", 0)
	assert.Contains(t, paneHTML(v), "Loading…")
	v.tools.Done("t1", 0, "first second", nil)
	markup := paneHTML(v)
	assert.Contains(t, markup, ">first second</pre>")
	assert.NotContains(t, markup, "Show all")
}
