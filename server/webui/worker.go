package webui

import (
	_ "embed"
	"errors"
	"strings"

	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// cacheFirstFetch is the fetch handler of go-app's default service worker:
// every request is answered from the cache when it holds a copy.
const cacheFirstFetch = `self.addEventListener("fetch", (event) => {
  event.respondWith(fetchWithCache(event.request));
});`

// pageAwareFetch keeps static files cache-first but asks the network first
// for pages: the server renders a page with live task rows, so a cached
// page would show stale rows. Offline (or after pageTimeoutMs without an
// answer) the last page fetched is served from the cache, so the installed
// app still opens as a shell and reconnects.
const pageAwareFetch = `self.addEventListener("fetch", (event) => {
  if (event.request.mode === "navigate") {
    event.respondWith(fetchPage(event.request));
    return;
  }
  event.respondWith(fetchWithCache(event.request));
});

const pageTimeoutMs = 4000;

async function fetchPage(request) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), pageTimeoutMs);
  try {
    const response = await fetch(request, { signal: controller.signal });
    if (response.ok && response.type === "basic") {
      const cache = await caches.open(cacheName);
      await cache.put(request, response.clone());
    }
    return response;
  } catch (err) {
    const cached = (await caches.match(request)) || (await caches.match("/"));
    if (cached) {
      return cached;
    }
    throw err;
  } finally {
    clearTimeout(timer);
  }
}`

// goAppPushSection starts the part of go-app's template that handles push
// and notification clicks, which runs to the template's end. herd's own
// handlers replace it: go-app's would show a second notification for every
// push and read another payload.
const goAppPushSection = "// -----------------------------------------------------------------------------\n// Push Notifications\n"

// pushHandlers are herd's push, notificationclick and
// pushsubscriptionchange handlers (see docs/protocol.md, "Attention").
//
//go:embed worker_push.js
var pushHandlers string

// serviceWorkerTemplate returns go-app's service worker template with
// pageAwareFetch in place of its cache-first fetch handler and
// pushHandlers in place of its push section.
func serviceWorkerTemplate() (string, error) {
	tmpl := app.DefaultAppWorkerJS
	cut := strings.Index(tmpl, goAppPushSection)
	if !strings.Contains(tmpl, cacheFirstFetch) || cut < 0 {
		return "", errors.New("webui: go-app's service worker template changed shape; review worker.go")
	}
	return strings.Replace(tmpl[:cut], cacheFirstFetch, pageAwareFetch, 1) + pushHandlers, nil
}
