package loadbench

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// tinyBench is every scenario at a size that runs in seconds.
var tinyBench = []string{
	"-timeout", "3m", "-settle", "200ms", "-sample-gap", "20ms",
	"-stream-chunks", "2000", "-stream-gap-ms", "1",
	"-select-tasks", "4", "-select-streams", "2", "-select-duration", "700ms",
	"-load-streams", "3", "-idle-duration", "700ms", "-light-duration", "500ms", "-load-duration", "700ms", "-niced-duration", "500ms",
	"-stall", "1s", "-stall-gap-ms", "1",
	"-followers", "20", "-fanout-iterations", "4",
	"-churn-tasks", "12", "-churn-tasks-small", "6", "-churn-sessions", "3", "-switches", "40",
	"-idle-conns", "20", "-idle-tasks", "3",
}

func TestBenchTinyRunReportsEveryScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("starts six servers with mock agents; skipped with -short")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	t.Setenv(benchTestServeEnv, "1")
	// The servers exit without the race detector's second of sleep, as
	// their agents do (see mocktest.Profile).
	t.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	var stdout, stderr bytes.Buffer
	start := time.Now()
	err = Run(t.Context(), "test", append([]string{"-server-bin", exe}, tinyBench...), &stdout, &stderr)
	t.Logf("bench took %s; progress:\n%s", time.Since(start).Round(time.Millisecond), stderr.String())
	require.NoError(t, err)

	var fields map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &fields), "one JSON report on stdout")
	for _, name := range []string{"environment", "a_selected_session", "b_correlated_under_load", "c_stalled_reader",
		"d_summary_fanout", "e_task_switch_churn", "f_idle_connection_memory", "budgets"} {
		require.Contains(t, fields, name)
	}
	var r benchReport
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &r))
	require.Empty(t, r.Errors)

	a := r.Select
	require.True(t, a.Isolated, "the selected client saw no other session's frames")
	require.Zero(t, a.SeqGaps)
	require.Positive(t, a.MessageAdd.N)
	require.Positive(t, a.PromptToSettled.N)
	require.Positive(t, a.SelectedClient.Responses["message.add"].Frames)
	require.Positive(t, a.DetailClient.Frames, "the streams reached the detail client")
	require.Positive(t, a.Chunks)

	b := r.Load
	for name, p := range map[string]loadPhase{"idle": b.Idle, "loaded": b.Loaded} {
		require.Positive(t, p.MessageAdd.N, name)
		require.NotNil(t, p.Subscribe, name)
		require.Positive(t, p.Subscribe.N, name)
		require.LessOrEqual(t, p.MessageAdd.P50, p.MessageAdd.P99, name)
		require.LessOrEqual(t, p.MessageAdd.P99, p.MessageAdd.Max, name)
	}
	require.Zero(t, b.Loaded.SeqGaps)
	require.NotNil(t, b.Light)
	require.NotNil(t, b.Niced, "the loaded run repeated with the agents reniced")
	require.Equal(t, 19, b.NicedTo)
	require.Positive(t, b.Loaded.Chunks, "the streams ran")
	require.Equal(t, 1, b.SubscriberConnections, "7 sessions fit on one connection")
	require.NotNil(t, b.ReplyBudget)
	require.NotNil(t, b.SwitchBudget)

	c := r.Stall
	require.Equal(t, 3, c.StalledSessions)
	require.Positive(t, c.StalledConnections)
	require.Positive(t, c.RSSBeforeMiB)
	require.Positive(t, c.RSSPeakMiB, "sampled during the stall (it may be below the RSS before: the runtime returns memory)")
	require.Positive(t, c.Other.MessageAdd.N, "the other client kept prompting during the stall")

	d := r.Fanout
	require.Zero(t, d.Incomplete)
	require.Equal(t, 4, d.LastFollower.N)
	require.LessOrEqual(t, d.FirstFollower.P50, d.LastFollower.P50)

	e := r.Churn
	require.Len(t, e.Runs, 2)
	require.True(t, e.Proportional, "switching work follows the sessions opened and closed")
	for _, run := range e.Runs {
		require.Equal(t, 40, run.Switches)
		require.Zero(t, run.StrayFrames)
		require.InDelta(t, 1.0, run.FramesPerChange, 1e-9, "one response per subscribe or unsubscribe")
	}

	f := r.Memory
	require.Positive(t, f.RSSAfterMiB)
	require.GreaterOrEqual(t, f.ServerConnections, int64(20))
	require.NotNil(t, f.Budget)

	for _, key := range []string{"correlated_reply_p99_under_load", "task_switch_p99_under_load", "idle_connection_memory"} {
		require.Contains(t, r.Budgets, key)
	}
	for _, s := range []serverShutdown{a.Server, b.Server, d.Server, e.Runs[0].Server, e.Runs[1].Server, f.Server} {
		require.True(t, s.Graceful, "the server stops on SIGTERM")
		require.Zero(t, s.Leftover, "no agent outlives its server")
	}
}

func TestBenchFlagsNameTheFlagInErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown scenario", []string{"-scenarios", "abz"}, "-scenarios"},
		{"no followers", []string{"-followers", "0"}, "-followers"},
		{"selected session among streams", []string{"-select-tasks", "5", "-select-streams", "5"}, "-select-tasks"},
		{"more sessions than tasks", []string{"-churn-sessions", "60"}, "-churn-sessions"},
		{"negative stall", []string{"-stall", "-1s"}, "-stall"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseBenchFlags(tc.args, &bytes.Buffer{})
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestBenchLatencyPercentilesAreNearestRank(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 200; i++ {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	l := summarize(ds)
	require.Equal(t, latency{N: 200, P50: 100, P95: 190, P99: 198, Max: 200, Mean: 100.5}, l)
	require.Equal(t, latency{}, summarize(nil))
}
