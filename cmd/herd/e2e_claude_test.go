package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/device"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server"
	"github.com/herd-dev/herd/server/agent/adaptertest"
	"github.com/herd-dev/herd/server/agent/anthropictest"
	"github.com/herd-dev/herd/server/agent/claudetest"
)

// A person who installed the adapters (`make adapters`) and gave herd a
// model endpoint in its environment, as the README says, starts the
// built-in Claude Code profile from the web app and talks to the real
// Claude Code: here against the scripted endpoint, at both viewports.
func TestBrowserRealClaudeSessionFromTheReadme(t *testing.T) {
	endpoint, err := anthropictest.Start(func(req *anthropictest.Request) anthropictest.Reply {
		last := req.LastUserText()
		if !req.IsMain() || strings.HasPrefix(last, "[SUGGESTION MODE") {
			return anthropictest.Say("Scripted title")
		}
		return anthropictest.Reply{Blocks: []anthropictest.Block{anthropictest.Text("Claude here, answering: " + last)}, Chunk: 5}
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = endpoint.Close() })
	// The built-in profile runs the agent in herd's own environment, as
	// `export ANTHROPIC_API_KEY=…; make run` does.
	for k, v := range claudetest.Profile(t, endpoint.URL, claudetest.ModeAsk).Env {
		t.Setenv(k, v)
	}
	srv := startServer(t, testStatic(t), "", func(c *server.Config) { c.Adapters = adaptertest.Adapters() })

	for _, phone := range []bool{false, true} {
		name := "desktop"
		if phone {
			name = "phone"
		}
		t.Run(name, func(t *testing.T) {
			ctx := withTimeout(t, newBrowser(t))
			view := chromedp.EmulateViewport(1280, 800)
			if phone {
				view = chromedp.Emulate(device.IPhone12)
			}
			mustDo(t, ctx, view, chromedp.Navigate("http://"+srv.Addr()+"/?test-hooks=1"), waitReady())
			// Each viewport opens a task of its own (the desktop the first,
			// the phone the second), so no earlier session is on show.
			if phone {
				mustDo(t, ctx,
					chromedp.Click(chromedp.CSS("#switcher-toggle")),
					chromedp.WaitVisible(chromedp.CSS("#switcher-sheet")),
					runJS(`document.querySelectorAll('#switcher-sheet .task-row')[1].click()`),
					chromedp.WaitNotVisible(chromedp.CSS("#switcher-sheet")),
				)
			} else {
				mustDo(t, ctx, runJS(`document.querySelectorAll('.sidebar .task-row')[0].click()`))
			}
			mustDo(t, ctx, waitJS(`document.querySelector('#session-start') !== null && document.querySelectorAll('.session-tab').length === 0`))
			prompt := "hello from the " + name
			mustDo(t, ctx,
				chromedp.WaitVisible(chromedp.CSS("#session-start")),
				waitJS(`[...document.querySelectorAll('#session-profile option')].some(o => o.value === 'claude-code' && !o.disabled && o.textContent === 'Claude Code')`),
				runJS(`const s = document.querySelector('#session-profile'); s.value = 'claude-code'; s.dispatchEvent(new Event('change', {bubbles: true}))`),
				chromedp.Click(chromedp.CSS("#session-start")),
				waitJS(sessionInState("WAITING_FOR_INPUT")),
				sendPrompt(prompt),
				waitJS(agentSaid("Claude here, answering: "+prompt)),
				waitJS(sessionInState("WAITING_FOR_INPUT")),
			)
			// Claude's own settings are in the header: its models, its
			// permission modes. The model chosen there is the model of
			// Claude Code's next request.
			again := "and now from haiku on the " + name
			mustDo(t, ctx,
				waitJS(`[...document.querySelectorAll('#config-model option')].some(o => o.value === 'haiku')`),
				waitJS(`[...document.querySelectorAll('#config-mode option')].some(o => o.value === 'plan')`),
				chooseConfig("model", "haiku"),
				waitJS(configShows("model", "haiku")),
			)
			saveScreenshot(t, ctx, "claude-config-"+name+".png")
			// Claude Code records the change in the conversation, as its
			// own /model command does, ahead of the next prompt: the
			// scripted endpoint echoes both.
			mustDo(t, ctx,
				sendPrompt(again),
				waitJS(fmt.Sprintf(`[...document.querySelectorAll('.message[data-type="agent"][data-status="complete"] .message-text')].some(e => e.textContent.includes('Set model to') && e.textContent.endsWith(%s))`, jsString(again))),
			)
			var model string
			for _, req := range endpoint.Requests() {
				if req.IsMain() && strings.HasSuffix(req.LastUserText(), again) {
					model = req.Model
				}
			}
			require.Contains(t, model, "haiku", "the turn after the change asked for the model chosen")
		})
	}
}
