package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// The configuration browser tests change an agent's settings from the
// session header at the desktop and the phone viewport.

// chooseConfig picks value in the select of option, as a person's pick
// does: the value changes and a change event follows.
func chooseConfig(option, value string) chromedp.Action[chromedp.Void] {
	return runJS(fmt.Sprintf(`(() => { const s = document.querySelector('#config-%s');
  s.value = %s; s.dispatchEvent(new Event('change', {bubbles: true})); })()`, option, jsString(value)))
}

// configShows is true once option's control shows value and takes input.
func configShows(option, value string) string {
	return fmt.Sprintf(`(() => { const s = document.querySelector('#config-%s'); return !!s && !s.disabled && s.value === %s; })()`,
		option, jsString(value))
}

// watchModelSelector records, from now on, whether the model selector
// ever left the page.
const watchModelSelector = `(() => { window.__modelLost = false;
  new MutationObserver(() => { if (!document.querySelector('#config-model')) window.__modelLost = true; })
    .observe(document.body, {childList: true, subtree: true}); })()`

// Spec 003: with many background sessions streaming, the selected session
// keeps its model selector while its agent publishes its configuration,
// and a model change and a follow-up message succeed.
func TestBrowserModelSelectorStaysWhileTwentySessionsStreamAndAChangeAndAFollowUpSucceed(t *testing.T) {
	atEveryViewport(t, func(t *testing.T, v viewport) {
		ch := openChat(t, v, "Chooses a model", "config-busy")
		c, sessionID, p := ch.c, ch.sessionID, ch.p
		ws := c.call("task.get", map[string]any{"task_id": ch.taskID})["workspace_id"].(string)
		p.do(waitJS(configShows("model", "mock-fast")), waitJS(configShows("mode", "ask")), runJS(watchModelSelector))

		for i := range 20 {
			other := c.mockSession(c.task(ws, fmt.Sprintf("Background %02d", i)))
			// Long enough to outlast the test: they stream until the
			// server stops.
			c.prompt(other, "/scenario stream 1000000 10")
		}
		// The selected agent changes its own mode while the others stream
		// (config_option_update), as an agent leaving plan mode does.
		c.prompt(sessionID, "/scenario set-config mode plan")
		p.do(waitJS(agentSaidPrefix("set mode=plan")), waitJS(configShows("mode", "plan")))
		p.screenshot("busy")

		p.do(chooseConfig("model", "mock-smart"), waitJS(configShows("model", "mock-smart")))
		p.do(
			typeInto("#composer-input", "/scenario config"),
			p.submitComposer(),
			waitJS(agentSaidPrefix("mode=plan model=mock-smart thinking=false")),
		)
		require.False(t, evalOn[bool](p, `window.__modelLost`), "the model selector stayed throughout")
		require.Zero(t, evalOn[int](p, `document.querySelectorAll('#config-error').length`))
		// Only the background tasks count: the selected one may still be
		// settling its last turn.
		streaming := 0
		for _, s := range c.call("task.list", map[string]any{"workspace_id": ws})["tasks"].([]any) {
			task := s.(map[string]any)
			sum := task["status_summary"].(map[string]any)
			if strings.HasPrefix(task["title"].(string), "Background ") && sum["foreground_activity"] == "generating" {
				streaming++
			}
		}
		require.Equal(t, 20, streaming, "the background sessions were still streaming")
		p.screenshot("changed")

		// The choice outlives a reload.
		p.do(chromedp.Reload(), waitReady(), waitJS(sessionShown(sessionID)), waitJS(configShows("model", "mock-smart")))
	})
}

// A change the agent refuses is said in its words, and the selector goes
// back to the value in force; a yes/no option is a switch.
func TestBrowserARefusedChangeIsSaidAndTheSelectorGoesBack(t *testing.T) {
	atEveryViewport(t, func(t *testing.T, v viewport) {
		ch := openChat(t, v, "Refuses a change", "config-refused")
		c, sessionID, p := ch.c, ch.sessionID, ch.p
		p.do(waitJS(configShows("model", "mock-fast")))

		// The mock's rule: no model change while a turn runs.
		c.prompt(sessionID, "/scenario stream 400 20")
		p.do(
			waitJS(`document.querySelector('.message[data-type="agent"][data-status="streaming"]') !== null`),
			chooseConfig("model", "mock-smart"),
			waitJS(`(document.querySelector('#config-error') || {}).textContent?.includes('the model cannot change while a turn runs')`),
			waitJS(configShows("model", "mock-fast")),
		)
		p.screenshot("refused")

		p.do(
			chromedp.Click(chromedp.CSS("#config-thinking")),
			waitJS(`(() => { const s = document.querySelector('#config-thinking'); return s.checked && !s.disabled; })()`),
			waitJS(`document.querySelector('.message[data-type="agent"][data-status="complete"]') !== null`),
			typeInto("#composer-input", "/scenario config"),
			p.submitComposer(),
			waitJS(agentSaidPrefix("mode=ask model=mock-fast thinking=true")),
		)
	})
}
