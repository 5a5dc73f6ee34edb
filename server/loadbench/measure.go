package loadbench

// What the bench reads about the server while it runs: its memory and
// CPU time from /proc, its agents (the processes below it), the kernel's
// TCP buffers, and periodic samples of all that.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// rssKiB reads the server's resident set (VmRSS) from /proc.
func (s *benchServer) rssKiB() (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", s.pid()))
	if err != nil {
		return 0, fmt.Errorf("read server RSS: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			fields := strings.Fields(v)
			if len(fields) == 0 {
				break
			}
			return strconv.ParseInt(fields[0], 10, 64)
		}
	}
	return 0, errors.New("read server RSS: no VmRSS line in /proc status")
}

// procStat returns the fields of /proc/PID/stat that follow the command
// name, which may contain spaces: stat's field 3 (state) is [0], field 4
// (ppid) [1], fields 14 and 15 (utime, stime) [11] and [12].
func procStat(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, errors.New("malformed /proc stat")
	}
	return strings.Fields(string(b[i+1:])), nil
}

// processCPU reads a process's user+system CPU time. /proc/PID/stat
// counts clock ticks, 100 per second on Linux.
func processCPU(pid int) (time.Duration, error) {
	fields, err := procStat(pid)
	if err != nil {
		return 0, fmt.Errorf("read CPU time: %w", err)
	}
	if len(fields) < 13 {
		return 0, errors.New("read CPU time: short /proc stat")
	}
	ut, err1 := strconv.ParseInt(fields[11], 10, 64)
	st, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("read CPU time: %w", err)
	}
	return time.Duration(ut+st) * 10 * time.Millisecond, nil
}

// descendants lists the pids of every process below pid, read from /proc.
func descendants(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		fields, err := procStat(p)
		if err != nil || len(fields) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(fields[1]); err == nil {
			children[ppid] = append(children[ppid], p)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// reniceAgents sets the scheduling niceness of every thread of every
// process below the server (its agents) to nice. On Linux niceness is per
// thread, so each thread in /proc/PID/task is set; threads started later
// inherit it from the thread that starts them. It returns how many
// processes it changed.
func (s *benchServer) reniceAgents(nice int) (int, error) {
	n := 0
	for _, pid := range descendants(s.pid()) {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			continue // gone meanwhile
		}
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, nice); err != nil && !errors.Is(err, syscall.ESRCH) {
				return n, fmt.Errorf("renice agent %d: %w", pid, err)
			}
		}
		n++
	}
	return n, nil
}

// processAlive reports whether pid exists and is not a zombie.
func processAlive(pid int) bool {
	fields, err := procStat(pid)
	return err == nil && len(fields) > 0 && fields[0] != "Z"
}

// resourceSampler samples the server's RSS, and optionally its heap in use
// from /metrics, every interval until stopped. Its goroutine is owned by
// the scenario that starts it and ends at stop.
type resourceSampler struct {
	srv     *benchServer
	scrape  bool // also read go_memstats_heap_inuse_bytes and close counts
	cancel  context.CancelFunc
	stopped chan struct{}

	mu      sync.Mutex // guards samples
	samples []resourceSample
}

type resourceSample struct {
	at       time.Time
	rssKiB   int64
	tcpKiB   int64            // the kernel's TCP buffer memory, machine-wide
	heapKiB  int64            // 0 when not scraped
	closes   map[string]int64 // herd_ws_closes_total by series
	conns    int64            // herd_ws_connections
	scrapeOK bool
}

func startSampler(ctx context.Context, srv *benchServer, every time.Duration, scrape bool) *resourceSampler {
	ctx, cancel := context.WithCancel(ctx)
	r := &resourceSampler{srv: srv, scrape: scrape, cancel: cancel, stopped: make(chan struct{})}
	go func() {
		defer close(r.stopped)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			r.sample(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return r
}

func (r *resourceSampler) sample(ctx context.Context) {
	var s resourceSample
	rss, err := r.srv.rssKiB()
	if err != nil {
		return
	}
	s.rssKiB = rss
	s.tcpKiB = kernelTCPKiB()
	if r.scrape {
		m, err := r.srv.metrics(ctx)
		if ctx.Err() != nil {
			return // stopped mid-scrape: no sample
		}
		if err == nil {
			s.scrapeOK = true
			s.heapKiB = int64(m["go_memstats_heap_inuse_bytes"]) / 1024
			s.conns = int64(m["herd_ws_connections"])
			s.closes = map[string]int64{}
			for k, v := range m {
				if strings.HasPrefix(k, "herd_ws_closes_total") {
					s.closes[k] = int64(v)
				}
			}
		}
	}
	// Stamped when complete: a sample before a moment reflects nothing
	// that happened after it.
	s.at = time.Now()
	r.mu.Lock()
	r.samples = append(r.samples, s)
	r.mu.Unlock()
}

func (r *resourceSampler) stop() {
	r.cancel()
	<-r.stopped
}

// between returns the samples taken in [from, to).
func (r *resourceSampler) between(from, to time.Time) []resourceSample {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []resourceSample
	for _, s := range r.samples {
		if !s.at.Before(from) && s.at.Before(to) {
			out = append(out, s)
		}
	}
	return out
}

// kernelTCPKiB reads the memory the kernel holds in TCP socket buffers,
// machine-wide (/proc/net/sockstat, "TCP: … mem PAGES"); 0 when unknown.
// Bytes queued for a client that does not read sit here, not in the
// server's RSS.
func kernelTCPKiB() int64 {
	b, err := os.ReadFile("/proc/net/sockstat")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, "TCP:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		for i := 0; i+1 < len(f); i += 2 {
			if f[i] == "mem" {
				pages, _ := strconv.ParseInt(f[i+1], 10, 64)
				return pages * int64(os.Getpagesize()) / 1024
			}
		}
	}
	return 0
}

// peakTCP returns the largest kernel TCP memory among samples, in MiB.
func peakTCP(samples []resourceSample) float64 {
	var peak int64
	for _, s := range samples {
		peak = max(peak, s.tcpKiB)
	}
	return mib(peak)
}

// peakRSS returns the largest RSS among samples, in MiB.
func peakRSS(samples []resourceSample) float64 {
	var peak int64
	for _, s := range samples {
		peak = max(peak, s.rssKiB)
	}
	return mib(peak)
}

// peakHeap returns the largest heap in use among samples, in MiB.
func peakHeap(samples []resourceSample) float64 {
	var peak int64
	for _, s := range samples {
		peak = max(peak, s.heapKiB)
	}
	return mib(peak)
}

func mib(kib int64) float64 { return round3(float64(kib) / 1024) }
