package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// transcriptProbe measures, in the page, how long the transcript takes to
// show a change (window.__herdMark(...) then __herdWait(cond)), the frame
// rate (requestAnimationFrame callbacks) and the longest task the browser
// reports, while it runs.
const transcriptProbe = `(() => {
  window.__frames = 0; window.__longest = 0;
  const tick = () => { window.__frames++; requestAnimationFrame(tick); };
  requestAnimationFrame(tick);
  try {
    new PerformanceObserver(l => { for (const e of l.getEntries()) window.__longest = Math.max(window.__longest, e.duration); })
      .observe({type: 'longtask', buffered: true});
  } catch (_) {}
})();`

// BenchmarkBrowserLongTranscript measures, at 1280×800, a session of 2,000
// messages (1,000 prompts and their answers): opening it from its row
// (open-ms: click to its newest message on screen), paging back through
// all of it (page-ms: the slowest "Show earlier" click to its page on
// screen), then streaming 2,000 chunks into it with all 2,000 messages
// rendered (fps, and the longest task in ms). Run with -benchtime=1x.
func BenchmarkBrowserLongTranscript(b *testing.B) {
	srv := startStatusServer(b, "127.0.0.1:0", b.TempDir())
	c := MustDialTest(b, srv)
	ws := c.workspace("Bench")
	empty := c.task(ws, "Empty")
	taskID := c.task(ws, "Long transcript")
	sessionID := c.mockSession(taskID)
	for i := range 1000 {
		c.call("message.add", map[string]any{"session_id": sessionID, "client_message_id": fmt.Sprintf("bench-%d", i), "content": fmt.Sprintf("prompt %d", i)})
	}
	eventually(b, "the 1,000 prompts are answered", func() bool {
		msgs := c.call("message.list", map[string]any{"session_id": sessionID, "limit": 1})["messages"].([]any)
		return len(msgs) == 1 && msgs[0].(map[string]any)["content"] == "prompt 999" && msgs[0].(map[string]any)["type"] == "agent"
	})

	var open, page, fps, longest float64
	for range b.N {
		tab := withTimeout(b, newBrowser(b))
		require.NoError(b, chromedp.Do(tab, chromedp.EmulateViewport(1280, 800), chromedp.Navigate("http://"+srv.Addr()+"/tasks/"+empty), waitReady()))
		ms, err := chromedp.Run(tab, chromedp.Evaluate[float64](fmt.Sprintf(`new Promise(done => {
  const t0 = performance.now();
  document.querySelector('.sidebar .task-row[data-task-id=%q]').click();
  const check = () => [...document.querySelectorAll('.message[data-type="agent"] .message-text')].some(e => e.textContent === 'prompt 999')
    ? done(performance.now() - t0) : requestAnimationFrame(check);
  check();
})`, taskID), chromedp.EvalAwaitPromise))
		require.NoError(b, err)
		open = max(open, ms)

		for {
			more, err := chromedp.Run(tab, chromedp.Evaluate[bool](`!!document.querySelector('#show-earlier')`))
			require.NoError(b, err)
			if !more {
				break
			}
			ms, err := chromedp.Run(tab, chromedp.Evaluate[float64](`new Promise(done => {
  const before = document.querySelectorAll('.message').length, t0 = performance.now();
  document.querySelector('#show-earlier').click();
  const check = () => document.querySelectorAll('.message').length > before ? done(performance.now() - t0) : requestAnimationFrame(check);
  check();
})`, chromedp.EvalAwaitPromise))
			require.NoError(b, err)
			page = max(page, ms)
		}
		shown, err := chromedp.Run(tab, chromedp.Evaluate[int](`document.querySelectorAll('.message[data-message-id]').length`))
		require.NoError(b, err)
		require.GreaterOrEqual(b, shown, 2000, "every message is rendered")

		_, err = chromedp.Run(tab, chromedp.Evaluate[bool](transcriptProbe+`; true`))
		require.NoError(b, err)
		start := time.Now()
		c.prompt(sessionID, "/scenario stream 2000 5")
		require.NoError(b, chromedp.Do(tab, waitJSWithin(`[...document.querySelectorAll('.message[data-type="agent"][data-status="complete"] .message-text')].some(e => e.textContent.startsWith('0 1 2 ') && e.textContent.includes(' 1999'))`, time.Minute)))
		frames, err := chromedp.Run(tab, chromedp.Evaluate[float64](`window.__frames`))
		require.NoError(b, err)
		fps = frames / time.Since(start).Seconds()
		longest, err = chromedp.Run(tab, chromedp.Evaluate[float64](`window.__longest`))
		require.NoError(b, err)
	}
	b.ReportMetric(open, "open-ms")
	b.ReportMetric(page, "page-ms")
	b.ReportMetric(fps, "fps")
	b.ReportMetric(longest, "longest-task-ms")
}
