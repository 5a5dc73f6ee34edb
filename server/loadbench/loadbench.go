package loadbench

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// benchConfig configures `herd bench`. Each scenario starts its own server
// as a child process, so one scenario's leftovers never weigh on the next.
type benchConfig struct {
	Scenarios string
	Timeout   time.Duration
	ServerBin string
	Out       string
	ServerLog string

	// Stream load, shared by scenarios a, b and c.
	StreamChunks int
	StreamGapMS  int

	// a: the selected session.
	SelectTasks    int
	SelectStreams  int
	SelectDuration time.Duration

	// b: correlated reply and task switch under load.
	LoadStreams   int
	LoadDuration  time.Duration
	IdleDuration  time.Duration
	LightDuration time.Duration
	LightGapMS    int
	NicedDuration time.Duration
	SampleGap     time.Duration

	// c: a client that stops reading.
	Stall       time.Duration
	StallGapMS  int
	StallRcvbuf int

	// d: summary fan-out.
	Followers  int
	FanoutRuns int

	// e: task-switch churn.
	ChurnTasks      int
	ChurnTasksSmall int
	ChurnSessions   int
	Switches        int

	// f: idle connection memory.
	IdleConns int
	IdleTasks int

	// AgentsNice, when not 0, renices the agents of scenarios a and b.
	AgentsNice int

	// Settle is the quiet time before a memory reading and after a
	// change of load.
	Settle time.Duration

	// flags holds every flag's value as given or defaulted, for the report.
	flags map[string]string
}

// parseBenchFlags reads and validates the flags.
func parseBenchFlags(args []string, stderr io.Writer) (benchConfig, error) {
	fs := flag.NewFlagSet("herd bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c benchConfig
	fs.StringVar(&c.Scenarios, "scenarios", "abcdef", "scenarios to run, any of `letters` a–f (c runs inside b's server)")
	fs.DurationVar(&c.Timeout, "timeout", 15*time.Minute, "bound on the whole run")
	fs.StringVar(&c.ServerBin, "server-bin", "", "herd `binary` to run as the server (default: this executable)")
	fs.StringVar(&c.Out, "out", "", "also write the JSON report to this `file`")
	fs.StringVar(&c.ServerLog, "server-log", "", "append the servers' logs to this `file`")
	fs.IntVar(&c.StreamChunks, "stream-chunks", 20000, "text chunks per streaming turn (`/scenario stream N MS`)")
	fs.IntVar(&c.StreamGapMS, "stream-gap-ms", 1, "milliseconds between chunks; 1 is about 1,000 chunks/s per session")
	fs.IntVar(&c.SelectTasks, "select-tasks", 27, "a: tasks in the workspace")
	fs.IntVar(&c.SelectStreams, "select-streams", 10, "a: sessions streaming besides the selected one")
	fs.DurationVar(&c.SelectDuration, "select-duration", 10*time.Second, "a: how long to sample")
	fs.IntVar(&c.LoadStreams, "load-streams", 50, "b: streaming sessions, all open on one client")
	fs.DurationVar(&c.LoadDuration, "load-duration", 30*time.Second, "b: how long to sample under load")
	fs.DurationVar(&c.IdleDuration, "idle-duration", 10*time.Second, "b: how long to sample before the streams start")
	fs.DurationVar(&c.LightDuration, "light-duration", 15*time.Second, "b: how long to sample under the light load first (0 skips it)")
	fs.IntVar(&c.LightGapMS, "light-gap-ms", 20, "b: milliseconds between chunks in the light load")
	fs.DurationVar(&c.NicedDuration, "niced-duration", 0, "b: after the loaded run, renice the agents to 19 and sample this long again; the server already starts them at its --agent-nice, 19 by default (0 skips it)")
	fs.DurationVar(&c.SampleGap, "sample-gap", 50*time.Millisecond, "a, b, c: pause between probes")
	fs.DurationVar(&c.Stall, "stall", 30*time.Second, "c: how long the extra client stops reading (0 skips c)")
	fs.IntVar(&c.StallGapMS, "stall-gap-ms", 20, "c: milliseconds between chunks while the client is stalled (1: the load of b)")
	fs.IntVar(&c.StallRcvbuf, "stall-rcvbuf", 32<<10, "c: the stalled client's socket receive buffer in `bytes` (0: the kernel's default)")
	fs.IntVar(&c.Followers, "followers", 1000, "d: workspace subscribers")
	fs.IntVar(&c.FanoutRuns, "fanout-iterations", 50, "d: summary changes to time")
	fs.IntVar(&c.ChurnTasks, "churn-tasks", 200, "e: tasks in the workspace")
	fs.IntVar(&c.ChurnTasksSmall, "churn-tasks-small", 50, "e: tasks in the comparison run")
	fs.IntVar(&c.ChurnSessions, "churn-sessions", 20, "e: tasks with an idle session")
	fs.IntVar(&c.Switches, "switches", 1000, "e: task switches per run")
	fs.IntVar(&c.IdleConns, "idle-conns", 1000, "f: idle connections")
	fs.IntVar(&c.IdleTasks, "idle-tasks", 27, "f: tasks in the workspace they boot")
	fs.IntVar(&c.AgentsNice, "agents-nice", 0, "a, b, c: renice the mock agents to this `niceness` (1–19) once started; 0 leaves them at the server's --agent-nice (19 by default)")
	fs.DurationVar(&c.Settle, "settle", 3*time.Second, "quiet time before a memory reading and after a change of load")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("herd bench takes no arguments, got %q", fs.Args())
	}
	c.flags = map[string]string{}
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name != "server-bin" && f.Name != "out" && f.Name != "server-log" {
			c.flags[f.Name] = f.Value.String()
		}
	})
	return c, c.validate()
}

// validate names the first flag that is out of range.
func (c *benchConfig) validate() error {
	for _, r := range c.Scenarios {
		if !strings.ContainsRune("abcdef", r) {
			return fmt.Errorf("-scenarios %q: want letters among a, b, c, d, e, f", c.Scenarios)
		}
	}
	positive := []struct {
		name string
		v    int
	}{
		{"-stream-chunks", c.StreamChunks}, {"-select-tasks", c.SelectTasks}, {"-select-streams", c.SelectStreams},
		{"-load-streams", c.LoadStreams}, {"-followers", c.Followers}, {"-fanout-iterations", c.FanoutRuns},
		{"-churn-tasks", c.ChurnTasks}, {"-churn-tasks-small", c.ChurnTasksSmall}, {"-churn-sessions", c.ChurnSessions},
		{"-switches", c.Switches}, {"-idle-conns", c.IdleConns},
	}
	for _, p := range positive {
		if p.v <= 0 {
			return fmt.Errorf("%s %d: want a positive number", p.name, p.v)
		}
	}
	switch {
	case c.StreamGapMS < 0:
		return fmt.Errorf("-stream-gap-ms %d: want 0 or more", c.StreamGapMS)
	case min(c.ChurnTasks, c.ChurnTasksSmall) < 2:
		return fmt.Errorf("-churn-tasks and -churn-tasks-small: want at least 2 tasks to switch between")
	case c.AgentsNice < 0 || c.AgentsNice > 19:
		return fmt.Errorf("-agents-nice %d: want 0 to 19", c.AgentsNice)
	case c.IdleTasks < 0:
		return fmt.Errorf("-idle-tasks %d: want 0 or more", c.IdleTasks)
	case c.SelectTasks < c.SelectStreams+1:
		return fmt.Errorf("-select-tasks %d: want at least -select-streams + 1 (%d)", c.SelectTasks, c.SelectStreams+1)
	case c.ChurnSessions > min(c.ChurnTasks, c.ChurnTasksSmall):
		return fmt.Errorf("-churn-sessions %d: want at most the smaller task count (%d)", c.ChurnSessions, min(c.ChurnTasks, c.ChurnTasksSmall))
	case c.Timeout <= 0, c.SelectDuration <= 0, c.LoadDuration <= 0, c.IdleDuration <= 0:
		return errors.New("-timeout, -select-duration, -load-duration and -idle-duration must be positive")
	case c.SampleGap < 0, c.Stall < 0, c.LightDuration < 0, c.NicedDuration < 0, c.Settle < 0:
		return errors.New("-sample-gap, -stall, -light-duration, -niced-duration and -settle must not be negative")
	case c.LightGapMS < 0, c.StallGapMS < 0, c.StallRcvbuf < 0:
		return errors.New("-light-gap-ms, -stall-gap-ms and -stall-rcvbuf must not be negative")
	}
	return nil
}

func (c *benchConfig) has(scenario rune) bool { return strings.ContainsRune(c.Scenarios, scenario) }

// benchReport is what `herd bench` prints: one field per scenario, each
// with its parameters, figures and budget verdicts.
type benchReport struct {
	Environment benchEnvironment `json:"environment"`
	Select      *selectReport    `json:"a_selected_session,omitempty"`
	Load        *loadReport      `json:"b_correlated_under_load,omitempty"`
	Stall       *stallReport     `json:"c_stalled_reader,omitempty"`
	Fanout      *fanoutReport    `json:"d_summary_fanout,omitempty"`
	Churn       *churnReport     `json:"e_task_switch_churn,omitempty"`
	Memory      *memoryReport    `json:"f_idle_connection_memory,omitempty"`
	// Budgets gathers the DESIGN.md budgets the run checked.
	Budgets map[string]*budget `json:"budgets"`
	// Errors lists harness failures (a scenario that could not run to the
	// end); budget misses are not errors.
	Errors []string `json:"errors,omitempty"`
}

// benchEnvironment says what was measured where.
type benchEnvironment struct {
	Version   string            `json:"version"`
	Revision  string            `json:"vcs_revision,omitempty"`
	Modified  bool              `json:"vcs_modified,omitempty"`
	Go        string            `json:"go"`
	CPUs      int               `json:"cpus"`
	LoadAvg   string            `json:"loadavg_at_start"`
	Started   time.Time         `json:"started"`
	DurationS float64           `json:"duration_s"`
	Flags     map[string]string `json:"flags"`
}

// Run runs `herd bench` with args, its flags (see -h): it prints the JSON
// report on stdout and progress on stderr, and names version as the herd
// version measured. It fails only when the harness itself fails; a missed
// budget is a false "pass" in the report.
func Run(ctx context.Context, version string, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseBenchFlags(args, stderr)
	if err != nil {
		return err
	}
	if cfg.ServerBin == "" {
		if cfg.ServerBin, err = os.Executable(); err != nil {
			return fmt.Errorf("find the herd binary for the server: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()

	r := &benchReport{Environment: newBenchEnvironment(cfg, version), Budgets: map[string]*budget{}}
	started := time.Now()
	scenario := func(name string, f func() error) {
		if ctx.Err() != nil {
			r.Errors = append(r.Errors, fmt.Sprintf("%s: not run: %v", name, ctx.Err()))
			return
		}
		fmt.Fprintf(stderr, "bench: %s\n", name)
		t0 := time.Now()
		if err := f(); err != nil {
			r.Errors = append(r.Errors, fmt.Sprintf("%s: %v", name, err))
			fmt.Fprintf(stderr, "bench: %s failed: %v\n", name, err)
		}
		fmt.Fprintf(stderr, "bench: %s took %s\n", name, time.Since(t0).Round(100*time.Millisecond))
	}
	run := benchRun{cfg: cfg, progress: stderr}
	if cfg.has('a') {
		scenario("a (one selected session while others stream)", func() (err error) {
			r.Select, err = run.selectedSession(ctx)
			return err
		})
	}
	if cfg.has('b') || cfg.has('c') {
		scenario("b+c (one client with every streaming session open; a stalled reader)", func() (err error) {
			r.Load, r.Stall, err = run.underLoad(ctx)
			return err
		})
	}
	if cfg.has('d') {
		scenario("d (summary fan-out)", func() (err error) {
			r.Fanout, err = run.fanout(ctx)
			return err
		})
	}
	if cfg.has('e') {
		scenario("e (task-switch churn)", func() (err error) {
			r.Churn, err = run.churn(ctx)
			return err
		})
	}
	if cfg.has('f') {
		scenario("f (idle connection memory)", func() (err error) {
			r.Memory, err = run.idleMemory(ctx)
			return err
		})
	}
	r.collectBudgets()
	r.Environment.DurationS = round3(time.Since(started).Seconds())

	out, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	out = append(out, '\n')
	if _, err := stdout.Write(out); err != nil {
		return err
	}
	if cfg.Out != "" {
		if err := os.WriteFile(cfg.Out, out, 0o644); err != nil {
			return fmt.Errorf("-out: %w", err)
		}
	}
	if len(r.Errors) > 0 {
		return fmt.Errorf("bench: %d scenario(s) failed: %s", len(r.Errors), strings.Join(r.Errors, "; "))
	}
	return nil
}

// benchRun carries what every scenario needs.
type benchRun struct {
	cfg      benchConfig
	progress io.Writer
}

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *benchRun) logf(format string, args ...any) {
	fmt.Fprintf(b.progress, "bench: %s   "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// reniceAgents sets the niceness of the server's agents.
func (b *benchRun) reniceAgents(srv *benchServer, nice int) error {
	if nice == 0 {
		return nil
	}
	n, err := srv.reniceAgents(nice)
	b.logf("%d agents reniced to %d", n, nice)
	return err
}

// startServer starts a fresh server for one scenario.
func (b *benchRun) startServer(ctx context.Context) (*benchServer, error) {
	return startBenchServer(ctx, b.cfg.ServerBin, b.cfg.ServerLog, b.progress)
}

// stopServer stops a scenario's server and logs how it went.
func (b *benchRun) stopServer(srv *benchServer) serverShutdown {
	s := srv.stop()
	b.logf("server stopped (graceful %v, %d log lines)", s.Graceful, s.LogLines)
	return s
}

func newBenchEnvironment(cfg benchConfig, version string) benchEnvironment {
	env := benchEnvironment{Version: version, Go: runtime.Version(), CPUs: runtime.NumCPU(), Started: time.Now().UTC(), Flags: cfg.flags}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		env.LoadAvg = strings.TrimSpace(string(b))
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				env.Revision = s.Value
			case "vcs.modified":
				env.Modified = s.Value == "true"
			}
		}
	}
	return env
}

// collectBudgets lists the verdicts of the scenarios that ran.
func (r *benchReport) collectBudgets() {
	if r.Load != nil {
		r.Budgets["correlated_reply_p99_under_load"] = r.Load.ReplyBudget
		r.Budgets["task_switch_p99_under_load"] = r.Load.SwitchBudget
		if n := r.Load.Niced; n != nil {
			r.Budgets["correlated_reply_p99_under_load_agents_niced"] = n.ReplyBudget
			r.Budgets["task_switch_p99_under_load_agents_niced"] = n.SwitchBudget
		}
	}
	if r.Memory != nil {
		r.Budgets["idle_connection_memory"] = r.Memory.Budget
	}
}
