package gitwatch_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/gitcli/gittest"
	"github.com/herd-dev/herd/server/gitwatch"
)

func TestWatchedRepositoryIsObservedAtOnceThenEverySlowInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, gitwatch.Config{})
		h.Watch("r", target("r"))
		time.Sleep(95 * time.Second)
		synctest.Wait()
		require.Equal(t, seconds(0, 30, 60, 90), h.git.times("r"))
	})
}

func TestFocusedRepositoryIsObservedEveryFastInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, gitwatch.Config{})
		h.Watch("r", target("r"))
		time.Sleep(10 * time.Second)
		h.Focus([]string{"r"})
		time.Sleep(5 * time.Second)
		synctest.Wait()
		require.Equal(t, seconds(0, 10, 12, 14), h.git.times("r"),
			"focus brings forward an observation already overdue at the fast pace")
	})
}

func TestFocusIsCountedPerViewer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, gitwatch.Config{})
		h.Focus([]string{"r"}) // one browser
		h.Focus([]string{"r"}) // another
		h.Watch("r", target("r"))
		time.Sleep(time.Second)
		h.Unfocus([]string{"r"}) // the first one leaves
		time.Sleep(4 * time.Second)
		synctest.Wait()
		require.Equal(t, seconds(0, 2, 4), h.git.times("r"), "still fast while one browser looks")

		h.Unfocus([]string{"r"})
		h.Unfocus([]string{"r"}) // one too many: ignored
		time.Sleep(40 * time.Second)
		synctest.Wait()
		require.Equal(t, seconds(0, 2, 4, 34), h.git.times("r"), "slow once nobody looks")

		h.Focus([]string{"r"})
		time.Sleep(time.Second)
		synctest.Wait()
		require.Equal(t, seconds(0, 2, 4, 34, 45), h.git.times("r"), "focus counts from zero again")
	})
}

func TestFocusAloneObservesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, gitwatch.Config{})
		h.Focus([]string{"settled"})
		time.Sleep(time.Minute)
		synctest.Wait()
		require.Zero(t, h.git.count(), "a settled task's repository keeps its last snapshot")
	})
}

func TestUnwatchStopsPolling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, gitwatch.Config{})
		h.Watch("r", target("r"))
		time.Sleep(31 * time.Second)
		h.Unwatch("r")
		h.Unwatch("never watched")
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		require.Equal(t, seconds(0, 30), h.git.times("r"))
	})
}

func TestUnwatchDropsAQueuedObservationButFinishesARunningOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, gitwatch.Config{Workers: 1})
		release := h.git.block("running")
		h.git.set("running", gitwatch.Observation{Additions: 7})
		h.Watch("running", target("running"))
		synctest.Wait()
		h.Watch("queued", target("queued"))
		synctest.Wait()

		h.Unwatch("running")
		h.Unwatch("queued")
		close(release)
		time.Sleep(time.Minute)
		synctest.Wait()
		require.Equal(t, []call{{"running", 0}}, h.git.all())
		require.Equal(t, []record{{id: "running", additions: 7}}, h.records.all())
	})
}

func TestUnwatchKeepsARefresh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, gitwatch.Config{Workers: 1})
		release := h.occupy()
		h.Watch("r", target("r"))
		h.Refresh("r", target("r"))
		h.Unwatch("r")
		close(release)
		synctest.Wait()
		require.Equal(t, seconds(0), h.git.times("r"), "the settled task's final observation")
	})
}

func TestRefreshObservesAnyRepositoryOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, gitwatch.Config{})
		h.git.set("settled", gitwatch.Observation{Additions: 3})
		h.Refresh("settled", target("settled"))
		time.Sleep(time.Hour)
		synctest.Wait()
		require.Equal(t, seconds(0), h.git.times("settled"))
		require.Equal(t, []record{{id: "settled", additions: 3}}, h.records.all())
	})
}

func TestRefreshesCoalesceIntoTheQueuedObservation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, gitwatch.Config{Workers: 1})
		release := h.occupy()

		for range 5 {
			h.Refresh("r", target("r"))
		}
		close(release)
		synctest.Wait()
		require.Equal(t, seconds(0), h.git.times("r"))
	})
}

func TestRefreshDuringAnObservationRunsExactlyOneMoreAfterIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, gitwatch.Config{})
		gate := h.git.block("r")
		h.Watch("r", target("r"))
		synctest.Wait()

		time.Sleep(time.Second)
		for range 5 {
			h.Refresh("r", target("r")) // the tree changed after the running one read it
		}
		gate <- struct{}{} // the running observation ends
		synctest.Wait()
		require.Equal(t, seconds(0, 1), h.git.times("r"), "one more, at once")

		time.Sleep(time.Second)
		gate <- struct{}{}
		synctest.Wait()
		require.Equal(t, seconds(0, 1), h.git.times("r"), "then the slow pace resumes")
		time.Sleep(30 * time.Second)
		synctest.Wait()
		require.Equal(t, seconds(0, 1, 32), h.git.times("r"))
		close(gate)
	})
}

func TestRefreshGoesAheadOfScheduledObservations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, gitwatch.Config{Workers: 1})
		release := h.occupy()
		for i := range 5 {
			h.Watch(fmt.Sprint("w", i), target(fmt.Sprint("w", i)))
		}
		synctest.Wait()
		h.Watch("r", target("r"))
		synctest.Wait()
		h.Refresh("asked", target("asked"))
		h.Refresh("r", target("r")) // queued behind the others until asked for
		h.Refresh("busy", target("busy"))
		close(release)
		synctest.Wait()
		calls := h.git.all()
		require.Len(t, calls, 9)
		var order []string
		for _, c := range calls[1:4] {
			order = append(order, c.id)
		}
		require.Equal(t, []string{"asked", "r", "busy"}, order, "refreshes first, in the order asked")
	})
}

func TestOneRepositoryIsNeverObservedTwiceAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, gitwatch.Config{Workers: 8})
		gate := h.git.block("r")
		h.Focus([]string{"r"})
		h.Watch("r", target("r"))
		for range 20 {
			time.Sleep(3 * time.Second) // longer than FastInterval
			h.Refresh("r", target("r"))
			gate <- struct{}{}
		}
		close(gate)
		synctest.Wait()
		require.Equal(t, 1, h.git.most().each)
		require.Greater(t, h.git.count(), 20)
	})
}

func TestWorkersBoundTheObservationsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, gitwatch.Config{Workers: 4})
		var gates []chan struct{}
		for i := range 50 {
			id := fmt.Sprint("r", i)
			gates = append(gates, h.git.block(id))
			h.Watch(id, target(id))
		}
		synctest.Wait()
		require.Equal(t, 4, h.git.count(), "four gits at once, the rest wait")
		for _, g := range gates {
			close(g)
		}
		synctest.Wait()
		require.Equal(t, 50, h.git.count())
		require.Equal(t, 4, h.git.most().all)
		require.Len(t, h.records.all(), 50)
	})
}

func TestRecordOnlyWhenTheObservationChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, gitwatch.Config{})
		h.git.set("r", gitwatch.Observation{Additions: 1})
		h.Watch("r", target("r"))
		time.Sleep(65 * time.Second) // three observations, one state
		h.git.set("r", gitwatch.Observation{Additions: 2})
		time.Sleep(30 * time.Second)
		h.git.set("r", gitwatch.Observation{Additions: 2, Ahead: 1})
		time.Sleep(30 * time.Second)
		synctest.Wait()
		require.Equal(t, 5, h.git.count())
		require.Equal(t, []record{{id: "r", additions: 1}, {id: "r", additions: 2}, {id: "r", additions: 2}},
			h.records.all())
	})
}

func TestFailureIsRecordedOnceAndNeverAsZeros(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, gitwatch.Config{})
		h.git.set("r", gitwatch.Observation{Additions: 4})
		h.Watch("r", target("r"))
		time.Sleep(time.Second)
		h.git.setFail("r", errIndexLock)
		time.Sleep(60 * time.Second) // fails twice
		h.git.setFail("r", errors.New("fatal: bad object HEAD"))
		time.Sleep(30 * time.Second)
		h.git.setFail("r", nil) // the tree is as it was
		time.Sleep(30 * time.Second)
		synctest.Wait()
		require.Equal(t, 5, h.git.count())
		require.Equal(t, []record{
			{id: "r", additions: 4},
			{id: "r", err: errIndexLock.Error()},
			{id: "r", err: "fatal: bad object HEAD"},
			{id: "r", additions: 4},
		}, h.records.all())
	})
}

func TestStuckObservationTimesOutAndIsRecordedAsAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, gitwatch.Config{Timeout: 5 * time.Second})
		h.git.block("r")
		h.Watch("r", target("r"))
		time.Sleep(6 * time.Second)
		synctest.Wait()
		require.Equal(t, []record{{id: "r", err: "context deadline exceeded"}}, h.records.all())
	})
}

func TestFailedRecordIsRetriedWithTheNextObservation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, gitwatch.Config{})
		h.git.set("r", gitwatch.Observation{Additions: 1})
		h.records.setFail(errors.New("database is locked"))
		h.Watch("r", target("r"))
		synctest.Wait()
		h.records.setFail(nil)
		time.Sleep(61 * time.Second)
		synctest.Wait()
		require.Equal(t, []record{{id: "r", additions: 1}}, h.records.all(), "recorded once, by the second observation")
	})
}

func TestRunTwiceFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, gitwatch.Config{})
		synctest.Wait()
		require.ErrorIs(t, h.Run(t.Context()), gitwatch.ErrRunning)
	})
}

func TestNewValidatesConfig(t *testing.T) {
	record := (&records{}).record
	for _, tc := range []struct {
		cfg  gitwatch.Config
		want string
	}{
		{gitwatch.Config{}, "Config.Record is required"},
		{gitwatch.Config{Record: record, SlowInterval: -1}, "Config.SlowInterval is negative"},
		{gitwatch.Config{Record: record, FastInterval: -1}, "Config.FastInterval is negative"},
		{gitwatch.Config{Record: record, Workers: -1}, "Config.Workers is negative"},
		{gitwatch.Config{Record: record, Timeout: -1}, "Config.Timeout is negative"},
	} {
		_, err := gitwatch.New(tc.cfg)
		require.ErrorContains(t, err, tc.want)
	}
}

func TestMetricsCountResultsCoalescingAndCPU(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		m, err := gitwatch.NewMetrics(reg)
		require.NoError(t, err)
		h := start(t, gitwatch.Config{Metrics: m})
		gate := h.git.block("r")
		h.Watch("r", target("r"))
		synctest.Wait()
		h.Refresh("r", target("r"))
		h.Refresh("r", target("r")) // coalesced
		h.Refresh("r", target("r")) // coalesced
		close(gate)
		synctest.Wait()
		h.git.setFail("r", errIndexLock)
		h.Refresh("r", target("r"))
		synctest.Wait()
		h.records.setFail(errors.New("database is locked"))
		h.git.setFail("r", nil)
		h.Refresh("r", target("r"))
		synctest.Wait()

		require.Equal(t, map[string]float64{
			`herd_gitwatch_observations_total{result="changed"}`:   2,
			`herd_gitwatch_observations_total{result="unchanged"}`: 1,
			`herd_gitwatch_observations_total{result="failed"}`:    1,
			`herd_gitwatch_record_errors_total`:                    1,
			`herd_gitwatch_refreshes_coalesced_total`:              2,
			`herd_gitwatch_git_cpu_seconds_total`:                  0.004,
		}, gather(t, reg))
	})
}

// gather returns every sample of reg by name and labels.
func gather(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	samples := make(map[string]float64)
	for _, f := range families {
		for _, m := range f.GetMetric() {
			name := f.GetName()
			for _, l := range m.GetLabel() {
				name += fmt.Sprintf("{%s=%q}", l.GetName(), l.GetValue())
			}
			samples[name] = value(m)
		}
	}
	return samples
}

func value(m *dto.Metric) float64 {
	if c := m.GetCounter(); c != nil {
		return c.GetValue()
	}
	return m.GetGauge().GetValue()
}

func TestWatcherRecordsARealRepository(t *testing.T) {
	repo := gittest.Init(t)
	wt := MustWorktree(t, repo)
	got := make(chan gitwatch.Observation, 10)
	w, err := gitwatch.New(gitwatch.Config{
		Record: func(_ context.Context, id string, o gitwatch.Observation, err error) error {
			require.Equal(t, "repo-1", id)
			require.NoError(t, err)
			got <- o
			return nil
		},
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- w.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	receive := func() gitwatch.Observation {
		select {
		case o := <-got:
			return o
		case <-time.After(30 * time.Second):
			t.Fatal("no observation recorded")
			return gitwatch.Observation{}
		}
	}

	w.Watch("repo-1", gitwatch.Target{Dir: wt, BaseBranch: "main"})
	require.Zero(t, receive().ChangedFiles)

	gittest.Write(t, wt, "agent.txt", "one\ntwo\n")
	w.Refresh("repo-1", gitwatch.Target{Dir: wt, BaseBranch: "main"})
	o := receive()
	require.Equal(t, 2, o.Additions)
	require.Equal(t, 1, o.ChangedFiles)
}
