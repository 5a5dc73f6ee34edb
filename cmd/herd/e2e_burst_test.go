package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// burstProbe counts animation frames and long tasks (main-thread work over
// 50 ms) from the moment it is installed.
const burstProbe = `window.__frames = 0; window.__longTasks = 0; window.__longestTask = 0;
(function tick() { window.__frames++; requestAnimationFrame(tick); })();
new PerformanceObserver(list => { for (const e of list.getEntries()) {
  window.__longTasks++; window.__longestTask = Math.max(window.__longestTask, e.duration);
} }).observe({entryTypes: ['longtask']});
window.__burstStart = performance.now();`

// BenchmarkBrowserReasoningBurst sends the 30,000-chunk reasoning burst to
// a session open in headless Chromium (1280×800) and checks the reasoning
// shown in the page byte for byte. It reports how long the page took to
// show the complete reasoning, how many frames it rendered meanwhile
// (frames/s) and its long tasks: the UI stays responsive when frames keep
// coming and no long task stalls it.
func BenchmarkBrowserReasoningBurst(b *testing.B) {
	const chunks = 30000
	var want strings.Builder
	for i := range chunks {
		want.WriteString(strconv.Itoa(i) + " ")
	}
	srv := startUIServer(b)
	var ms, fps, longTasks, longest float64
	for range b.N {
		ctx := openNewSession(b, srv, false)
		mustDo(b, ctx,
			runJS(burstProbe),
			sendPrompt("/scenario reasoning-burst "+strconv.Itoa(chunks)),
			waitJS(`document.querySelector('.message[data-type="thinking"][data-status="complete"]') !== null && `+sessionInState("WAITING_FOR_INPUT")),
		)
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('.message[data-type="thinking"] .message-text').textContent`))
		require.NoError(b, err)
		require.Equal(b, want.String(), got, "the reasoning shown in the page is byte-exact")
		m, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[performance.now() - window.__burstStart, window.__frames, window.__longTasks, window.__longestTask]`))
		require.NoError(b, err)
		ms += m[0]
		fps += m[1] / (m[0] / 1000)
		longTasks += m[2]
		longest = max(longest, m[3])
	}
	n := float64(b.N)
	b.ReportMetric(ms/n, "shown-ms")
	b.ReportMetric(fps/n, "frames/s")
	b.ReportMetric(longTasks/n, "long-tasks")
	b.ReportMetric(longest, "longest-task-ms")
}
