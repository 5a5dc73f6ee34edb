package faults

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// serveOptions are the flags of one `herd serve` the suite starts.
type serveOptions struct {
	// dataDir is the data directory; empty makes a fresh one.
	dataDir string
	// databaseURL selects PostgreSQL.
	databaseURL string
	// token is passed as HERD_TOKEN, as the docs advise for secrets.
	token string
	// args are further flags.
	args []string
}

// herd is one `herd serve` process on a loopback port.
type herd struct {
	t       *testing.T
	dataDir string
	addr    string
	cmd     *exec.Cmd
	// exited is closed once the process has been waited for; state is set
	// before.
	exited chan struct{}
	state  *os.ProcessState
	log    *logTail
	// agents are the agent processes seen as the server's children, kept
	// so that cleanup can end any the server left behind.
	mu     sync.Mutex // guards agents
	agents map[proc]bool
}

// listening matches the server's "listening" log line, which names the
// port the kernel chose for --addr 127.0.0.1:0.
var listening = regexp.MustCompile(`msg=listening addr=(\S+)`)

// startHerd starts `herd serve` and waits until /readyz answers 200.
func startHerd(t *testing.T, o serveOptions) *herd {
	t.Helper()
	if o.dataDir == "" {
		o.dataDir = t.TempDir()
	}
	args := []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", o.dataDir, "--demo=false", "--log-level", "info"}
	if o.databaseURL != "" {
		args = append(args, "--database-url", o.databaseURL)
	}
	args = append(args, o.args...)
	h := &herd{t: t, dataDir: o.dataDir, exited: make(chan struct{}), agents: map[proc]bool{}}
	h.cmd = exec.Command(herdBinary, args...)
	h.cmd.Env = herdEnv(o.token)
	// SIGKILL reaches the server if the test process dies without its
	// cleanup; its agents then see their stdin close.
	h.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	h.cmd.Stdout, h.cmd.Stderr = w, w
	if err := h.cmd.Start(); err != nil {
		t.Fatalf("start herd serve: %v", err)
	}
	w.Close()
	addr := make(chan string, 1)
	h.log = &logTail{}
	go h.log.read(r, addr)
	go func() {
		h.cmd.Wait() // the error is in ProcessState
		h.state = h.cmd.ProcessState
		close(h.exited)
	}()
	t.Cleanup(h.cleanup)
	select {
	case h.addr = <-addr:
	case <-h.exited:
		t.Fatalf("herd serve exited before listening (%v):\n%s", h.state, h.log.tail(20))
	case <-time.After(30 * time.Second):
		t.Fatalf("herd serve did not listen within 30 s:\n%s", h.log.tail(20))
	}
	h.waitReady(60 * time.Second)
	return h
}

// herdEnv is the test's environment without HERD_* variables (a
// developer's HERD_TOKEN would change every answer), plus the token.
func herdEnv(token string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HERD_") {
			env = append(env, kv)
		}
	}
	if token != "" {
		env = append(env, "HERD_TOKEN="+token)
	}
	return env
}

// cleanup ends the server and whatever agents it left, then shows the
// server's log when the test failed.
func (h *herd) cleanup() {
	if h.running() {
		_ = h.cmd.Process.Kill()
		<-h.exited
	}
	h.mu.Lock()
	for p := range h.agents {
		if p.alive() {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
	}
	h.mu.Unlock()
	if h.t.Failed() {
		h.t.Logf("herd serve on %s, last log lines:\n%s", h.addr, h.log.tail(40))
	}
}

// running reports whether the process has not exited.
func (h *herd) running() bool {
	select {
	case <-h.exited:
		return false
	default:
		return true
	}
}

// url is an http URL of the server.
func (h *herd) url(path string) string { return "http://" + h.addr + path }

// readyz returns /readyz's status, or 0 when it could not be asked.
func (h *herd) readyz() int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, h.url("/readyz"), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// waitReady waits until /readyz answers 200.
func (h *herd) waitReady(limit time.Duration) {
	h.t.Helper()
	deadline := time.Now().Add(limit)
	for h.readyz() != http.StatusOK {
		if !h.running() {
			h.t.Fatalf("herd serve exited before it was ready (%v):\n%s", h.state, h.log.tail(20))
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("herd serve on %s not ready within %s", h.addr, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// children returns the server's child processes (its agents) now, and
// remembers them for cleanup.
func (h *herd) children() []proc {
	h.t.Helper()
	kids, err := childrenOf(h.cmd.Process.Pid)
	if err != nil {
		h.t.Fatal(err)
	}
	h.mu.Lock()
	for _, p := range kids {
		h.agents[p] = true
	}
	h.mu.Unlock()
	return kids
}

// kill9 kills the server with SIGKILL and waits for it.
func (h *herd) kill9() {
	h.t.Helper()
	if err := h.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		h.t.Fatal(err)
	}
	<-h.exited
}

// terminate sends SIGTERM and waits up to limit for the process to exit;
// it reports how long that took and whether it exited at all.
func (h *herd) terminate(limit time.Duration) (time.Duration, bool) {
	h.t.Helper()
	start := time.Now()
	if err := h.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		h.t.Fatal(err)
	}
	select {
	case <-h.exited:
		return time.Since(start), true
	case <-time.After(limit):
		return time.Since(start), false
	}
}

// proc names a process by pid and start time, so a reused pid is not
// mistaken for it.
type proc struct {
	pid   int
	start uint64
}

// alive reports whether the process still runs (a zombie does not).
func (p proc) alive() bool {
	st, err := readStat(p.pid)
	return err == nil && st.start == p.start && st.state != 'Z'
}

// stat is what the suite reads of /proc/PID/stat.
type stat struct {
	state byte
	ppid  int
	start uint64
}

// readStat parses /proc/PID/stat; the command name may hold spaces and
// parentheses, so fields are counted after its last ')'.
func readStat(pid int) (stat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return stat{}, err
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return stat{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return stat{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	ppid, err1 := strconv.Atoi(f[1])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return stat{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return stat{state: f[0][0], ppid: ppid, start: start}, nil
}

// childrenOf lists the live processes whose parent is pid.
func childrenOf(pid int) ([]proc, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var kids []proc
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readStat(n)
		if err != nil || st.ppid != pid || st.state == 'Z' {
			continue
		}
		kids = append(kids, proc{pid: n, start: st.start})
	}
	return kids, nil
}

// survivors waits up to limit for every process in ps to end and returns
// those still alive then.
func survivors(ps []proc, limit time.Duration) []proc {
	deadline := time.Now().Add(limit)
	for {
		var alive []proc
		for _, p := range ps {
			if p.alive() {
				alive = append(alive, p)
			}
		}
		if len(alive) == 0 || time.Now().After(deadline) {
			return alive
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// logTail keeps the last lines of a server's log.
type logTail struct {
	mu sync.Mutex // guards lines
	// lines holds the newest lines, at most 200.
	lines []string
}

// read copies the server's output until it ends, sending the listening
// address once.
func (l *logTail) read(r io.ReadCloser, addr chan<- string) {
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	sent := false
	for sc.Scan() {
		line := sc.Text()
		if m := listening.FindStringSubmatch(line); m != nil && !sent {
			addr <- m[1]
			sent = true
		}
		l.mu.Lock()
		l.lines = append(l.lines, line)
		if len(l.lines) > 200 {
			l.lines = l.lines[len(l.lines)-200:]
		}
		l.mu.Unlock()
	}
}

// tail returns the last n lines.
func (l *logTail) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines[max(0, len(l.lines)-n):], "\n")
}
