package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tool call browser tests show what a tool call reports, at the
// desktop and the phone viewport: a real Claude Edit's diff, a long diff
// that starts collapsed and opens, and command output cut on the wire
// whose "Show all" fetches the rest.

// diffLines counts the lines a diff part shows.
func diffLines(part string) string {
	return `[...` + part + `.querySelectorAll('.diff-run')].reduce((n, r) => n + Number(r.dataset.lines), 0)`
}

// toolCard is the selector of the card of the completed tool call whose
// title starts with title.
func toolCard(title string) string {
	return fmt.Sprintf(`[...document.querySelectorAll('.message[data-type="tool_call"][data-status="complete"]')].find(m => m.querySelector('.tool-name').textContent.startsWith(%s))`, jsString(title))
}

func TestBrowserToolCallsShowDiffsAndOutputWithShowAll(t *testing.T) {
	atEveryViewport(t, func(t *testing.T, v viewport) {
		ch := openChat(t, v, "Edits files", "tool-calls")
		c, sessionID, p := ch.c, ch.sessionID, ch.p

		// The real adapter's Write (a new file) and Edit, replayed.
		c.prompt(sessionID, "/scenario claude-replay edit")
		edit := toolCard("Edit /")
		p.do(waitJS(`!!(` + edit + `)`))
		runs := evalOn[[]string](p, `[...(`+edit+`).querySelectorAll('.diff-run')].map(r => r.className.replace('diff-run ', '') + ':' + r.querySelector('.diff-text').textContent)`)
		assert.Equal(t, []string{"diff-hunk:@@ -1,3 +1,4 @@\n", "diff-context:one\n", "diff-removed:two\n", "diff-added:2\nand a half\n", "diff-context:three\n"}, runs)
		assert.Equal(t, "true", evalOn[string](p, `(`+edit+`).querySelector('.tool-diff').dataset.open`), "a short diff is open")
		assert.Contains(t, evalOn[string](p, `(`+edit+`).querySelector('.tool-location').textContent`), "notes.txt:1")
		assert.Equal(t, "new file", evalOn[string](p, `(`+toolCard("Write /")+`).querySelector('.diff-new').textContent`))
		p.do(runJS(`(` + edit + `).scrollIntoView()`))
		p.screenshot("claude-edit")

		// A long diff starts collapsed, shows its first lines when opened,
		// and all of them after "Show all".
		c.prompt(sessionID, "/scenario tool-diff 300")
		diff := `(` + toolCard("Edit big.txt") + `).querySelector('.tool-diff[data-part="0"]')`
		p.do(waitJS(`!!(` + toolCard("Edit big.txt") + `)`))
		require.Equal(t, "false", evalOn[string](p, diff+`.dataset.open`), "300 lines start collapsed")
		require.Zero(t, evalOn[int](p, diffLines(diff)), "and render no lines")
		p.do(runJS(diff+`.scrollIntoView()`), runJS(diff+`.querySelector('.diff-head').click()`))
		p.do(waitJS(diff + `.dataset.open === 'true'`))
		assert.Equal(t, 80, evalOn[int](p, diffLines(diff)), "the wire's 80 lines")
		p.screenshot("diff-opened")
		p.do(runJS(diff + `.querySelector('.tool-show-all').click()`))
		p.do(
			waitJS(diffLines(diff)+` === 301`),
			waitJS(diff+`.querySelector('.tool-show-all') === null`),
		)
		assert.True(t, evalOn[bool](p, `[...`+diff+`.querySelectorAll('.diff-text')].pop().textContent.endsWith('line 300 of a generated file\n')`))
		p.do(runJS(diff + `.querySelector('.diff-head').click()`))
		p.do(waitJS(diffLines(diff) + ` === 0`))
		p.screenshot("diff-collapsed-again")

		// Command output: its first 8 KiB, then all 200,000 bytes.
		c.prompt(sessionID, "/scenario tool-output 200000 3")
		out := `(` + toolCard("Run make build") + `)`
		p.do(waitJS(`!!` + out))
		shown := evalOn[int](p, out+`.querySelector('.tool-output').textContent.length`)
		assert.LessOrEqual(t, shown, 8192)
		assert.Contains(t, evalOn[string](p, out+`.querySelector('.tool-truncated').textContent`), "of 195 KB")
		p.do(runJS(out + `.scrollIntoView()`))
		p.screenshot("output-truncated")
		p.do(
			runJS(out+`.querySelector('.tool-show-all').click()`),
			waitJSWithin(out+`.querySelector('.tool-output').textContent.length === 200000`, 20*time.Second),
		)
		assert.True(t, evalOn[bool](p, out+`.querySelector('.tool-show-all') === null`))
		assert.Greater(t, evalOn[int](p, out+`.querySelector('.tool-output').scrollHeight`),
			evalOn[int](p, out+`.querySelector('.tool-output').clientHeight`), "the output scrolls inside its box")
		p.screenshot("output-all")
	})
}
