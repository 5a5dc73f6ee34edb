package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/device"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server"
	"github.com/herd-dev/herd/web"
)

// The browser tests build app.wasm, serve it with a real server on a
// loopback port and drive Debian's Chromium headless. Outside CI they skip
// visibly when Chromium is missing; in CI (CI=true) that is a failure.

// artifactDir receives screenshots; it is git-ignored.
const artifactDir = "../../artifacts/e2e"

// firstRowProbe runs before any page script and records, in milliseconds
// since navigation start, when the first task row enters the document (the
// server renders rows into the page) and when the app has applied its live
// boot over the WebSocket (data-ready).
const firstRowProbe = `(() => {
  const check = () => {
    if (!window.__firstRowAt && document.querySelector('.task-row')) window.__firstRowAt = performance.now();
    if (!window.__liveAt && document.querySelector('#app-root[data-ready="true"]')) window.__liveAt = performance.now();
  };
  new MutationObserver(check).observe(document, {childList: true, subtree: true, attributes: true, attributeFilter: ['data-ready']});
})();`

func chromiumPath(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("HERD_TEST_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		tb.Fatal("Chromium is required when CI=true: apt-get install chromium (or set HERD_TEST_CHROMIUM)")
	}
	tb.Skip("SKIPPING browser tests: Chromium not found; apt-get install chromium or set HERD_TEST_CHROMIUM")
	return ""
}

var (
	staticOnce sync.Once
	staticDir  string
	staticErr  error
)

// testStatic returns the web assets with a freshly built app.wasm (and,
// when compress is set, its pre-compressed copies), built once per run.
func testStatic(tb testing.TB) fs.FS {
	tb.Helper()
	staticOnce.Do(func() { staticDir, staticErr = buildStatic() })
	require.NoError(tb, staticErr)
	return os.DirFS(staticDir)
}

func buildStatic() (string, error) {
	dir, err := os.MkdirTemp("", "herd-e2e-static-")
	if err != nil {
		return "", err
	}
	if err := os.CopyFS(dir, web.Static); err != nil {
		return "", fmt.Errorf("copy static assets: %w", err)
	}
	wasm := filepath.Join(dir, "app.wasm")
	os.Remove(wasm + ".gz")
	os.Remove(wasm + ".br")
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", wasm, "./cmd/wasm")
	build.Dir = "../.."
	build.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build app.wasm: %v\n%s", err, out)
	}
	compress := exec.Command("go", "run", "./cmd/precompress", wasm)
	compress.Dir = "../.."
	if out, err := compress.CombinedOutput(); err != nil {
		return "", fmt.Errorf("precompress app.wasm: %v\n%s", err, out)
	}
	return dir, nil
}

func TestMain(m *testing.M) {
	// Servers started by these tests run the mock agent as this test
	// binary (os.Executable): re-executed that way, it is the agent.
	if len(os.Args) > 1 && os.Args[1] == "mock-agent" {
		if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
			os.Exit(2)
		}
		os.Exit(0)
	}
	code := m.Run()
	if staticDir != "" {
		os.RemoveAll(staticDir)
	}
	os.Exit(code)
}

// startUIServer runs the composed server with a freshly built web app.
func startUIServer(tb testing.TB) *server.Server {
	tb.Helper()
	return startServer(tb, testStatic(tb), "")
}

// newBrowser starts headless Chromium with a fresh profile and returns a
// tab context.
func newBrowser(tb testing.TB) context.Context {
	tb.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(tb)),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(tb.TempDir()),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	// The first Run starts the browser; it must not carry a timeout.
	require.NoError(tb, chromedp.Do(ctx))
	tb.Cleanup(func() { cancelCtx(); cancelAlloc() })
	return ctx
}

// withTimeout bounds a step of a browser test.
func withTimeout(tb testing.TB, ctx context.Context) context.Context {
	tb.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	tb.Cleanup(cancel)
	return ctx
}

// waitReady waits until the app has applied its first boot response.
func waitReady() chromedp.Action[chromedp.Void] {
	return waitJS(`document.querySelector('#app-root[data-ready="true"]') !== null`)
}

// typeInto focuses the first visible element the CSS selector matches and
// types text into it. It stands in for chromedp.SendKeys, which reads the
// node's attributes without the node's lock while DOM events change them
// (a data race the race detector reports).
func typeInto(selector, text string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Focus(chromedp.CSS(selector), chromedp.NodeVisible),
		chromedp.KeyEvent(text),
	)
}

// waitJS polls a JavaScript condition until it is true.
func waitJS(cond string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(20*time.Second))(ctx, t)
		return chromedp.Void{}, err
	}
}

// visibleRows counts the task rows a person can see.
const visibleRows = `[...document.querySelectorAll('.task-row')].filter(e => e.offsetParent !== null && e.getBoundingClientRect().width > 0).length`

func rowWithTitleVisible(title string) string {
	b, _ := json.Marshal(title)
	return fmt.Sprintf(`[...document.querySelectorAll('.task-row')].some(e => e.offsetParent !== null && e.textContent.includes(%s))`, b)
}

// createTaskFromAnotherClient creates a task over a separate WebSocket.
func createTaskFromAnotherClient(tb testing.TB, srv *server.Server, title string) {
	tb.Helper()
	c := MustDialTest(tb, srv)
	boot := c.call("boot", map[string]any{})
	c.create(boot["workspace_id"].(string), title)
}

func saveScreenshot(tb testing.TB, ctx context.Context, name string) {
	tb.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(tb, err)
	require.NoError(tb, os.MkdirAll(artifactDir, 0o755))
	require.NoError(tb, os.WriteFile(filepath.Join(artifactDir, name), png, 0o644))
}

func TestBrowserDesktopListsCreatesAndFollowsTasks(t *testing.T) {
	ctx := newBrowser(t)
	srv := startUIServer(t)
	ctx = withTimeout(t, ctx)

	require.NoError(t, chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 800),
		chromedp.Navigate("http://"+srv.Addr()+"/"),
		waitReady(),
	))
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](visibleRows))
	require.NoError(t, err)
	require.Equal(t, server.DemoTaskCount, rows, "the sidebar lists the demo tasks")
	sheetShown, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const s = document.querySelector('#switcher-toggle'); return !!s && s.offsetParent !== null; })()`))
	require.NoError(t, err)
	require.False(t, sheetShown, "the desktop layout has no sheet button")

	require.NoError(t, chromedp.Do(ctx,
		typeInto("#new-task-title", "Typed in the browser"),
		waitJS(`!document.querySelector('#new-task-submit').disabled`),
		chromedp.Click(chromedp.CSS("#new-task-submit")),
		waitJS(rowWithTitleVisible("Typed in the browser")),
	))

	createTaskFromAnotherClient(t, srv, "Made by another client")
	require.NoError(t, chromedp.Do(ctx, waitJS(rowWithTitleVisible("Made by another client"))))
	saveScreenshot(t, ctx, "desktop.png")
}

func TestBrowserPhoneSheetOpensAndCloses(t *testing.T) {
	ctx := newBrowser(t)
	srv := startUIServer(t)
	ctx = withTimeout(t, ctx)

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Emulate(device.IPhone12),
		chromedp.Navigate("http://"+srv.Addr()+"/"),
		waitReady(),
	))
	size, err := chromedp.Run(ctx, chromedp.Evaluate[string](`innerWidth + "x" + innerHeight`))
	require.NoError(t, err)
	require.Equal(t, "390x844", size)
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](visibleRows))
	require.NoError(t, err)
	require.Zero(t, rows, "on a phone the switcher is hidden until opened")

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("#switcher-toggle")),
		chromedp.WaitVisible(chromedp.CSS("#switcher-sheet")),
		waitJS(visibleRows+` === `+fmt.Sprint(server.DemoTaskCount)),
	))
	createTaskFromAnotherClient(t, srv, "Arrives on the phone")
	require.NoError(t, chromedp.Do(ctx, waitJS(rowWithTitleVisible("Arrives on the phone"))))
	saveScreenshot(t, ctx, "phone.png")

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("#switcher-close")),
		chromedp.WaitNotVisible(chromedp.CSS("#switcher-sheet")),
	))
	rows, err = chromedp.Run(ctx, chromedp.Evaluate[int](visibleRows))
	require.NoError(t, err)
	require.Zero(t, rows)
}

// BenchmarkFirstTaskRow measures, in headless Chromium at 1280×800, the
// time from navigation start to the first task row and to the live boot
// being applied: cold (fresh profile) and warm (service worker installed,
// second visit). Run with -benchtime=5x.
func BenchmarkFirstTaskRow(b *testing.B) {
	srv := startUIServer(b)
	url := "http://" + srv.Addr() + "/"
	var cold, warm visitTimes
	for range b.N {
		c, w := measureFirstRow(b, newBrowser(b), url)
		cold.add(c)
		warm.add(w)
	}
	n := float64(b.N)
	b.ReportMetric(cold.row/n, "cold-row-ms")
	b.ReportMetric(warm.row/n, "warm-row-ms")
	b.ReportMetric(cold.live/n, "cold-live-ms")
	b.ReportMetric(warm.live/n, "warm-live-ms")
}

// visitTimes are milliseconds from navigation start to the first task row
// and to the live boot being applied.
type visitTimes struct{ row, live float64 }

func (v *visitTimes) add(o visitTimes) { v.row += o.row; v.live += o.live }

func measureFirstRow(tb testing.TB, browser context.Context, url string) (cold, warm visitTimes) {
	visit := func(ctx context.Context) visitTimes {
		ctx = withTimeout(tb, ctx)
		_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: firstRowProbe})
		require.NoError(tb, err)
		require.NoError(tb, chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(url), waitJS(`window.__firstRowAt > 0 && window.__liveAt > 0`)))
		times, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[window.__firstRowAt, window.__liveAt]`))
		require.NoError(tb, err)
		return visitTimes{row: times[0], live: times[1]}
	}
	cold = visit(browser)
	// Wait until the service worker controls the page and has cached the app.
	_, err := chromedp.Run(withTimeout(tb, browser), chromedp.Evaluate[bool](`navigator.serviceWorker.ready.then(() => true)`, chromedp.EvalAwaitPromise))
	require.NoError(tb, err)
	tab, cancel := chromedp.NewContext(browser)
	defer cancel()
	warm = visit(tab)
	return cold, warm
}
