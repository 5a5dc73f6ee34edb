package agent

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"
)

// stderrLimit is how much of an agent's stderr an execution keeps.
const stderrLimit = 64 << 10

// tailLimit is how much of the stderr tail an error message quotes.
const tailLimit = 2 << 10

// ErrClosed is the reason of an execution ended by Close.
var ErrClosed = errors.New("agent execution closed")

// ExitError says an agent process ended before its execution was closed.
type ExitError struct {
	// State is the process's exit description ("exit status 3",
	// "signal: killed").
	State string
	// Code is the exit status, or -1 when a signal ended the process.
	Code int
	// Stderr is the end of what the agent wrote to stderr.
	Stderr string
}

// Error describes the exit with the end of the agent's stderr.
func (e *ExitError) Error() string {
	if e.Stderr == "" {
		return "agent exited: " + e.State + " (no stderr output)"
	}
	return "agent exited: " + e.State + "; stderr: " + e.Stderr
}

// ring keeps the last stderrLimit bytes written to it.
type ring struct {
	mu sync.Mutex
	// buf holds the bytes kept, oldest first; full says bytes were
	// dropped from its front. Guarded by mu.
	buf  []byte
	full bool
}

// Write keeps the tail of everything written.
func (r *ring) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(p)
	if len(p) >= stderrLimit {
		p = p[len(p)-stderrLimit:]
	}
	if over := len(r.buf) + len(p) - stderrLimit; over > 0 {
		r.buf = append(r.buf[:0], r.buf[over:]...)
		r.full = true
	}
	r.buf = append(r.buf, p...)
	return n, nil
}

// tail returns at most limit bytes from the end, starting on a whole rune
// and, when something was cut, on a whole line if one starts nearby.
func (r *ring) tail(limit int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.buf
	cut := r.full
	if len(b) > limit {
		b, cut = b[len(b)-limit:], true
	}
	if cut {
		if i := strings.IndexByte(string(b[:min(len(b), 200)]), '\n'); i >= 0 {
			b = b[i+1:]
		}
		for len(b) > 0 && !utf8.RuneStart(b[0]) {
			b = b[1:]
		}
	}
	return strings.TrimSpace(string(b))
}

// command builds the agent's command: its own process group, so teardown
// reaches every process it starts, working in dir, with the profile's
// environment on top of herd's.
func command(p Profile, dir string) *exec.Cmd {
	cmd := exec.Command(p.Command, p.Args...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if len(p.Env) > 0 {
		keys := make([]string, 0, len(p.Env))
		for k := range p.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		env := os.Environ()
		for _, k := range keys {
			env = append(env, k+"="+p.Env[k])
		}
		cmd.Env = env
	}
	return cmd
}

// signalGroup sends sig to every process in the group led by pid. A group
// that no longer exists is not an error.
func signalGroup(pid int, sig syscall.Signal) {
	if pid > 0 {
		_ = syscall.Kill(-pid, sig)
	}
}

// exitError describes how the process ended.
func exitError(state *os.ProcessState, waitErr error, stderr *ring) error {
	if state == nil {
		return fmt.Errorf("wait for agent: %w", waitErr)
	}
	return &ExitError{State: state.String(), Code: state.ExitCode(), Stderr: stderr.tail(tailLimit)}
}
