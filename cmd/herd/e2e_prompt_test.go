package main

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/gitcli/gittest"
)

// The prompt browser tests walk what a turn shows beside its text, at the
// desktop and the phone viewport: the plan docked above the composer and
// updated in place, the agent's permission choices by kind, and a prompt
// that carries images and an @file mention. Each saves screenshots.

// planLabel is the docked plan's count, or "" while it is not shown.
const planLabel = `(() => { const e = document.querySelector('#plan-card .plan-count'); return e ? e.textContent : ''; })()`

// pngJS is a 1×1 PNG as a JavaScript Uint8Array.
const pngJS = `new Uint8Array([137,80,78,71,13,10,26,10,0,0,0,13,73,72,68,82,0,0,0,1,0,0,0,1,8,6,0,0,0,31,21,196,137,0,0,0,13,73,68,65,84,120,156,99,248,207,192,240,31,0,5,0,1,255,137,153,61,29,0,0,0,0,73,69,78,68,174,66,96,130])`

// pasteImage pastes a PNG named name into the composer the way a browser
// does: a paste event whose clipboard holds the file.
func pasteImage(name string) chromedp.Action[chromedp.Void] {
	return runJS(fmt.Sprintf(`(() => { const dt = new DataTransfer();
  dt.items.add(new File([%s], %s, {type: 'image/png'}));
  document.querySelector('#composer-input').dispatchEvent(new ClipboardEvent('paste', {clipboardData: dt, bubbles: true, cancelable: true})); })()`,
		pngJS, jsString(name)))
}

// pickImage attaches a PNG through the attach button's file input, as the
// browser's picker does once a file is chosen.
func pickImage(name string) chromedp.Action[chromedp.Void] {
	return runJS(fmt.Sprintf(`(() => { const dt = new DataTransfer();
  dt.items.add(new File([%s], %s, {type: 'image/png'}));
  const input = document.querySelector('#composer-attach-input'); input.files = dt.files;
  input.dispatchEvent(new Event('change', {bubbles: true})); })()`, pngJS, jsString(name)))
}

func TestBrowserPlanUpdatesInPlaceAndFolds(t *testing.T) {
	atEveryViewport(t, func(t *testing.T, v viewport) {
		ch := openChat(t, v, "Plans", "prompt-plan")
		c, sessionID, p := ch.c, ch.sessionID, ch.p

		// The mock works through three steps, changes a whole plan at a
		// time, and waits on the person with the last step in progress.
		c.prompt(sessionID, "/scenario plan 3 150")
		p.do(
			waitJS(planLabel+` === 'Plan 2/3'`),
			waitJS(`document.querySelector('#pending-card') !== null`),
		)
		require.Equal(t, "Step 3", evalOn[string](p, `document.querySelector('#plan-card .plan-step[aria-current="true"] .plan-step-text').textContent`),
			"the step in progress is the emphasised one")
		require.Equal(t, []string{"completed", "completed", "in_progress"},
			evalOn[[]string](p, `[...document.querySelectorAll('#plan-card .plan-step')].map(e => e.dataset.status)`))
		require.Equal(t, 1, evalOn[int](p, `document.querySelectorAll('.message[data-type="plan"]').length`), "one plan message, updated in place")
		p.screenshot("in-progress")

		// Folded, it still names the step under way, and it stays folded
		// for this session when the page is loaded again.
		p.do(
			chromedp.Click(chromedp.CSS("#plan-toggle")),
			waitJS(`document.querySelector('#plan-steps') === null`),
			waitJS(`document.querySelector('#plan-card .plan-now').textContent === 'Step 3'`),
			chromedp.Reload(),
			waitJS(sessionShown(sessionID)),
			waitJS(planLabel+` === 'Plan 2/3'`),
			waitJS(`document.querySelector('#plan-card').dataset.folded === 'true'`),
			waitJS(`document.querySelector('#plan-steps') === null`),
		)
		p.screenshot("folded")
		p.do(
			chromedp.Click(chromedp.CSS("#plan-toggle")),
			waitJS(`document.querySelectorAll('#plan-steps .plan-step').length === 3`),
			chromedp.Click(chromedp.CSS(`#pending-card .permission-option[data-option-id="allow"]`)),
			waitJS(agentSaid("planned 3 steps")),
			waitJS(sessionInState("WAITING_FOR_INPUT")),
			// Every step done and the turn settled: the dock gives the room
			// back; the transcript keeps the plan.
			waitJS(`document.querySelector('#plan-card') === null`),
			waitJS(`document.querySelector('.message[data-type="plan"] .plan-text').textContent.includes('[completed] Step 3')`),
		)
	})
}

func TestBrowserPermissionChoicesByKind(t *testing.T) {
	atEveryViewport(t, func(t *testing.T, v viewport) {
		ch := openChat(t, v, "Asks by kind", "prompt-permission")
		c, sessionID, p := ch.c, ch.sessionID, ch.p

		c.prompt(sessionID, "/scenario permission-kinds")
		p.do(waitJS(`document.querySelectorAll('#pending-card .permission-option').length === 4`))
		got := evalOn[[]string](p, `[...document.querySelectorAll('#pending-card .permission-option')].map(b => b.dataset.kind + ':' + b.className.split(' ').find(c => c.startsWith('option-')) + ':' + b.textContent)`)
		require.Equal(t, []string{
			"allow_once:option-allow:Allow once",
			"allow_always:option-allow:Allow always",
			"reject_once:option-reject:Reject",
			"reject_always:option-reject:Reject always",
		}, got, "the agent's own labels, coloured by kind")
		p.screenshot("choices")

		p.do(
			chromedp.Click(chromedp.CSS(`#pending-card .permission-option[data-option-id="always"]`)),
			waitJS(agentSaid("chose allow_always")),
			waitJS(`document.querySelector('#pending-card') === null`),
			waitJS(`document.querySelector('.message[data-type="permission_request"][data-status="resolved"] .card-outcome').textContent === 'You chose: Allow always'`),
			waitJS(`document.querySelector('.message[data-type="permission_request"] .card-outcome').dataset.kind === 'allow_always'`),
		)
		p.screenshot("chosen")
	})
}

func TestBrowserPromptCarriesImagesAndAnAtFile(t *testing.T) {
	atEveryViewport(t, func(t *testing.T, v viewport) {
		srv := startStatusServer(t, "127.0.0.1:0", t.TempDir())
		c := MustDialTest(t, srv)
		taskID, repo := c.repoTask(c.workspace("Content"), "Look at files", gittest.Init(t))
		worktree := repo["worktree_path"].(string)
		gittest.Write(t, worktree, "src/main.go", "package main\n")
		gittest.Write(t, worktree, "docs/guide.md", "# Guide\n")
		sessionID := c.mockSession(taskID)
		p := openTaskAt(t, v, srv.Addr(), taskID, sessionID, "prompt-content")

		// Pasted and picked images show as thumbnails with a remove
		// control; removing one leaves the other.
		p.do(
			waitJS(`document.querySelector('#composer-attach') !== null`),
			pasteImage("pasted.png"),
			waitJS(`document.querySelectorAll('.composer-attachments .attachment-thumb').length === 1`),
			pickImage("picked.png"),
			waitJS(`document.querySelectorAll('.composer-attachments .attachment-thumb').length === 2`),
			chromedp.Click(chromedp.CSS(`.composer-attachments .attachment:nth-child(2) .attachment-remove`)),
			waitJS(`document.querySelectorAll('.composer-attachments .attachment-thumb').length === 1`),
		)

		// Typing @ completes paths of the task's worktree.
		p.do(
			chromedp.Click(chromedp.CSS("#composer-input")),
			typeInto("#composer-input", "/scenario content look at @mai"),
			waitJS(`[...document.querySelectorAll('#mention-list .mention-choice')].map(e => e.textContent).join() === 'src/main.go'`),
		)
		p.screenshot("completion")
		if p.phone {
			p.do(chromedp.Click(chromedp.CSS(`#mention-list .mention-choice[data-path="src/main.go"]`)))
		} else {
			p.do(pressEnter())
		}
		p.do(
			waitJS(`document.querySelector('#mention-list') === null`),
			waitJS(`document.querySelector('#composer-input').value === '/scenario content look at @src/main.go '`),
			waitJS(`[...document.querySelectorAll('.composer-attachments .attachment-name')].some(e => e.textContent === 'src/main.go')`),
		)
		p.screenshot("attached")

		p.do(
			p.submitComposer(),
			waitJS(`document.querySelectorAll('.composer-attachments .attachment').length === 0`),
			waitJS(fmt.Sprintf(`[...document.querySelectorAll('.message[data-type="agent"][data-status="complete"] .message-text')].some(e => e.textContent.startsWith(%s))`,
				jsString("received: image image/png 70 bytes; resource file://"))),
			waitJS(`document.querySelectorAll('.message[data-type="user"] .sent-attachments .attachment-thumb').length === 1`),
			waitJS(`document.querySelector('.message[data-type="user"] .sent-attachments .attachment-file').dataset.how === 'embedded'`),
			waitJS(`document.querySelector('.message[data-type="user"] .sent-attachments .attachment-file').textContent === '@src/main.go'`),
		)
		p.screenshot("sent")
	})
}
