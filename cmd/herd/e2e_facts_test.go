package main

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"
)

// The facts browser test walks what an agent says about its session
// besides the transcript, at the desktop and the phone viewport: the
// slash commands the composer completes (by keyboard and by tap), the
// context bar and cost in the session header, the title on the session's
// tab, the cost on the task's row and the workspace total in the switcher.

// commandNames is a JavaScript expression for the names the completion
// lists, in order, joined by spaces.
const commandNames = `[...document.querySelectorAll('#command-list [role="option"]')].map(e => e.dataset.command).join(' ')`

// composerValue is the prompt box's text.
const composerValue = `document.querySelector('#composer-input').value`

// clearComposer empties the prompt box as deleting its text would.
func clearComposer() chromedp.Action[chromedp.Void] {
	return runJS(`(() => { const e = document.querySelector('#composer-input'); e.value = ''; e.dispatchEvent(new Event('input', {bubbles: true})); })()`)
}

func TestBrowserSessionFactsCommandsUsageCostAndTitle(t *testing.T) {
	atEveryViewport(t, func(t *testing.T, v viewport) {
		srv := startStatusServer(t, "127.0.0.1:0", t.TempDir())
		c := MustDialTest(t, srv)
		ws := c.workspace("Facts")
		other := c.task(ws, "Cheap task")
		otherSession := c.mockSession(other)
		c.prompt(otherSession, "/scenario facts 1000 200000 0.08")
		taskID := c.task(ws, "Costs money")
		sessionID := c.mockSession(taskID)
		p := openTaskAt(t, v, srv.Addr(), taskID, sessionID, "facts")

		c.prompt(sessionID, "/scenario facts")
		p.do(
			waitJS(agentSaid("facts reported")),
			waitJS(textOf(`.session-tab[aria-current="page"]`)+`.startsWith('Facts from the mock agent · ')`),
			waitJS(textOf(`#context-bar .context-label`)+` === 'context 42% · 84k of 200k tokens'`),
			waitJS(`document.querySelector('#context-bar').getAttribute('aria-valuenow') === '42'`),
			waitJS(textOf(`#session-cost`)+` === '$0.42'`),
		)
		require.Equal(t, "42%", evalOn[string](p, `document.querySelector('#context-bar .context-fill').style.width`), "the bar fills to the share used")
		p.showRows()
		p.do(
			waitJS(textOf(p.row(taskID)+` .row-cost`)+` === '$0.42'`),
			waitJS(textOf(p.row(other)+` .row-cost`)+` === '$0.08'`),
			waitJS(textOf(p.scope()+` #workspace-cost`)+` === '$0.50'`),
		)
		p.screenshot("facts-rows")
		p.hideRows()
		p.screenshot("facts-header")

		// By keyboard: "/" lists every command, typing filters by name and
		// description, ↓ moves, Enter picks and shows the argument hint.
		p.do(
			chromedp.Click(chromedp.CSS("#composer-input")),
			typeInto("#composer-input", "/"),
			waitJS(commandNames+` === 'review compact debug'`),
			waitJS(`document.querySelector('#composer-input').getAttribute('aria-expanded') === 'true'`),
			typeInto("#composer-input", "re"),
			waitJS(commandNames+` === 'review debug'`),
		)
		p.screenshot("completion-open")
		p.do(
			chromedp.KeyEvent(kb.ArrowDown),
			waitJS(`document.querySelector('#composer-input').getAttribute('aria-activedescendant') === 'command-option-1'`),
			waitJS(`document.querySelector('#command-option-1').getAttribute('aria-selected') === 'true'`),
			pressEnter(),
			waitJS(composerValue+` === '/debug '`),

			waitJS(`document.querySelector('#command-list') === null`),
			waitJS(textOf(`#command-hint`)+` === '/debug [issue description]'`),
		)
		p.screenshot("completion-picked")
		p.do(
			typeInto("#composer-input", "it broke"),
			p.submitComposer(),
			waitJS(agentSaid("/debug it broke")), // the mock echoes the ordinary text it was sent
		)
		require.Equal(t, 1, evalOn[int](p, userMessages("/debug it broke")), "the command went as one ordinary prompt")

		// Escape closes the list, typing opens it again; Tab picks.
		p.do(
			typeInto("#composer-input", "/c"),
			waitJS(commandNames+` === 'compact review debug'`), // "changes", "current"
			typeInto("#composer-input", "o"),
			waitJS(commandNames+` === 'compact'`),
			chromedp.KeyEvent(kb.Escape),
			waitJS(`document.querySelector('#command-list') === null`),
			waitJS(composerValue+` === '/co'`),
			typeInto("#composer-input", "m"),
			waitJS(commandNames+` === 'compact'`),
			chromedp.KeyEvent(kb.Tab),
			waitJS(composerValue+` === '/compact '`),
			waitJS(`document.activeElement.id === 'composer-input'`),
			clearComposer(),
		)

		// By tap (a click on a desktop): the option is picked, the list
		// closes and the command's hint shows.
		p.do(
			typeInto("#composer-input", "/"),
			waitJS(commandNames+` === 'review compact debug'`),
			chromedp.Click(chromedp.CSS(`#command-list [data-command="review"]`)),
			waitJS(composerValue+` === '/review '`),
			waitJS(`document.querySelector('#command-list') === null`),
			clearComposer(),
		)

		// A reload shows the same facts: they are stored on the session.
		p.do(
			chromedp.Reload(), waitReady(), waitJS(sessionShown(sessionID)),
			waitJS(textOf(`.session-tab[aria-current="page"]`)+`.startsWith('Facts from the mock agent · ')`),
			waitJS(textOf(`#context-bar .context-label`)+` === 'context 42% · 84k of 200k tokens'`),
			waitJS(textOf(`#session-cost`)+` === '$0.42'`),
			chromedp.Click(chromedp.CSS("#composer-input")),
			typeInto("#composer-input", "/"),
			waitJS(commandNames+` === 'review compact debug'`),
		)
		p.screenshot("after-reload")
	})
}
