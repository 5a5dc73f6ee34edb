// Package web holds herd's static browser assets, embedded in the binary:
// the stylesheet, the app icons and, once built, the WebAssembly program
// with its pre-compressed copies.
//
// The files live in web/static/. app.css, icon.svg and the PNG icons are
// committed; the PNGs are drawn by internal/iconsgen (run go generate). The
// build outputs app.wasm, app.wasm.gz and app.wasm.br are git-ignored and
// written by `make wasm` (go build for GOOS=js GOARCH=wasm, then
// go run ./cmd/precompress). The embed names the directory rather than the
// files, so this package compiles before the wasm has been built.
package web

import (
	"embed"
	"io/fs"
)

//go:generate go run ./internal/iconsgen -dir static

//go:embed static
var files embed.FS

// Static is the content of web/static/, rooted at that directory: the
// asset served at the URL /web/NAME is the file NAME of Static (so
// /web/app.css is "app.css").
var Static fs.FS = mustSub(files, "static")

// mustSub roots fsys at dir; dir is a constant that exists, so an error is
// a build defect.
func mustSub(fsys fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic(err)
	}
	return sub
}
