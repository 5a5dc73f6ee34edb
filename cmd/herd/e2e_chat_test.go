package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The chat browser tests walk the session view a person lives in, at the
// desktop and the phone viewport: the transcript that follows output, the
// request pinned above the composer and answered from it, the marks of
// turns that did not end normally, the reconnect banner, the addresses,
// and the sidebar that triages. Each saves screenshots of what it checked.

// transcriptAtEnd is true while the transcript shows its newest output.
const transcriptAtEnd = `(() => { const t = document.querySelector('#transcript');
  return !!t && t.scrollHeight - t.scrollTop - t.clientHeight <= 48; })()`

// transcriptHeight is the transcript's scroll height.
const transcriptHeight = `document.querySelector('#transcript').scrollHeight`

// jumpShown is true while the "new output" button is visible.
const jumpShown = `(() => { const b = document.querySelector('#jump-latest'); return !!b && b.offsetParent !== null; })()`

// pressEnter presses Enter in the focused element the way a keyboard does:
// one keyDown that carries the key's text, so the browser inserts the line
// break only if no handler prevented it (chromedp.KeyEvent sends the text
// as a separate char event, which inserts it regardless).
func pressEnter() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeKeyDown, input.DispatchKeyEventTypeKeyUp} {
			p := input.DispatchKeyEventParams{Type: typ, Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13}
			if typ == input.DispatchKeyEventTypeKeyDown {
				p.Text, p.UnmodifiedText = "\r", "\r"
			}
			if _, err := chromedp.Call(ctx, input.DispatchKeyEvent, p); err != nil {
				return err
			}
		}
		return nil
	})
}

// submitComposer sends what the composer holds the way a person does at
// this viewport: Enter on a desktop, the button on a phone.
func (p *statusPage) submitComposer() chromedp.Action[chromedp.Void] {
	if p.phone {
		return chromedp.Click(chromedp.CSS("#composer-send"))
	}
	return pressEnter()
}

// chat is one task with a mock session, shown in a page at its address.
type chat struct {
	c         *testClient
	taskID    string
	sessionID string
	p         *statusPage
}

// openChat starts a server, makes a task titled title with a mock session
// and opens the page at the task's address; name names its screenshots.
func openChat(t *testing.T, v viewport, title, name string) chat {
	t.Helper()
	srv := startStatusServer(t, "127.0.0.1:0", t.TempDir())
	c := MustDialTest(t, srv)
	taskID := c.task(c.workspace("Chat"), title)
	sessionID := c.mockSession(taskID)
	return chat{c: c, taskID: taskID, sessionID: sessionID, p: openTaskAt(t, v, srv.Addr(), taskID, sessionID, name)}
}

// openTaskAt loads the app at the task's address (and session's, when
// given) and waits until that session is shown.
func openTaskAt(t *testing.T, v viewport, addr, taskID, sessionID, name string) *statusPage {
	t.Helper()
	path := "/tasks/" + taskID
	p := openStatusPage(t, v, "http://"+addr+path, name)
	p.do(waitJS(`(document.querySelector('#session-view') || {dataset: {}}).dataset.sessionId === ` + jsString(sessionID)))
	return p
}

// pathIs is true once the page's address is path.
func pathIs(path string) string { return `location.pathname === ` + jsString(path) }

// sessionShown is true once the session view shows sessionID.
func sessionShown(sessionID string) string {
	return `(document.querySelector('#session-view') || {dataset: {}}).dataset.sessionId === ` + jsString(sessionID)
}

// inView is true while the element selector names is inside the viewport.
func inView(selector string) string {
	return fmt.Sprintf(`(() => { const e = document.querySelector(%s); if (!e || e.offsetParent === null) return false;
  const r = e.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight + 1 && r.height > 0; })()`, jsString(selector))
}

func TestBrowserTranscriptFollowsOutputStopsWhenScrolledUpAndJumpsBack(t *testing.T) {
	atEveryViewport(t, func(t *testing.T, v viewport) {
		ch := openChat(t, v, "Streams a lot", "chat-follow")
		c, sessionID, p := ch.c, ch.sessionID, ch.p

		c.prompt(sessionID, "/scenario stream 3000 3")
		p.do(
			waitJS(`document.querySelector('.message[data-type="agent"][data-status="streaming"]') !== null`),
			waitJS(transcriptHeight+` > document.querySelector('#transcript').clientHeight + 300`),
			waitJS(transcriptAtEnd),
		)
		require.True(t, evalOn[bool](p, transcriptAtEnd), "while at its end the transcript follows the stream")
		require.False(t, evalOn[bool](p, jumpShown))

		// Scrolled up, the view stays where the person reads.
		p.do(runJS(`document.querySelector('#transcript').scrollTop = 0`))
		grown := evalOn[int](p, transcriptHeight) + 200
		p.do(
			waitJS(fmt.Sprintf(`%s > %d`, transcriptHeight, grown)),
			waitJS(jumpShown),
		)
		require.Less(t, evalOn[int](p, `document.querySelector('#transcript').scrollTop`), 50, "new output did not move the view")
		p.screenshot("scrolled-up")

		p.do(
			chromedp.Click(chromedp.CSS("#jump-latest")),
			waitJS(transcriptAtEnd),
			waitJS(`!`+jumpShown),
		)
		grown = evalOn[int](p, transcriptHeight) + 100
		p.do(
			waitJS(fmt.Sprintf(`%s > %d || document.querySelector('.message[data-type="agent"][data-status="complete"]') !== null`, transcriptHeight, grown)),
			waitJS(transcriptAtEnd),
			waitJS(`document.querySelector('.message[data-type="agent"][data-status="complete"]') !== null`),
			waitJS(transcriptAtEnd),
		)
		p.screenshot("followed")

		// A task opens at its latest message.
		p.do(chromedp.Reload(), waitReady(), waitJS(sessionShown(sessionID)),
			waitJS(`document.querySelector('.message[data-type="agent"][data-status="complete"]') !== null`),
			waitJS(transcriptAtEnd))
	})
}

func TestBrowserQuestionIsPinnedAndAnsweredFromTheComposer(t *testing.T) {
	atEveryViewport(t, func(t *testing.T, v viewport) {
		ch := openChat(t, v, "Asks a question", "chat-question")
		c, sessionID, p := ch.c, ch.sessionID, ch.p

		c.prompt(sessionID, "/scenario clarify")
		p.do(
			waitJS(inView(`#pending-card.pending-clarification_request`)),
			waitJS(`document.querySelector('#pending-card .pending-text').textContent === 'Which branch should I use?'`),
			waitJS(`document.querySelector('#session-state').textContent.includes('Asked you a question')`),
			waitJS(`document.querySelector('#composer.composer-answering') !== null`),
			waitJS(`document.querySelector('#composer-send').textContent === 'Answer'`),
		)
		require.NotContains(t, evalOn[string](p, `document.querySelector('#session-view').textContent`), "Generating",
			"the header never says the agent generates while it waits on the person")
		p.screenshot("asked")

		// Enter in the composer answers the question (the button on a
		// phone, whose Enter breaks the line): no prompt is queued.
		p.do(
			typeInto("#composer-input", "main"),
			p.submitComposer(),
			waitJS(agentSaid("answer: main")),
			waitJS(`document.querySelector('#pending-card') === null`),
			waitJS(sessionInState("WAITING_FOR_INPUT")),
		)
		require.Zero(t, evalOn[int](p, `document.querySelectorAll('.queue-item').length`), "nothing waits in the queue")
		require.Zero(t, evalOn[int](p, userMessages("main")), "the answer is not a new prompt")
		require.Zero(t, evalOn[int](p, `window.__herdFrames.sent.filter(f => f.action === 'message.add').length`))
		require.Equal(t, 1, evalOn[int](p, `window.__herdFrames.sent.filter(f => f.action === 'clarification.respond').length`))
		require.Equal(t, "", evalOn[string](p, `document.querySelector('#composer-input').value`), "the box is empty once answered")
		require.Contains(t, evalOn[string](p, `document.querySelector('.message[data-type="clarification_request"] .clarification-given').textContent`), "main")

		// Asked again, the person sends a prompt instead; the question stays.
		c.prompt(sessionID, "/scenario clarify")
		p.do(
			waitJS(`document.querySelector('#composer.composer-answering') !== null`),
			chromedp.Click(chromedp.CSS("#composer-mode")),
			waitJS(`document.querySelector('#composer.composer-answering') === null`),
			waitJS(`document.querySelector('#composer-send').textContent === 'Queue'`),
			typeInto("#composer-input", "a separate prompt"),
			p.submitComposer(),
			waitJS(`[...document.querySelectorAll('.queue-item .queue-text')].some(e => e.textContent === 'a separate prompt')`),
			waitJS(`document.querySelector('#pending-card') !== null`),
		)
		p.screenshot("prompt-instead")
	})
}

func TestBrowserPermissionIsPinnedAndReachedFromTheRow(t *testing.T) {
	atEveryViewport(t, func(t *testing.T, v viewport) {
		srv := startStatusServer(t, "127.0.0.1:0", t.TempDir())
		c := MustDialTest(t, srv)
		ws := c.workspace("Chat")
		quiet := c.task(ws, "Quiet")
		taskID := c.task(ws, "Needs permission")
		sessionID := c.mockSession(taskID)
		c.prompt(sessionID, "/scenario permission")
		p := openStatusPage(t, v, "http://"+srv.Addr()+"/tasks/"+quiet, "chat-permission")
		p.showRows()
		p.do(waitJS(p.rowShows(labelPermission, taskID)))
		p.hideRows()

		// The row opens the task at the request: its first choice has focus.
		p.openTask(taskID)
		p.do(
			waitJS(pathIs("/tasks/"+taskID)),
			waitJS(inView(`#pending-card .permission-option[data-option-id="allow"]`)),
			waitJS(`document.activeElement && document.activeElement.id === 'pending-option-0'`),
			waitJS(`document.querySelector('#session-state').textContent.includes('Needs your permission')`),
			waitJS(`document.querySelector('button#task-state-chip') !== null`),
		)
		p.screenshot("pinned")

		// The header chip jumps back to it after focus moved away.
		p.do(
			chromedp.Focus(chromedp.CSS("#composer-input")),
			chromedp.Click(chromedp.CSS("button#task-state-chip")),
			waitJS(`document.activeElement && document.activeElement.id === 'pending-option-0'`),
			pressEnter(),
			waitJS(agentSaid("allowed")),
			waitJS(`document.querySelector('#pending-card') === null`),
			waitJS(`document.querySelector('button#task-state-chip') === null`),
		)
	})
}

func TestBrowserCancelledAndInterruptedTurnsAreMarkedWithARetry(t *testing.T) {
	atEveryViewport(t, func(t *testing.T, v viewport) {
		dir := t.TempDir()
		first := startStatusServer(t, "127.0.0.1:0", dir)
		addr := first.Addr()
		c := MustDialTest(t, first)
		ws := c.workspace("Chat")
		taskID := c.task(ws, "Gets cut short")
		sessionID := c.mockSession(taskID)
		p := openTaskAt(t, v, addr, taskID, sessionID, "chat-marks")

		const prompt = "/scenario stream 400 100"
		p.do(
			sendPrompt(prompt),
			waitJS(`document.querySelector('.message[data-type="agent"][data-status="streaming"]') !== null`),
			chromedp.Click(chromedp.CSS("#session-cancel")),
			waitJS(`document.querySelector('.turn-mark[data-outcome="cancelled"] .turn-retry') !== null`),
			waitJS(sessionInState("WAITING_FOR_INPUT")),
		)
		require.Contains(t, evalOn[string](p, `document.querySelector('.turn-mark[data-outcome="cancelled"]').textContent`), "Cancelled")
		p.screenshot("cancelled")

		// Retry sends the turn's prompt again, as a new prompt.
		p.do(
			chromedp.Click(chromedp.CSS(".turn-mark[data-outcome=\"cancelled\"] .turn-retry")),
			waitJS(userMessages(prompt)+` === 2`),
			waitJS(sessionInState("RUNNING")),
			waitJS(`document.querySelectorAll('.message[data-type="agent"]').length === 2`),
		)

		// herd stops mid-turn: the page says it is reconnecting and what it
		// shows is the last known state.
		shutdown(t, first)
		p.do(
			waitJS(inView(`#reconnect-banner`)),
			waitJS(`document.querySelector('#app-root.stale') !== null`),
			waitJS(`document.querySelector('#reconnect-now') !== null`),
		)
		p.screenshot("reconnecting")
		second := startStatusServer(t, addr, dir)
		require.Equal(t, addr, second.Addr())
		p.do(
			chromedp.Click(chromedp.CSS("#reconnect-now")),
			waitJS(`document.querySelector('#conn-status.conn-online') !== null`),
			waitJS(`document.querySelector('#reconnect-banner') === null`),
			waitJS(`document.querySelector('#app-root.stale') === null`),
			waitJS(`document.querySelector('.turn-mark[data-outcome="interrupted"] .turn-retry') !== null`),
			waitJS(sessionInState("WAITING_FOR_INPUT")),
		)
		require.Equal(t, 1, evalOn[int](p, `document.querySelectorAll('.turn-retry').length`),
			"only the mark after the latest prompt offers a Retry")
		p.screenshot("interrupted")
	})
}

func TestBrowserAgentErrorIsSaidInPlainWordsWithItsDetailAndARetry(t *testing.T) {
	atEveryViewport(t, func(t *testing.T, v viewport) {
		p := openChat(t, v, "Fails once", "chat-error").p

		p.do(
			sendPrompt("/scenario error"),
			waitJS(`document.querySelector('.message[data-type="error"] .plain-error-words') !== null`),
			waitJS(sessionInState("WAITING_FOR_INPUT")),
			// The task's banner comes with its status summary, on the
			// workspace feed: it may follow the session's own events.
			waitJS(`document.querySelector('#error-banner .error-banner-title') !== null`),
		)
		words := evalOn[string](p, `document.querySelector('.message[data-type="error"] .plain-error-words').textContent`)
		assert.Equal(t, "The turn failed: the agent hit an internal error.", words)
		assert.False(t, evalOn[bool](p, `document.querySelector('.message[data-type="error"] details').open`), "the agent's detail is behind a disclosure")
		assert.Contains(t, evalOn[string](p, `document.querySelector('.message[data-type="error"] details pre').textContent`), "-32603")
		require.NotContains(t, evalOn[string](p, `document.querySelector('#error-banner .error-banner-title').textContent`), "-32603",
			"the task's error banner says it in words too")
		p.screenshot("error")
		p.do(
			chromedp.Click(chromedp.CSS(".turn-mark[data-outcome=\"failed\"] .turn-retry")),
			waitJS(userMessages("/scenario error")+` === 2`),
		)
	})
}

func TestBrowserAddressesSelectTheTaskAndSessionAcrossReloadsAndHistory(t *testing.T) {
	atEveryViewport(t, func(t *testing.T, v viewport) {
		srv := startStatusServer(t, "127.0.0.1:0", t.TempDir())
		c := MustDialTest(t, srv)
		ws := c.workspace("Chat")
		other := c.task(ws, "Another task")
		taskID := c.task(ws, "Two sessions")
		first := c.mockSession(taskID)
		second := c.mockSession(taskID)
		c.prompt(first, "said in the first")
		c.prompt(second, "said in the second")

		status, html := getPage(t, "http://"+srv.Addr()+"/tasks/"+taskID, nil)
		require.Equal(t, 200, status)
		require.Contains(t, html, ">Two sessions</h1>", "the server renders the task's own first screen")

		p := openStatusPage(t, v, "http://"+srv.Addr()+"/", "chat-urls")
		p.openTask(taskID)
		p.do(waitJS(pathIs("/tasks/"+taskID)), waitJS(sessionShown(first)), waitJS(agentSaid("said in the first")))

		p.do(
			chromedp.Click(chromedp.CSS(`.session-tab[data-session-id="`+second+`"]`)),
			waitJS(pathIs("/tasks/"+taskID+"/sessions/"+second)),
			waitJS(sessionShown(second)),
			waitJS(agentSaid("said in the second")),
		)
		p.do(chromedp.Reload(), waitReady(), waitJS(sessionShown(second)), waitJS(agentSaid("said in the second")))
		require.Equal(t, "/tasks/"+taskID+"/sessions/"+second, evalOn[string](p, `location.pathname`))
		p.screenshot("reloaded")

		p.openTask(other)
		p.do(waitJS(pathIs("/tasks/"+other)), waitJS(`document.querySelector('#detail-title').textContent === 'Another task'`))
		p.do(runJS(`history.back()`), waitJS(pathIs("/tasks/"+taskID+"/sessions/"+second)), waitJS(sessionShown(second)))
		p.do(runJS(`history.forward()`), waitJS(pathIs("/tasks/"+other)),
			waitJS(`document.querySelector('#detail-title').textContent === 'Another task'`))

		// An address of no task says so over the new task form.
		p.do(chromedp.Navigate("http://"+srv.Addr()+"/tasks/no-such-task"), waitReady(), waitJS(`document.querySelector('#task-missing') !== null`))
	})
}

func TestBrowserReloadRestoresWhereThePersonWasReading(t *testing.T) {
	atEveryViewport(t, func(t *testing.T, v viewport) {
		srv := startStatusServer(t, "127.0.0.1:0", t.TempDir())
		c := MustDialTest(t, srv)
		ws := c.workspace("Chat")
		taskID := c.task(ws, "Long transcript")
		sessionID := c.mockSession(taskID)
		c.prompt(sessionID, "/scenario stream 3000")
		eventually(t, "the stream is stored", func() bool {
			m, ok := c.message(sessionID, "agent", "")
			return ok && m["status"] == "complete"
		})
		p := openTaskAt(t, v, srv.Addr(), taskID, sessionID, "chat-scroll")
		p.do(waitJS(agentSaidPrefix("0 1 2 ")), waitJS(transcriptAtEnd))
		p.do(
			runJS(`const t = document.querySelector('#transcript'); t.scrollTop = Math.round((t.scrollHeight - t.clientHeight) / 3)`),
			waitJS(`sessionStorage.getItem('herd.scroll.' + `+jsString(sessionID)+`) !== null`),
		)
		want := evalOn[int](p, `document.querySelector('#transcript').scrollTop`)
		p.do(chromedp.Reload(), waitReady(), waitJS(sessionShown(sessionID)), waitJS(agentSaidPrefix("0 1 2 ")),
			waitJS(`document.querySelector('#transcript').scrollTop > 0`))
		got := evalOn[int](p, `document.querySelector('#transcript').scrollTop`)
		require.InDelta(t, want, got, 4, "the reload put the transcript where it was (%d), not at %d", want, got)
		require.False(t, evalOn[bool](p, transcriptAtEnd))
	})
}

// agentSaidPrefix is true once an agent message starting with prefix shows.
func agentSaidPrefix(prefix string) string {
	return fmt.Sprintf(`[...document.querySelectorAll('.message[data-type="agent"] .message-text')].some(e => e.textContent.startsWith(%s))`, jsString(prefix))
}

// groupTitles is a JavaScript expression for the task titles of each
// switcher group in this viewport's switcher, in order.
func (p *statusPage) groupTitles() string {
	return fmt.Sprintf(`[...document.querySelectorAll(%s)].map(g => g.className.replace('task-group task-group-', '') + ':' +
  [...g.querySelectorAll('.row-title')].map(e => e.textContent).join(','))`, jsString(p.scope()+" .task-group"))
}

func TestBrowserSidebarTriagesWhatNeedsYouFirst(t *testing.T) {
	atEveryViewport(t, func(t *testing.T, v viewport) {
		srv := startStatusServer(t, "127.0.0.1:0", t.TempDir())
		c := MustDialTest(t, srv)
		ws := c.workspace("Triage")
		c.task(ws, "Quiet")
		finished := c.task(ws, "Finished")
		finishedSession := c.mockSession(finished)
		c.prompt(finishedSession, "done already")
		works := c.task(ws, "Works")
		c.prompt(c.mockSession(works), "/scenario sleep 60000")
		asks := c.task(ws, "Asks permission")
		c.prompt(c.mockSession(asks), "/scenario permission")
		eventually(t, "the finished task answered", func() bool { _, ok := c.message(finishedSession, "agent", "done already"); return ok })

		p := openStatusPage(t, v, "http://"+srv.Addr()+"/", "chat-triage")
		p.showRows()
		p.do(waitJS(p.rowShows(labelPermission, asks)), waitJS(p.rowShows(labelGenerating, works)))
		want := []string{"needs-you:Asks permission", "running:Works", "finished:Finished", "rest:Quiet"}
		p.do(waitJS(p.groupTitles() + `.join('|') === ` + jsString(strings.Join(want, "|"))))
		require.NotEmpty(t, evalOn[string](p, `document.querySelector(`+jsString(p.row(finished)+" .row-time")+`).textContent`),
			"a row says when its task last did something")
		p.screenshot("triaged")
		p.hideRows()

		// Looked at, the finished task joins the rest.
		p.openTask(finished)
		p.do(waitJS(pathIs("/tasks/" + finished)))
		p.showRows()
		p.do(waitJS(p.groupTitles() + `.join('|') === ` + jsString("needs-you:Asks permission|running:Works|rest:Finished,Quiet")))
		p.hideRows()

		// Ctrl+K searches by title and Enter opens the match.
		p.do(
			chromedp.KeyEvent("k", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
			waitJS(`document.activeElement && document.activeElement.classList.contains('task-search')`),
			chromedp.KeyEvent("wor"),
			waitJS(fmt.Sprintf(`[...document.querySelectorAll(%s)].filter(e => e.offsetParent !== null).map(e => e.textContent).join() === 'Works'`,
				jsString(p.scope()+" .row-title"))),
		)
		p.screenshot("search")
		p.do(pressEnter(), waitJS(pathIs("/tasks/"+works)))

		// Alt+Shift+↓ goes to the next task that needs you (outside a text
		// field, where Alt and the arrows already mean something).
		p.do(
			runJS(`document.activeElement.blur()`),
			chromedp.KeyEvent(kb.ArrowDown, chromedp.KeyModifiers(chromedp.ModifierAlt, chromedp.ModifierShift)),
			waitJS(pathIs("/tasks/"+asks)),
			waitJS(`document.activeElement && document.activeElement.id === 'pending-option-0'`),
		)
		// Alt+↓ and Alt+↑ step through the list.
		p.do(
			runJS(`document.activeElement.blur()`),
			chromedp.KeyEvent(kb.ArrowDown, chromedp.KeyModifiers(chromedp.ModifierAlt)),
			waitJS(pathIs("/tasks/"+works)),
			chromedp.KeyEvent(kb.ArrowUp, chromedp.KeyModifiers(chromedp.ModifierAlt)),
			waitJS(pathIs("/tasks/"+asks)),
		)
	})
}

func TestBrowserRowRenamesAndArchivesItsTask(t *testing.T) {
	atEveryViewport(t, func(t *testing.T, v viewport) {
		srv := startStatusServer(t, "127.0.0.1:0", t.TempDir())
		c := MustDialTest(t, srv)
		ws := c.workspace("Rows")
		keep := c.task(ws, "Keep me")
		gone := c.task(ws, "Archive me")
		p := openStatusPage(t, v, "http://"+srv.Addr()+"/tasks/"+keep, "chat-row-actions")
		p.showRows()
		menu := p.scope() + ` .row-menu-button[data-task-id="` + keep + `"]`
		p.do(
			chromedp.Click(chromedp.CSS(menu)),
			chromedp.Click(chromedp.CSS(p.scope()+" .row-rename")),
			waitJS(`document.activeElement && document.activeElement.id === `+jsString("row-title-"+keep)),
			chromedp.KeyEvent("Renamed task"),
			pressEnter(),
			waitJS(fmt.Sprintf(`document.querySelector(%s).textContent === 'Renamed task'`, jsString(p.row(keep)+" .row-title"))),
			waitJS(`document.querySelector('#detail-title').textContent === 'Renamed task'`),
		)
		p.screenshot("renamed")
		p.do(
			chromedp.Click(chromedp.CSS(p.scope()+` .row-menu-button[data-task-id="`+gone+`"]`)),
			chromedp.Click(chromedp.CSS(p.scope()+" .row-archive")),
			chromedp.Click(chromedp.CSS(p.scope()+" .row-archive-yes")),
			waitJS(fmt.Sprintf(`document.querySelector(%s) === null`, jsString(p.row(gone)))),
		)
		task := c.call("task.get", map[string]any{"task_id": gone})
		require.Equal(t, true, task["archived"])
		require.Equal(t, "Renamed task", c.call("task.get", map[string]any{"task_id": keep})["title"])
	})
}
