package loadbench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// benchServer is a `herd serve` child process on a loopback port with a
// fresh data directory. Its agents (mock agents, each in its own process
// group) are its children; stop ends them with it.
type benchServer struct {
	addr    string
	dataDir string
	cmd     *exec.Cmd
	log     *logTail
	exited  chan struct{} // closed when the process has been waited for
	waitErr error         // set before exited closes
	http    *http.Client
	logFile *os.File // the -server-log file, or nil
}

// serverShutdown records how a bench server ended.
type serverShutdown struct {
	Graceful bool    `json:"graceful"` // exited after SIGTERM within the limit
	Ms       float64 `json:"ms"`
	// Leftover counts processes of the server's tree still alive after it
	// exited; the bench kills them.
	Leftover int `json:"leftover_processes"`
	// LogLines counts lines the server wrote to stderr (level warn and
	// above); LogTail holds the last few.
	LogLines int      `json:"log_lines"`
	LogTail  []string `json:"log_tail,omitempty"`
}

// startBenchServer starts bin as `herd serve` and waits until /readyz
// answers 200. Environment variables named HERD_* are not passed on
// (a token or a slow mock agent would change what is measured), except
// HERD_BENCH_*.
func startBenchServer(ctx context.Context, bin, logFile string, progress io.Writer) (*benchServer, error) {
	dir, err := os.MkdirTemp("", "herd-bench-")
	if err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &benchServer{
		addr:    net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		dataDir: dir,
		log:     &logTail{},
		exited:  make(chan struct{}),
		http:    &http.Client{Timeout: 10 * time.Second},
	}
	s.cmd = exec.Command(bin, "serve", "--addr", s.addr, "--data-dir", dir, "--demo=false", "--log-level", "warn")
	s.cmd.Env = benchServerEnv(os.Environ())
	var out io.Writer = s.log
	if logFile != "" {
		f, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("-server-log: %w", err)
		}
		s.logFile = f
		fmt.Fprintf(f, "=== herd serve --addr %s (%s)\n", s.addr, time.Now().UTC().Format(time.RFC3339))
		out = io.MultiWriter(s.log, f)
	}
	s.cmd.Stdout = out
	s.cmd.Stderr = out
	// Its own process group, so stop reaches it alone; Pdeathsig ends it
	// if the bench dies without cleaning up.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		s.closeLog()
		return nil, fmt.Errorf("start %s serve: %w", bin, err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()
	fmt.Fprintf(progress, "bench: server pid %d on %s, data in %s\n", s.cmd.Process.Pid, s.addr, dir)
	if err := s.waitReady(ctx); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// benchServerEnv drops HERD_* variables other than HERD_BENCH_*.
func benchServerEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if strings.HasPrefix(kv, "HERD_") && !strings.HasPrefix(kv, "HERD_BENCH_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// freePort asks the kernel for a free loopback port. Another process could
// take it before the server binds it; the server would then exit and
// waitReady says so.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitReady polls /readyz until it answers 200, the process exits, or 60 s
// pass.
func (s *benchServer) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.addr+"/readyz", nil)
		if resp, err := s.http.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.exited:
			return fmt.Errorf("server exited before it was ready (%v): %s", s.waitErr, strings.Join(s.log.lines(5), " | "))
		case <-ctx.Done():
			return fmt.Errorf("server not ready on %s: %w", s.addr, ctx.Err())
		case <-tick.C:
		}
	}
}

func (s *benchServer) pid() int { return s.cmd.Process.Pid }

// alive reports whether the server process still runs.
func (s *benchServer) alive() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// metrics scrapes /metrics into a map from series (name with labels, as
// printed) to value.
func (s *benchServer) metrics(ctx context.Context) (map[string]float64, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.addr+"/metrics", nil)
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape metrics: HTTP %d", resp.StatusCode)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out, sc.Err()
}

// stop ends the server: SIGTERM for a graceful shutdown (which stops its
// agents), then SIGKILL for the server and anything of its tree that is
// left after the shutdown limit. The data directory is removed.
func (s *benchServer) stop() serverShutdown {
	start := time.Now()
	tree := descendants(s.pid())
	var out serverShutdown
	if s.alive() {
		_ = syscall.Kill(-s.pid(), syscall.SIGTERM)
		select {
		case <-s.exited:
			out.Graceful = true
		case <-time.After(20 * time.Second):
			tree = append(tree, descendants(s.pid())...)
			_ = syscall.Kill(-s.pid(), syscall.SIGKILL)
			<-s.exited
		}
	}
	out.Ms = ms(time.Since(start))
	// Agents see their stdin close when the server goes; give them a moment.
	deadline := time.Now().Add(3 * time.Second)
	for _, p := range tree {
		for processAlive(p) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if processAlive(p) {
			out.Leftover++
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
	out.LogLines = s.log.count()
	out.LogTail = s.log.lines(5)
	s.closeLog()
	os.RemoveAll(s.dataDir)
	return out
}

func (s *benchServer) closeLog() {
	if s.logFile != nil {
		s.logFile.Close()
	}
}

// logTail keeps the last lines a server wrote and counts them all.
type logTail struct {
	mu      sync.Mutex // guards the fields below
	partial []byte
	last    []string
	n       int
}

const logTailLines = 20

func (l *logTail) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		line := string(l.partial[:i])
		l.partial = l.partial[i+1:]
		l.n++
		if len(line) > 500 {
			line = line[:500] + "…"
		}
		l.last = append(l.last, line)
		if len(l.last) > logTailLines {
			l.last = l.last[1:]
		}
	}
	if len(l.partial) > 64<<10 {
		l.partial = l.partial[:0]
	}
	return len(p), nil
}

func (l *logTail) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// lines returns up to n of the last lines.
func (l *logTail) lines(n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.last[max(0, len(l.last)-n):]...)
}
