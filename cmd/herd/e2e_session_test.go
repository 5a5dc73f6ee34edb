package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/device"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server"
)

// The session browser tests drive the mock agent (this test binary, see
// TestMain) through the web app: start a session, prompt it, answer its
// requests, queue behind a running turn, and retry across a dropped
// connection.

// jsString quotes s for a JavaScript expression.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// runJS evaluates a JavaScript statement for its effect.
func runJS(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Evaluate[bool](`(() => { `+expr+`; return true; })()`)(ctx, t)
		return err
	})
}

// sessionInState is true once the session view shows a session in state.
func sessionInState(state string) string {
	return fmt.Sprintf(`document.querySelector('#session-view[data-state=%q]') !== null`, state)
}

// agentSaid is true once a complete agent message with exactly text shows.
func agentSaid(text string) string {
	return fmt.Sprintf(`[...document.querySelectorAll('.message[data-type="agent"][data-status="complete"] .message-text')].some(e => e.textContent === %s)`, jsString(text))
}

// userMessages counts the confirmed user messages with exactly text.
func userMessages(text string) string {
	return fmt.Sprintf(`[...document.querySelectorAll('.message[data-message-id][data-type="user"] .message-text')].filter(e => e.textContent === %s).length`, jsString(text))
}

// mustDo runs steps and, when one fails, logs the main pane's markup
// before failing the test.
func mustDo(t testing.TB, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	for i, step := range steps {
		if err := chromedp.Do(ctx, step); err != nil {
			markup, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#main').outerHTML`))
			t.Logf("main pane when the step failed:\n%s", markup)
			require.NoError(t, err, "step %d", i+1)
		}
	}
}

// sendPrompt types text into the composer and presses its button.
func sendPrompt(text string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		waitJS(`!document.querySelector('#composer-send').disabled`),
		runJS(`const el = document.querySelector('#composer-input'); el.value = `+jsString(text)+`; el.dispatchEvent(new Event('input', {bubbles: true}))`),
		chromedp.Click(chromedp.CSS("#composer-send")),
	)
}

// openNewSession loads the app (with its test hooks), selects the newest
// task, starts a mock session and waits until it takes prompts. phone
// selects the task through the sheet.
func openNewSession(t testing.TB, srv *server.Server, phone bool) context.Context {
	t.Helper()
	ctx := withTimeout(t, newBrowser(t))
	view := chromedp.EmulateViewport(1280, 800)
	if phone {
		view = chromedp.Emulate(device.IPhone12)
	}
	require.NoError(t, chromedp.Do(ctx,
		view,
		chromedp.Navigate("http://"+srv.Addr()+"/?test-hooks=1"),
		waitReady(),
	))
	if phone {
		require.NoError(t, chromedp.Do(ctx,
			chromedp.Click(chromedp.CSS("#switcher-toggle")),
			chromedp.WaitVisible(chromedp.CSS("#switcher-sheet")),
			chromedp.Click(chromedp.CSS("#switcher-sheet .task-row")),
			chromedp.WaitNotVisible(chromedp.CSS("#switcher-sheet")),
		))
	} else {
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(".sidebar .task-row"))))
	}
	mustDo(t, ctx,
		chromedp.WaitVisible(chromedp.CSS("#session-start")),
		waitJS(`document.querySelector('#session-profile').value === 'mock'`),
		chromedp.Click(chromedp.CSS("#session-start")),
		waitJS(sessionInState("WAITING_FOR_INPUT")),
	)
	return ctx
}

func TestBrowserSessionEchoesAPrompt(t *testing.T) {
	srv := startUIServer(t)
	ctx := openNewSession(t, srv, false)

	label, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#composer-send').textContent`))
	require.NoError(t, err)
	require.Equal(t, "Send", label)
	mustDo(t, ctx,
		sendPrompt("hello <b>agent</b> & friends"),
		waitJS(agentSaid("hello <b>agent</b> & friends")),
		waitJS(sessionInState("WAITING_FOR_INPUT")),
	)
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](userMessages("hello <b>agent</b> & friends")))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	bold, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('.transcript b').length`))
	require.NoError(t, err)
	require.Zero(t, bold, "prompt text is rendered as text, never as markup")
	saveScreenshot(t, ctx, "session-desktop.png")
}

func TestBrowserSessionStreamsByteExact(t *testing.T) {
	srv := startUIServer(t)
	ctx := openNewSession(t, srv, false)

	var want strings.Builder
	for i := range 300 {
		want.WriteString(strconv.Itoa(i) + " ")
	}
	// Record every length the streamed answer shows, to see it grow.
	mustDo(t, ctx,
		runJS(`window.__lengths = []; new MutationObserver(() => {
			const el = document.querySelector('.message[data-type="agent"] .message-text');
			if (el) window.__lengths.push(el.textContent.length);
		}).observe(document.querySelector('.transcript'), {childList: true, subtree: true, characterData: true})`),
		sendPrompt("/scenario stream 300 5"),
		waitJS(`document.querySelector('.message[data-type="agent"][data-status="complete"]') !== null`),
	)
	// The answer is rendered as Markdown, which drops the trailing space
	// from what is shown: the bytes held are checked by their count, the
	// text by what a person reads.
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('.message[data-type="agent"] .message-text').textContent`))
	require.NoError(t, err)
	require.Equal(t, strings.TrimSpace(want.String()), got)
	held, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('.message[data-type="agent"]').dataset.bytes`))
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(want.Len()), held, "every streamed byte is held, none twice")
	lengths, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`[...new Set(window.__lengths)]`))
	require.NoError(t, err)
	require.Greater(t, len(lengths), 2, "the answer grew while it streamed: %v", lengths)
}

func TestBrowserSessionPermissionIsAnswered(t *testing.T) {
	srv := startUIServer(t)
	ctx := openNewSession(t, srv, false)

	mustDo(t, ctx,
		sendPrompt("/scenario permission"),
		// The choices are pinned above the composer; the transcript says it waits.
		waitJS(`document.querySelector('#pending-card .permission-option[data-option-id="allow"]') !== null`),
		waitJS(`document.querySelector('.message[data-type="permission_request"][data-status="pending"] .card-waiting') !== null`),
		waitJS(`document.querySelector('#session-state').textContent.includes('Needs your permission')`),
		chromedp.Click(chromedp.CSS(`#pending-card .permission-option[data-option-id="allow"]`)),
		waitJS(agentSaid("allowed")),
		waitJS(`document.querySelector('.message[data-type="permission_request"][data-status="resolved"] .card-outcome').textContent === 'You chose: Allow'`),
		waitJS(`document.querySelector('#pending-card') === null`),
		waitJS(sessionInState("WAITING_FOR_INPUT")),
	)
}

func TestBrowserSessionQueuesBehindARunningTurn(t *testing.T) {
	srv := startUIServer(t)
	ctx := openNewSession(t, srv, false)

	mustDo(t, ctx,
		sendPrompt("/scenario sleep 1500"),
		waitJS(sessionInState("RUNNING")),
		waitJS(`document.querySelector('#composer-send').textContent === 'Queue'`),
		chromedp.WaitVisible(chromedp.CSS("#session-cancel")),
		sendPrompt("after the nap"),
		waitJS(`[...document.querySelectorAll('.queue-item .queue-text')].some(e => e.textContent === 'after the nap')`),
		chromedp.WaitVisible(chromedp.CSS(".queue-item .queue-remove")),
		waitJS(agentSaid("after the nap")),
		waitJS(`document.querySelectorAll('.queue-item').length === 0`),
	)
}

func TestBrowserSessionRetryAfterADroppedConnectionStoresOneMessage(t *testing.T) {
	srv := startUIServer(t)
	ctx := openNewSession(t, srv, false)
	sessionID, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#session-view').dataset.sessionId`))
	require.NoError(t, err)

	const text = "sent just before the network failed"
	mustDo(t, ctx,
		runJS(`new MutationObserver(() => {
			if (!document.querySelector('#conn-status.conn-online')) window.__sawOffline = true;
			if (document.querySelector('.outgoing[data-status="unconfirmed"]')) window.__sawUnconfirmed = true;
		}).observe(document.body, {attributes: true, subtree: true, childList: true})`),
		runJS(`window.__herdTestDropAfterNextSend()`),
		sendPrompt(text),
		waitJS(`window.__sawOffline === true`),
		waitJS(`document.querySelector('#conn-status.conn-online') !== null`),
		waitJS(agentSaid(text)),
		waitJS(`document.querySelectorAll('.outgoing').length === 0`),
	)
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](userMessages(text)))
	require.NoError(t, err)
	require.Equal(t, 1, n, "the transcript shows the prompt once")
	unconfirmed, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__sawUnconfirmed === true`))
	require.NoError(t, err)
	require.True(t, unconfirmed, "the lost answer showed the prompt as unconfirmed")
	require.Equal(t, 2, messageAddRequests(t, srv), "the prompt was sent again after the reconnect")

	// The server's own record: one user message with that text.
	c := MustDialTest(t, srv)
	list := c.call("message.list", map[string]any{"session_id": sessionID})
	users := 0
	for _, m := range list["messages"].([]any) {
		msg := m.(map[string]any)
		if msg["type"] == "user" && msg["content"] == text {
			users++
		}
	}
	require.Equal(t, 1, users, "the retry with the same client_message_id stored nothing new")
}

// messageAddRequests reads from the server's metrics how many message.add
// requests it answered.
func messageAddRequests(t *testing.T, srv *server.Server) int {
	t.Helper()
	status, body := getPage(t, "http://"+srv.Addr()+"/metrics", nil)
	require.Equal(t, 200, status)
	total := 0
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "herd_ws_requests_total{") && strings.Contains(line, `action="message.add"`) {
			n, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
			require.NoError(t, err)
			total += int(n)
		}
	}
	return total
}

func TestBrowserSessionOnAPhone(t *testing.T) {
	srv := startUIServer(t)
	ctx := openNewSession(t, srv, true)

	mustDo(t, ctx,
		sendPrompt("hello from a phone"),
		waitJS(agentSaid("hello from a phone")),
	)
	width, err := chromedp.Run(ctx, chromedp.Evaluate[int](`Math.round(document.querySelector('#session-view').getBoundingClientRect().width)`))
	require.NoError(t, err)
	require.Greater(t, width, 300, "the session view takes the phone's width")
	saveScreenshot(t, ctx, "session-phone.png")

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("#switcher-toggle")),
		chromedp.WaitVisible(chromedp.CSS("#switcher-sheet")),
		chromedp.Click(chromedp.CSS("#switcher-close")),
		chromedp.WaitNotVisible(chromedp.CSS("#switcher-sheet")),
		waitJS(sessionInState("WAITING_FOR_INPUT")),
	))
}
