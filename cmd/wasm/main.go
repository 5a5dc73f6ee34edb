// Command wasm is herd's browser program, built with GOOS=js GOARCH=wasm
// into web/static/app.wasm. It registers the same routes as the server and
// runs the go-app UI; built for any other target it does nothing.
package main

import (
	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/ui"
)

func main() {
	ui.Routes(nil)
	app.RunWhenOnBrowser()
}
