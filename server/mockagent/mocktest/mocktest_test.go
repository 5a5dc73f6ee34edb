package mocktest

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/herd-dev/herd/server/agent"
)

func TestMain(m *testing.M) {
	RunIfChild()
	goleak.VerifyTestMain(m)
}

// command is p as a process with stdout and stderr captured.
func command(p agent.Profile) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	cmd := exec.Command(p.Command, p.Args...)
	cmd.Env = os.Environ()
	for k, v := range p.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return cmd, &stdout, &stderr
}

func TestProfileRunsThisBinaryAsTheMockAgent(t *testing.T) {
	p := Profile("--slow-start", "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != agent.MockProfileID || p.Provider != "mock" || p.Command != exe ||
		strings.Join(p.Args, " ") != "mock-agent --slow-start 1" || !p.Available() ||
		!strings.HasSuffix(p.Env["GORACE"], "atexit_sleep_ms=0") {
		t.Fatalf("profile = %+v", p)
	}

	cmd, _, stderr := command(p)
	cmd.Stdout = nil
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if _, err := stdin.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n")); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- line
	}()
	select {
	case line := <-lines:
		if !strings.Contains(line, `"id":1`) || !strings.Contains(line, `"name":"herd-mock-agent"`) {
			t.Fatalf("initialize answered %q", line)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer to initialize within 10s")
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the agent did not exit cleanly when its stdin closed: %v\n%s", err, stderr)
	}
}

// The child is the agent and nothing else: it runs no test (a test run
// would print PASS on stdout, where only ACP may go) and exits as
// `herd mock-agent` does.
func TestTheChildRunsNoTests(t *testing.T) {
	cmd, stdout, _ := command(Profile())
	cmd.Stdin = strings.NewReader("")
	if err := cmd.Run(); err != nil {
		t.Fatalf("with stdin closed: %v", err)
	}
	if stdout.Len() != 0 {
		t.Fatalf("the child wrote %q on stdout", stdout.String())
	}

	cmd, stdout, stderr := command(Profile("--slow-start", "-1"))
	cmd.Stdin = strings.NewReader("")
	var exit *exec.ExitError
	if err := cmd.Run(); !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("bad flag: err = %v, want exit status 2", err)
	}
	if stdout.Len() != 0 || !strings.Contains(stderr.String(), "usage: herd mock-agent") {
		t.Fatalf("bad flag: stdout %q, stderr %q", stdout.String(), stderr.String())
	}

	lost := Profile()
	lost.Env = nil
	cmd, stdout, stderr = command(lost)
	cmd.Stdin = strings.NewReader("")
	if err := cmd.Run(); !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("without its environment: err = %v, want exit status 2", err)
	}
	if stdout.Len() != 0 || !strings.Contains(stderr.String(), childEnv+" is not set") {
		t.Fatalf("without its environment: stdout %q, stderr %q", stdout.String(), stderr.String())
	}
}

// A child whose TestMain forgot RunIfChild runs the tests, and they would
// start children of their own: Profile stops that at once.
func TestProfilePanicsInAChildThatRunsTests(t *testing.T) {
	t.Setenv(childEnv, "1")
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "RunIfChild") {
			t.Fatalf("recovered %v, want a panic naming RunIfChild", r)
		}
	}()
	Profile()
}
