package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/device"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/gitcli/gittest"
)

// loaderProbe records, as soon as the document is parsed, where go-app's
// loading note sits while the WebAssembly loads.
const loaderProbe = `document.addEventListener('DOMContentLoaded', () => {
  const l = document.getElementById('app-wasm-loader');
  if (l) { const r = l.getBoundingClientRect(); window.__loaderRect = {w: r.width, h: r.height}; }
});`

func TestBrowserFirstScreenIsUsableBeforeTheAppRuns(t *testing.T) {
	atEveryViewport(t, func(t *testing.T, v viewport) {
		srv := startStatusServer(t, "127.0.0.1:0", t.TempDir())
		c := MustDialTest(t, srv)
		ws := c.workspace("First run")
		taskID := c.task(ws, "Read me before the app runs")

		// While the app loads, its note covers no more than a corner.
		tab := withTimeout(t, newBrowser(t))
		_, err := chromedp.Call(tab, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: loaderProbe})
		require.NoError(t, err)
		view := chromedp.EmulateViewport(1280, 800)
		if v.phone {
			view = chromedp.Emulate(device.IPhone12)
		}
		require.NoError(t, chromedp.Do(tab, view, chromedp.Navigate("http://"+srv.Addr()+"/"), waitJS(`window.__loaderRect !== undefined`)))
		rect, err := chromedp.Run(tab, chromedp.Evaluate[map[string]float64](`window.__loaderRect`))
		require.NoError(t, err)
		require.Less(t, rect["h"], 60.0, "the loading note is a small pill, not a splash: %v", rect)
		require.Less(t, rect["w"], 320.0, "the loading note is a small pill, not a splash: %v", rect)

		// Without the app (wasm=false is go-app's switch), the server's rows
		// are links that open the server-rendered task.
		require.NoError(t, chromedp.Do(tab, chromedp.Navigate("http://"+srv.Addr()+"/?wasm=false"), waitJS(`document.readyState === 'complete'`)))
		row := fmt.Sprintf(`a.task-row[data-task-id=%q]`, taskID)
		if v.phone {
			// The phone's sheet needs the app; its rows are in the page for
			// the app to show. The task page itself is what counts.
			require.NoError(t, chromedp.Do(tab, chromedp.Navigate("http://"+srv.Addr()+"/tasks/"+taskID+"?wasm=false"), waitJS(`document.readyState === 'complete'`)))
		} else {
			// The row is on top where a person clicks, and is a link to the
			// task; following it loads the server's page of the task.
			require.NoError(t, chromedp.Do(tab,
				waitJS(fmt.Sprintf(`(() => { const a = document.querySelector(%s); if (!a) return false;
  const r = a.getBoundingClientRect(); return document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2).closest('a') === a; })()`, jsString(row))),
			))
			href, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.querySelector(`+jsString(row)+`).getAttribute('href')`))
			require.NoError(t, err)
			require.Equal(t, "/tasks/"+taskID, href)
			require.NoError(t, chromedp.Do(tab, chromedp.Navigate("http://"+srv.Addr()+href+"?wasm=false"), waitJS(`document.readyState === 'complete'`)))
		}
		require.NoError(t, chromedp.Do(tab, waitJS(`(document.querySelector('#detail-title') || {}).textContent === 'Read me before the app runs'`)))
		png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
		require.NoError(t, err)
		saveArtifact(t, "firstrun-before-app-"+v.name+".png", png)
	})
}

func TestBrowserNewTaskFocusesTheNextStepAndKeepsDraftsPerTask(t *testing.T) {
	atEveryViewport(t, func(t *testing.T, v viewport) {
		isolateGit(t)
		srv := startStatusServer(t, "127.0.0.1:0", t.TempDir())
		c := MustDialTest(t, srv)
		ws := c.workspace("Drafts")
		other := c.task(ws, "Other task")
		c.mockSession(other)
		repo := gittest.Init(t)
		wd, err := os.Getwd()
		require.NoError(t, err)
		relative, err := filepath.Rel(wd, repo)
		require.NoError(t, err)

		p := openStatusPage(t, v, "http://"+srv.Addr()+"/", "firstrun-drafts")
		// A relative path that names nothing is refused at its field, with
		// the path the server resolved.
		missing := filepath.Join(filepath.Dir(relative), "no-such-repo")
		p.do(
			typeInto("#new-task-title", "Made in the form"),
			chromedp.Click(chromedp.CSS("#new-task-repo-add")),
			typeInto("#new-task-repo-path-0", missing),
			chromedp.Click(chromedp.CSS("#new-task-submit")),
			waitJS(`document.querySelector('#new-task-repo-path-0-error') !== null`),
			waitJS(fmt.Sprintf(`document.querySelector('#new-task-repo-path-0-error code').textContent === %s`, jsString(filepath.Join(wd, missing)))),
		)
		p.screenshot("refused-path")

		// A relative path to a repository is taken from the server's
		// directory; the new task opens with Start session focused, and
		// starting one focuses the composer.
		p.do(
			runJS(`const el = document.querySelector('#new-task-repo-path-0'); el.value = `+jsString(relative)+`; el.dispatchEvent(new Event('input', {bubbles: true}))`),
			chromedp.Click(chromedp.CSS("#new-task-submit")),
			waitJS(`location.pathname.startsWith('/tasks/')`),
			waitJS(`document.activeElement && document.activeElement.id === 'session-start'`),
		)
		taskID := evalOn[string](p, `location.pathname.split('/')[2]`)
		got := c.call("task.get", map[string]any{"task_id": taskID})
		require.Equal(t, repo, got["repositories"].([]any)[0].(map[string]any)["path"], "stored as the absolute path")
		p.do(
			chromedp.Click(chromedp.CSS("#session-start")),
			waitJS(sessionInState("WAITING_FOR_INPUT")),
			waitJS(`document.activeElement && document.activeElement.id === 'composer-input'`),
		)

		// A draft stays with its task across a task switch and a reload.
		p.do(typeInto("#composer-input", "half a thought"))
		p.openTask(other)
		p.do(waitJS(pathIs("/tasks/"+other)), waitJS(`document.querySelector('#composer-input') !== null`))
		require.Equal(t, "", evalOn[string](p, `document.querySelector('#composer-input').value`), "another task has its own draft")
		p.openTask(taskID)
		p.do(waitJS(pathIs("/tasks/"+taskID)), waitJS(`(document.querySelector('#composer-input') || {}).value === 'half a thought'`))
		p.do(chromedp.Reload(), waitReady(), waitJS(`(document.querySelector('#composer-input') || {}).value === 'half a thought'`))
		p.screenshot("draft-kept")
	})
}
