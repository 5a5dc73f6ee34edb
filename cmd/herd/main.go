// Command herd is a self-hosted control room for many coding agents: one
// binary that serves the web app and the WebSocket API, and speaks the
// protocol as a client.
//
// Usage:
//
//	herd serve [flags]   run the server (see herd serve -h)
//	herd bench [flags]   load-test a local server; prints a JSON report
//	herd version         print the version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/herd-dev/herd/server/loadbench"
	"github.com/herd-dev/herd/server/mockagent"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "herd:", err)
		}
		os.Exit(2)
	}
}

// run dispatches a subcommand.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		usage(stderr)
		return flag.ErrHelp
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stderr)
	case "bench":
		return loadbench.Run(ctx, version, args[1:], stdout, stderr)
	case "mock-agent":
		return mockagent.Run(ctx, version, args[1:], os.Stdin, stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "herd", version)
		return nil
	case "help", "-h", "-help", "--help":
		usage(stdout)
		return nil
	default:
		usage(stderr)
		return fmt.Errorf("unknown command %q", args[0])
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `herd — a control room for many coding agents

Usage:
  herd serve [flags]   run the server and web app (herd serve -h lists flags)
  herd bench [flags]   drive a local server under load, print a JSON report (herd bench -h)
  herd mock-agent      run the scripted ACP agent on stdio (--slow-start MS)
  herd version         print the version
`)
}
