package webui

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/andybalholm/brotli"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testVersion is the fixed build version of the test handlers.
const testVersion = "test-build-1"

// page is the one test page; its text proves the server rendered it.
type page struct{ app.Compo }

// Render draws the page.
func (*page) Render() app.UI { return app.Div().ID("test-page").Text("rendered on the server") }

// routes registers the test page, as ui.Routes does for herd's.
func routes() { app.Route("/", func() app.Composer { return &page{} }) }

// fakeWasm is incompressible enough that the copies differ from it.
var fakeWasm = func() []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 64<<10)
	for i := range b {
		b[i] = byte(r.IntN(16)) // low entropy: compresses, but not to nothing
	}
	return b
}()

func gzipped(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	require.NoError(t, err)
	_, err = zw.Write(data)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func brotlied(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	bw := brotli.NewWriterLevel(&buf, brotli.DefaultCompression)
	_, err := bw.Write(data)
	require.NoError(t, err)
	require.NoError(t, bw.Close())
	return buf.Bytes()
}

// staticFS returns the committed assets plus, when withWasm, the program
// and both copies.
func staticFS(t *testing.T, withWasm bool) fstest.MapFS {
	t.Helper()
	fsys := fstest.MapFS{
		"app.css":               {Data: []byte("body{}")},
		"push.js":               {Data: []byte("self.herdPush = {};")},
		"icon.svg":              {Data: []byte("<svg/>")},
		"icon-192.png":          {Data: []byte("png")},
		"icon-512.png":          {Data: []byte("png")},
		"icon-maskable-512.png": {Data: []byte("png")},
	}
	if withWasm {
		fsys["app.wasm"] = &fstest.MapFile{Data: fakeWasm}
		fsys["app.wasm.gz"] = &fstest.MapFile{Data: gzipped(t, fakeWasm)}
		fsys["app.wasm.br"] = &fstest.MapFile{Data: brotlied(t, fakeWasm)}
	}
	return fsys
}

// newHandler builds the handler under test.
func newHandler(t *testing.T, fsys fstest.MapFS) http.Handler {
	t.Helper()
	h, err := New(Options{Version: testVersion, Static: fsys, Routes: routes})
	require.NoError(t, err)
	return h
}

// get performs a request against h.
func get(h http.Handler, method, path string, header http.Header) *http.Response {
	req := httptest.NewRequest(method, path, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

// body reads a response body.
func body(t *testing.T, res *http.Response) []byte {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return b
}

func TestManifestNamesLocalIconsOnly(t *testing.T) {
	h := newHandler(t, staticFS(t, true))
	res := get(h, http.MethodGet, "/manifest.webmanifest", nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	raw := body(t, res)
	assert.NotContains(t, string(raw), "http://")
	assert.NotContains(t, string(raw), "https://")

	var manifest struct {
		Name       string `json:"name"`
		ThemeColor string `json:"theme_color"`
		Icons      []struct {
			Src     string `json:"src"`
			Purpose string `json:"purpose"`
		} `json:"icons"`
	}
	require.NoError(t, json.Unmarshal(raw, &manifest))
	assert.Equal(t, "herd", manifest.Name)
	assert.Equal(t, themeColor, manifest.ThemeColor)
	srcs := map[string]string{}
	for _, ic := range manifest.Icons {
		srcs[ic.Src] = ic.Purpose
	}
	assert.Equal(t, map[string]string{
		"/web/icon-maskable-512.png": "maskable",
		"/web/icon.svg":              "",
		"/web/icon-512.png":          "",
		"/web/icon-192.png":          "",
	}, srcs)
}

func TestServiceWorkerIsServedForTheFixedVersion(t *testing.T) {
	h := newHandler(t, staticFS(t, true))
	res := get(h, http.MethodGet, "/app-worker.js", nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "application/javascript", res.Header.Get("Content-Type"))
	js := string(body(t, res))
	assert.Contains(t, js, `"app-" + "`+testVersion+`"`)
	assert.Contains(t, js, `"/web/app.wasm"`)
	assert.Contains(t, js, `"/web/icon.svg"`)
	assert.NotContains(t, js, "githubusercontent")
}

// Pages carry live rows, so the worker asks the network first for them and
// falls back to the cache only offline; static files stay cache-first.
func TestServiceWorkerFetchesPagesNetworkFirst(t *testing.T) {
	h := newHandler(t, staticFS(t, true))
	js := string(body(t, get(h, http.MethodGet, "/app-worker.js", nil)))
	assert.Contains(t, js, `event.request.mode === "navigate"`)
	assert.Contains(t, js, "respondWith(fetchPage(event.request))")
	assert.Contains(t, js, "respondWith(fetchWithCache(event.request))")
	assert.NotContains(t, js, cacheFirstFetch)
}

func TestLoaderKnowsTheRawWasmSize(t *testing.T) {
	h := newHandler(t, staticFS(t, true))
	js := string(body(t, get(h, http.MethodGet, "/app.js", nil)))
	assert.Contains(t, js, `goappWasmContentLength = "`+strconv.Itoa(len(fakeWasm))+`"`)
}

func TestWasmIsServedPrecompressed(t *testing.T) {
	fsys := staticFS(t, true)
	h := newHandler(t, fsys)
	tests := []struct {
		name           string
		acceptEncoding string
		wantEncoding   string
		wantBody       []byte
	}{
		{"brotli when br is accepted", "gzip, deflate, br, zstd", "br", fsys["app.wasm.br"].Data},
		{"gzip when only gzip is accepted", "gzip", "gzip", fsys["app.wasm.gz"].Data},
		{"gzip when br is refused with q=0", "br;q=0, gzip;q=0.8", "gzip", fsys["app.wasm.gz"].Data},
		{"brotli for a wildcard", "*", "br", fsys["app.wasm.br"].Data},
		{"identity without Accept-Encoding", "", "", fakeWasm},
		{"identity when every copy is refused", "br;q=0, gzip;q=0, *;q=0", "", fakeWasm},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := get(h, http.MethodGet, "/web/app.wasm", http.Header{"Accept-Encoding": {tt.acceptEncoding}})
			require.Equal(t, http.StatusOK, res.StatusCode)
			assert.Equal(t, tt.wantEncoding, res.Header.Get("Content-Encoding"))
			assert.Equal(t, "application/wasm", res.Header.Get("Content-Type"))
			assert.Equal(t, "Accept-Encoding", res.Header.Get("Vary"))
			assert.Equal(t, strconv.Itoa(len(tt.wantBody)), res.Header.Get("Content-Length"))
			assert.Equal(t, tt.wantBody, body(t, res))
		})
	}
}

func TestWasmAliasesAndHead(t *testing.T) {
	h := newHandler(t, staticFS(t, true))
	for _, path := range []string{"/app.wasm", "/goapp.wasm"} {
		res := get(h, http.MethodGet, path, http.Header{"Accept-Encoding": {"gzip"}})
		assert.Equal(t, http.StatusOK, res.StatusCode, path)
		assert.Equal(t, "gzip", res.Header.Get("Content-Encoding"), path)
	}
	res := get(h, http.MethodHead, "/web/app.wasm", http.Header{"Accept-Encoding": {"br"}})
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "br", res.Header.Get("Content-Encoding"))
	assert.Empty(t, body(t, res))
	assert.Equal(t, http.StatusMethodNotAllowed, get(h, http.MethodPost, "/web/app.wasm", nil).StatusCode)
}

func TestWasmRevalidatesPerEncoding(t *testing.T) {
	h := newHandler(t, staticFS(t, true))
	first := get(h, http.MethodGet, "/web/app.wasm", http.Header{"Accept-Encoding": {"br"}})
	etag := first.Header.Get("ETag")
	require.NotEmpty(t, etag)

	again := get(h, http.MethodGet, "/web/app.wasm", http.Header{"Accept-Encoding": {"br"}, "If-None-Match": {etag}})
	assert.Equal(t, http.StatusNotModified, again.StatusCode)
	other := get(h, http.MethodGet, "/web/app.wasm", http.Header{"Accept-Encoding": {"gzip"}, "If-None-Match": {etag}})
	assert.Equal(t, http.StatusOK, other.StatusCode, "a gzip client must not revalidate against the brotli copy")
}

func TestMissingWasmAnswers503WithTheFix(t *testing.T) {
	h := newHandler(t, staticFS(t, false))
	res := get(h, http.MethodGet, "/web/app.wasm", nil)
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	assert.Contains(t, string(body(t, res)), "make wasm")

	assert.Equal(t, http.StatusOK, get(h, http.MethodGet, "/", nil).StatusCode, "pages still render")
}

func TestWasmWithoutCopiesIsServedRaw(t *testing.T) {
	fsys := staticFS(t, true)
	delete(fsys, "app.wasm.br")
	delete(fsys, "app.wasm.gz")
	h := newHandler(t, fsys)
	res := get(h, http.MethodGet, "/web/app.wasm", http.Header{"Accept-Encoding": {"br, gzip"}})
	assert.Empty(t, res.Header.Get("Content-Encoding"))
	assert.Equal(t, fakeWasm, body(t, res))
}

func TestStaleCompressedCopyIsRefused(t *testing.T) {
	for _, file := range []string{"app.wasm.gz", "app.wasm.br"} {
		t.Run(file, func(t *testing.T) {
			fsys := staticFS(t, true)
			old := append([]byte("an older build "), fakeWasm...)
			if strings.HasSuffix(file, ".gz") {
				fsys[file] = &fstest.MapFile{Data: gzipped(t, old)}
			} else {
				fsys[file] = &fstest.MapFile{Data: brotlied(t, old)}
			}
			_, err := New(Options{Version: testVersion, Static: fsys, Routes: routes})
			require.Error(t, err)
			assert.Contains(t, err.Error(), file)
			assert.Contains(t, err.Error(), "make wasm")
		})
	}
}

func TestRootIsPrerendered(t *testing.T) {
	h := newHandler(t, staticFS(t, true))
	res := get(h, http.MethodGet, "/", nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	html := string(body(t, res))
	assert.Contains(t, html, "rendered on the server")
	assert.Contains(t, html, `href="/web/app.css"`)
	assert.Contains(t, html, `href="/manifest.webmanifest"`)
	assert.Contains(t, html, `<meta name="color-scheme" content="light dark">`)
	assert.NotContains(t, html, "githubusercontent")
}

func TestUnknownPathIs404(t *testing.T) {
	h := newHandler(t, staticFS(t, true))
	assert.Equal(t, http.StatusNotFound, get(h, http.MethodGet, "/no/such/page", nil).StatusCode)
}

func TestStaticAssetsAreServedWithoutListings(t *testing.T) {
	h := newHandler(t, staticFS(t, true))
	res := get(h, http.MethodGet, "/web/app.css", nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, res.Header.Get("Content-Type"), "text/css")
	assert.Equal(t, "body{}", string(body(t, res)))

	for _, path := range []string{"/web/", "/web/missing.css", "/web/../app.css"} {
		assert.Equal(t, http.StatusNotFound, get(h, http.MethodGet, path, nil).StatusCode, path)
	}
}

func TestNewValidatesOptions(t *testing.T) {
	withoutIcon := staticFS(t, false)
	delete(withoutIcon, "icon-512.png")
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"version is required", Options{Static: staticFS(t, false), Routes: routes}, "Version"},
		{"static is required", Options{Version: testVersion, Routes: routes}, "Static"},
		{"routes are required", Options{Version: testVersion, Static: staticFS(t, false)}, "Routes"},
		{"committed assets are required", Options{Version: testVersion, Static: withoutIcon, Routes: routes}, "icon-512.png"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestAcceptsFollowsQualityValues(t *testing.T) {
	tests := []struct {
		header string
		coding string
		want   bool
	}{
		{"br", "br", true},
		{"BR", "br", true},
		{"gzip, br;q=0.1", "br", true},
		{"br;q=0", "br", false},
		{"br; q=0.000", "br", false},
		{"*", "gzip", true},
		{"*;q=0", "gzip", false},
		{"*, gzip;q=0", "gzip", false},
		{"gzip;q=oops", "gzip", false},
		{"deflate", "gzip", false},
		{"", "gzip", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, accepts(tt.header, tt.coding), "%q accepts %s", tt.header, tt.coding)
	}
}
