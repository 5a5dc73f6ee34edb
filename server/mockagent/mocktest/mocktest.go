// Package mocktest makes a test binary its own mock agent, so the tests of
// packages that start agents need no herd binary: Profile is the built-in
// mock profile run as the test binary, and RunIfChild, called first in
// TestMain, turns such a child into the mock agent before any test runs.
//
//	func TestMain(m *testing.M) {
//		mocktest.RunIfChild()
//		goleak.VerifyTestMain(m)
//	}
package mocktest

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/mockagent"
)

// childEnv marks a process Profile started, with the first argument
// "mock-agent"; both must be there.
const childEnv = "HERD_MOCKTEST_AGENT"

// Profile is the built-in mock profile (agent.MockProfileID) run as this
// executable with args, the mock agent's flags (--slow-start MS). Its
// command line reads `TEST-BINARY mock-agent ARGS`, as herd's own reads
// `herd mock-agent ARGS`. The test binary must call RunIfChild first in
// its TestMain; a child that did not (and so runs the tests) panics here
// rather than start children of its own without end.
func Profile(args ...string) agent.Profile {
	if os.Getenv(childEnv) == "1" {
		panic("mocktest: a mock agent child is running tests: call mocktest.RunIfChild first in TestMain")
	}
	exe, err := os.Executable()
	if err != nil {
		// Linux reads it from /proc/self/exe; without it no agent can start.
		panic(fmt.Sprintf("mocktest: find the test binary: %v", err))
	}
	p := agent.MockProfile(exe, append([]string{"mock-agent"}, args...)...)
	// Built with -race, a program sleeps a second before it exits so that
	// other threads can still report races; an agent exits at the end of
	// every test that starts one, and would add that second to each.
	// Without -race GORACE is ignored.
	gorace := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	p.Env = map[string]string{childEnv: "1", "GORACE": gorace}
	return p
}

// RunIfChild returns at once in a test binary that Profile did not start.
// In one it did, it runs the mock agent on stdio and exits, as
// `herd mock-agent` does: status 0 when stdin closes or SIGTERM arrives,
// 2 on bad flags. It never returns there, so the child runs no test. A
// test binary started as `mock-agent` without Profile's environment (a
// test replaced the profile's Env) exits with status 2 too, saying so,
// rather than run the tests.
func RunIfChild() {
	if len(os.Args) < 2 || os.Args[1] != "mock-agent" {
		return
	}
	if os.Getenv(childEnv) != "1" {
		fmt.Fprintf(os.Stderr, "mock-agent: %s is not set: keep the environment of mocktest.Profile\n", childEnv)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := mockagent.Run(ctx, "test", os.Args[2:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mock-agent:", err)
		os.Exit(2)
	}
	os.Exit(0)
}
