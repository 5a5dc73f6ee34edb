package loadbench

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"go.uber.org/goleak"

	"github.com/herd-dev/herd/server"
	"github.com/herd-dev/herd/server/mockagent/mocktest"
)

// benchTestServeEnv makes a re-executed test binary act as `herd serve`:
// herd bench starts its servers from a binary, and here that binary is the
// test binary itself, whose servers run it as their mock agent too.
const benchTestServeEnv = "HERD_BENCH_TEST_SERVE"

func TestMain(m *testing.M) {
	mocktest.RunIfChild()
	serveIfChild()
	goleak.VerifyTestMain(m)
}

// serveIfChild returns unless this process is a bench server the tests
// started (`TEST-BINARY serve FLAGS` with benchTestServeEnv set). It then
// serves as `herd serve` would with the flags startBenchServer passes,
// until SIGTERM, and exits. herd serve's other flags and its web app are
// not needed here: the bench measures the server behind them.
func serveIfChild() {
	if os.Getenv(benchTestServeEnv) != "1" || len(os.Args) < 2 || os.Args[1] != "serve" {
		return
	}
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	// AgentNice is herd serve's default; the rest of Config defaults alike.
	cfg := server.Config{AgentNice: 19}
	fs.StringVar(&cfg.Addr, "addr", "", "listen address")
	fs.StringVar(&cfg.DataDir, "data-dir", "", "data directory")
	fs.BoolVar(&cfg.Demo, "demo", false, "seed a demo workspace")
	var level slog.Level
	fs.TextVar(&level, "log-level", slog.LevelInfo, "log level")
	_ = fs.Parse(os.Args[2:]) // ExitOnError: it exits on a bad flag
	srv, err := server.New(cfg, server.Options{
		Version: "test", MockAgent: mocktest.Profile(),
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})),
	})
	if err == nil {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err = srv.Run(ctx)
		stop()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(2)
	}
	os.Exit(0)
}
