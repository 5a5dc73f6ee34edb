package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/device"
	"github.com/stretchr/testify/require"
)

// longTaskProbe records the longest task from now on in window.__longest
// (not the buffered ones of the page's start, which are the WebAssembly
// module's compilation) and every long task in window.__long.
const longTaskProbe = `(() => {
  window.__longest = 0; window.__long = [];
  new PerformanceObserver(l => { for (const e of l.getEntries()) { window.__long.push(Math.round(e.duration)); window.__longest = Math.max(window.__longest, e.duration); } })
    .observe({type: 'longtask'});
})();`

// BenchmarkBrowserToolContentOnPhone measures, on the phone viewport
// (390×844), a 1 MB command output and an edit with a 5,000-line new file
// and a 5,000-line file changed every 50 lines, from the prompt to the
// card on screen (output-ms, diff-ms), and the longest task the browser
// reports meanwhile (longest-task-ms: the goal is none over 200 ms). Then
// "Show all" on each, from the click to the whole of it on screen
// (all-output-ms, all-diff-ms) and the longest task of each, its layout
// included (all-output-longest-task-ms, all-diff-longest-task-ms). Run
// with -benchtime=1x.
func BenchmarkBrowserToolContentOnPhone(b *testing.B) {
	srv := startStatusServer(b, "127.0.0.1:0", b.TempDir())
	c := MustDialTest(b, srv)
	ws := c.workspace("Bench")
	var outMs, diffMs, longest, allOut, allDiff, allLongest, allOutLongest float64
	for i := range b.N {
		taskID := c.task(ws, fmt.Sprintf("Tool content %d", i))
		sessionID := c.mockSession(taskID)
		tab := withTimeout(b, newBrowser(b))
		require.NoError(b, chromedp.Do(tab, chromedp.Emulate(device.IPhone12), chromedp.Navigate("http://"+srv.Addr()+"/tasks/"+taskID), waitReady(),
			waitJS(sessionShown(sessionID))))
		size, err := chromedp.Run(tab, chromedp.Evaluate[string](`innerWidth + "x" + innerHeight`))
		require.NoError(b, err)
		require.Equal(b, "390x844", size)
		_, err = chromedp.Run(tab, chromedp.Evaluate[bool](longTaskProbe+`; true`))
		require.NoError(b, err)

		// shown times a prompt to its tool card on screen.
		shown := func(prompt, title, cond string) float64 {
			b.Helper()
			start := time.Now()
			c.prompt(sessionID, prompt)
			card := toolCard(title)
			require.NoError(b, chromedp.Do(tab, waitJSWithin(`(() => { const c = `+card+`; return !!c && `+cond+`; })()`, time.Minute)))
			return float64(time.Since(start).Microseconds()) / 1000
		}
		outMs = shown("/scenario tool-output 1000000 4", "Run make build", `c.querySelector('.tool-output').textContent.length > 0`)
		diffMs = shown("/scenario tool-diff 5000", "Edit big.txt", `c.querySelectorAll('.tool-diff').length === 2`)
		longest, err = chromedp.Run(tab, chromedp.Evaluate[float64](`window.__longest`))
		require.NoError(b, err)
		tasks, err := chromedp.Run(tab, chromedp.Evaluate[[]int](`window.__long`))
		require.NoError(b, err)
		b.Logf("long tasks while the tool calls arrived (ms): %v", tasks)

		// all times a click on a part's "Show all" to cond, in the page.
		all := func(part, cond string) float64 {
			b.Helper()
			ms, err := chromedp.Run(tab, chromedp.Evaluate[float64](`new Promise(done => {
  const t0 = performance.now();
  `+part+`.querySelector('.tool-show-all').click();
  const check = () => (`+cond+`) ? done(performance.now() - t0) : requestAnimationFrame(check);
  check();
})`, chromedp.EvalAwaitPromise))
			require.NoError(b, err)
			return ms
		}
		_, err = chromedp.Run(tab, chromedp.Evaluate[bool](`window.__longest = 0; true`))
		require.NoError(b, err)
		out := `(` + toolCard("Run make build") + `).querySelector('.tool-text')`
		allOut = all(out, out+`.querySelector('.tool-output').textContent.length === 1000000`)
		// Two frames, so the layout of what was shown is counted too.
		_, err = chromedp.Run(tab, chromedp.Evaluate[bool](`new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))`, chromedp.EvalAwaitPromise))
		require.NoError(b, err)
		outLongest, err := chromedp.Run(tab, chromedp.Evaluate[float64](`const l = window.__longest; window.__longest = 0; l`))
		require.NoError(b, err)
		diff := `(` + toolCard("Edit big.txt") + `).querySelector('.tool-diff[data-part="0"]')`
		_, err = chromedp.Run(tab, chromedp.Evaluate[bool](diff+`.querySelector('.diff-head').click(); true`))
		require.NoError(b, err)
		require.NoError(b, chromedp.Do(tab, waitJS(diff+`.querySelector('.tool-show-all') !== null`)))
		allDiff = all(diff, diffLines(diff)+` === 5001`)
		_, err = chromedp.Run(tab, chromedp.Evaluate[bool](`new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))`, chromedp.EvalAwaitPromise))
		require.NoError(b, err)
		allLongest, err = chromedp.Run(tab, chromedp.Evaluate[float64](`window.__longest`))
		require.NoError(b, err)
		allOutLongest = outLongest
		saveScreenshot(b, tab, "tool-content-bench-phone.png")
	}
	b.ReportMetric(outMs, "output-ms")
	b.ReportMetric(diffMs, "diff-ms")
	b.ReportMetric(longest, "longest-task-ms")
	b.ReportMetric(allOut, "all-output-ms")
	b.ReportMetric(allDiff, "all-diff-ms")
	b.ReportMetric(allOutLongest, "all-output-longest-task-ms")
	b.ReportMetric(allLongest, "all-diff-longest-task-ms")
}
