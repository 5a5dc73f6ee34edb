package webui

import (
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

// serviceWorkerTemplate returns go-app's service worker template with
// pageAwareFetch in place of its cache-first fetch handler.
func serviceWorkerTemplate() (string, error) {
	if !strings.Contains(app.DefaultAppWorkerJS, cacheFirstFetch) {
		return "", errors.New("webui: go-app's service worker template changed shape; review worker.go")
	}
	return strings.Replace(app.DefaultAppWorkerJS, cacheFirstFetch, pageAwareFetch, 1), nil
}
