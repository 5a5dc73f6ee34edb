// Package webui serves herd's browser app: the go-app handler (pages
// rendered on the server, the PWA manifest, the service worker, the loader
// scripts), the static assets under /web/, and the WebAssembly program,
// pre-compressed.
//
// go-app emits absolute URLs (/app.js, /manifest.webmanifest, /web/...),
// so the handler must own the site root: the server mounts it as the
// catch-all after its own routes (/ws, /api/..., /healthz...).
//
// /web/app.wasm (and go-app's aliases /app.wasm and /goapp.wasm) is never
// compressed per request. New finds app.wasm and its .br and .gz copies in
// Options.Static, checks that each copy decompresses to app.wasm exactly,
// and each request gets the smallest copy its Accept-Encoding allows, with
// Content-Encoding, Vary: Accept-Encoding, Content-Type: application/wasm
// and the copy's Content-Length.
package webui

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strconv"
	"strings"

	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// Page identity and colours, shared by the HTML page and the manifest.
const (
	name            = "herd"
	description     = "Control room for coding agents working on many tasks in parallel."
	themeColor      = "#0f766e"
	backgroundColor = "#f6f7f9"
)

// requiredAssets must exist in Options.Static: the page and the manifest
// point at them, and the service worker fails to install without them.
var requiredAssets = []string{"app.css", "push.js", "icon.svg", "icon-192.png", "icon-512.png", "icon-maskable-512.png"}

// Options configures New.
type Options struct {
	// Version identifies this build. It must be fixed per build: browsers
	// compare it to decide whether an update is available, so a value that
	// changed on every restart would make every client reload its cache.
	Version string
	// Static holds the assets served under /web/, rooted so that the file
	// NAME is served at /web/NAME (web.Static).
	Static fs.FS
	// Routes registers the app's pages (ui.Routes). go-app answers 404 for
	// a page path that is not registered on the server too.
	Routes func()
}

// New validates opts, registers the routes and returns the handler for
// the site root.
func New(opts Options) (http.Handler, error) {
	switch {
	case opts.Version == "":
		return nil, errors.New("webui: Options.Version is required (a fixed per-build version)")
	case opts.Static == nil:
		return nil, errors.New("webui: Options.Static is required")
	case opts.Routes == nil:
		return nil, errors.New("webui: Options.Routes is required")
	}
	for _, asset := range requiredAssets {
		if _, err := fs.Stat(opts.Static, asset); err != nil {
			return nil, fmt.Errorf("webui: static asset %s: %w", asset, err)
		}
	}
	wasm, err := loadWasm(opts.Static, opts.Version)
	if err != nil {
		return nil, fmt.Errorf("webui: %w", err)
	}

	opts.Routes()
	worker, err := serviceWorkerTemplate()
	if err != nil {
		return nil, err
	}
	h := &app.Handler{
		Name:            name,
		ShortName:       name,
		Title:           name,
		Description:     description,
		Lang:            "en",
		ThemeColor:      themeColor,
		BackgroundColor: backgroundColor,
		LoadingLabel:    "Starting live updates… {progress}%",
		Icon: app.Icon{
			Default:  "/web/icon-192.png",
			Large:    "/web/icon-512.png",
			Maskable: "/web/icon-maskable-512.png",
			SVG:      "/web/icon.svg",
		},
		Styles: []string{"/web/app.css"},
		// push.js is the app's bridge to Web Push; the service worker
		// imports it as well, and caches it as it caches every script.
		Scripts:            []string{"/web/push.js"},
		CacheableResources: []string{"/web/icon.svg"},
		RawHeaders:         []string{`<meta name="color-scheme" content="light dark">`},
		Version:            opts.Version,
		Resources:          staticResolver{fsys: opts.Static},
		// Pages carry live data; see worker.go.
		ServiceWorkerTemplate: worker,
	}
	if wasm != nil {
		h.WasmContentLength = strconv.FormatInt(wasm.rawSize, 10)
	}
	return &handler{app: h, wasm: wasm}, nil
}

// handler routes the WebAssembly paths to the pre-compressed files and
// everything else to go-app.
type handler struct {
	app *app.Handler
	// wasm is nil when app.wasm has not been built.
	wasm *wasmFiles
}

// ServeHTTP implements http.Handler.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/web/app.wasm", "/app.wasm", "/goapp.wasm":
		h.serveWasm(w, r)
	default:
		h.app.ServeHTTP(w, r)
	}
}

// serveWasm answers a request for the WebAssembly program.
func (h *handler) serveWasm(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if h.wasm == nil {
		w.Header().Set("Cache-Control", "no-store")
		http.Error(w, "app.wasm has not been built: run `make wasm`, then restart the server.", http.StatusServiceUnavailable)
		return
	}
	h.wasm.serve(w, r)
}

// staticResolver is go-app's ResourceResolver for herd: it keeps /web/...
// URLs as they are (go-app's LocalDir would prefix them with a directory)
// and serves them from an fs.FS rooted at the static directory, so the
// assets can be embedded in the binary.
type staticResolver struct {
	fsys fs.FS
}

// Resolve returns the URL of a resource path: itself, or "/" for the root.
func (staticResolver) Resolve(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

// ServeHTTP serves the file named by the path after /web/. Directories
// and paths that are not valid file names answer 404.
func (s staticResolver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, name, ok := strings.Cut(r.URL.Path, "/web/")
	if !ok || !fs.ValidPath(name) {
		http.NotFound(w, r)
		return
	}
	info, err := fs.Stat(s.fsys, name)
	if err != nil || info.IsDir() {
		http.NotFound(w, r)
		return
	}
	http.ServeFileFS(w, r, s.fsys, name)
}
