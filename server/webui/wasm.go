package webui

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strconv"
	"strings"

	"github.com/andybalholm/brotli"
)

// wasmName is the WebAssembly program in Options.Static.
const wasmName = "app.wasm"

// encodedWasm is a pre-compressed copy of the program, in order of
// preference: the first one a request accepts is served.
var encodedWasm = []struct {
	coding string
	suffix string
	open   func(io.Reader) (io.Reader, error)
}{
	{coding: "br", suffix: ".br", open: func(r io.Reader) (io.Reader, error) { return brotli.NewReader(r), nil }},
	{coding: "gzip", suffix: ".gz", open: func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) }},
}

// wasmFiles is the program and its verified copies.
type wasmFiles struct {
	fsys    fs.FS
	rawSize int64
	// variants holds the copies that exist, in order of preference.
	variants []variant
	// etag is the strong validator of the raw program; each copy appends
	// its coding.
	etag string
}

// variant is one servable copy; coding is empty for the raw program.
type variant struct {
	coding string
	file   string
}

// loadWasm finds the program and its copies. It returns nil, nil when the
// program has not been built, and an error when a copy does not decompress
// to the program (a stale build: serving it would run old code).
func loadWasm(fsys fs.FS, version string) (*wasmFiles, error) {
	info, err := fs.Stat(fsys, wasmName)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", wasmName, err)
	}
	wf := &wasmFiles{fsys: fsys, rawSize: info.Size(), etag: version}
	for _, enc := range encodedWasm {
		file := wasmName + enc.suffix
		same, err := decodesTo(fsys, file, enc.open)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return nil, fmt.Errorf("check %s: %w", file, err)
		case !same:
			return nil, fmt.Errorf("%s does not match %s (a stale build): run `make wasm`", file, wasmName)
		}
		wf.variants = append(wf.variants, variant{coding: enc.coding, file: file})
	}
	wf.variants = append(wf.variants, variant{file: wasmName})
	return wf, nil
}

// decodesTo reports whether file, decoded by open, equals the program.
func decodesTo(fsys fs.FS, file string, open func(io.Reader) (io.Reader, error)) (bool, error) {
	enc, err := fsys.Open(file)
	if err != nil {
		return false, err
	}
	defer enc.Close()
	raw, err := fsys.Open(wasmName)
	if err != nil {
		return false, err
	}
	defer raw.Close()
	decoded, err := open(enc)
	if err != nil {
		return false, err
	}
	return sameBytes(decoded, raw)
}

// sameBytes compares two streams without holding either in memory.
func sameBytes(a, b io.Reader) (bool, error) {
	const chunk = 64 << 10
	bufA, bufB := make([]byte, chunk), make([]byte, chunk)
	for {
		n, errA := io.ReadFull(a, bufA)
		m, errB := io.ReadFull(b, bufB)
		if !bytes.Equal(bufA[:n], bufB[:m]) {
			return false, nil
		}
		endA := errors.Is(errA, io.EOF) || errors.Is(errA, io.ErrUnexpectedEOF)
		endB := errors.Is(errB, io.EOF) || errors.Is(errB, io.ErrUnexpectedEOF)
		switch {
		case errA != nil && !endA:
			return false, errA
		case errB != nil && !endB:
			return false, errB
		case endA || endB:
			return endA && endB, nil
		}
	}
}

// serve writes the copy the request accepts best. Range requests are not
// honoured: the program is always fetched whole.
func (wf *wasmFiles) serve(w http.ResponseWriter, r *http.Request) {
	v := wf.pick(r.Header.Get("Accept-Encoding"))
	f, err := wf.fsys.Open(v.file)
	if err != nil {
		http.Error(w, "app.wasm is unreadable", http.StatusInternalServerError)
		return
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		http.Error(w, "app.wasm is unreadable", http.StatusInternalServerError)
		return
	}

	etag := wf.etag
	if v.coding != "" {
		etag += "-" + v.coding
	}
	etag = `"` + etag + `"`
	hdr := w.Header()
	hdr.Set("Vary", "Accept-Encoding")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("ETag", etag)
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hdr.Set("Content-Type", "application/wasm")
	if v.coding != "" {
		hdr.Set("Content-Encoding", v.coding)
	}
	hdr.Set("Content-Length", strconv.FormatInt(info.Size(), 10))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = io.Copy(w, f)
	}
}

// etagMatches reports whether an If-None-Match header names etag (weak
// comparison, as RFC 9110 prescribes for If-None-Match) or is "*".
func etagMatches(header, etag string) bool {
	for tag := range strings.SplitSeq(header, ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if tag == etag || tag == "*" {
			return true
		}
	}
	return false
}

// pick returns the preferred copy that acceptEncoding allows; the raw
// program is always allowed.
func (wf *wasmFiles) pick(acceptEncoding string) variant {
	for _, v := range wf.variants {
		if v.coding == "" || accepts(acceptEncoding, v.coding) {
			return v
		}
	}
	return wf.variants[len(wf.variants)-1]
}

// accepts reports whether an Accept-Encoding header allows coding: named
// with a non-zero quality, or covered by "*" with a non-zero quality and
// not named with quality zero.
func accepts(header, coding string) bool {
	wildcard := false
	for part := range strings.SplitSeq(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		name = strings.ToLower(strings.TrimSpace(name))
		if name != coding && name != "*" {
			continue
		}
		ok := qualityAbove0(params)
		if name == coding {
			return ok
		}
		wildcard = ok
	}
	return wildcard
}

// qualityAbove0 reports whether the parameters of one Accept-Encoding
// entry leave it acceptable: absent q means 1, an unreadable q means no
// (the raw program is always a safe answer).
func qualityAbove0(params string) bool {
	for p := range strings.SplitSeq(params, ";") {
		key, val, _ := strings.Cut(strings.TrimSpace(p), "=")
		if strings.EqualFold(strings.TrimSpace(key), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
			return err == nil && q > 0
		}
	}
	return true
}
