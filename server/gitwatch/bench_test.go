package gitwatch_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/herd-dev/herd/server/gitcli/gittest"
	"github.com/herd-dev/herd/server/gitwatch"
)

// BenchmarkObserve10kFiles measures one observation of a task's worktree
// in a repository of 10,000 files: 10 files changed in commits on the
// task's branch, 10 more changed and not committed, 3 untracked files.
func BenchmarkObserve10kFiles(b *testing.B) {
	repo := gittest.InitEmpty(b)
	for i := range 10_000 {
		gittest.Write(b, repo, fmt.Sprintf("pkg%03d/file%04d.go", i/100, i), strings.Repeat("// line of code\n", 40))
	}
	gittest.Commit(b, repo, "10,000 files")
	wt := MustWorktree(b, repo)
	gittest.SettleIndex(b, wt)
	for i := range 20 {
		gittest.Write(b, wt, fmt.Sprintf("pkg%03d/file%04d.go", i*5, i*500), strings.Repeat("// changed line\n", 45))
		if i == 9 {
			gittest.Commit(b, wt, "half of the changes")
		}
	}
	for i := range 3 {
		gittest.Write(b, wt, fmt.Sprintf("new/untracked%d.go", i), strings.Repeat("// new\n", 100))
	}
	target := gitwatch.Target{Dir: wt, BaseBranch: "main"}
	if o := mustObserve(b, target); o.ChangedFiles != 23 || o.Additions != 20*45+300 || o.Deletions != 20*40 || o.Ahead != 1 {
		b.Fatalf("unexpected totals: %+v", o)
	}

	var cpu time.Duration
	b.ResetTimer()
	for b.Loop() {
		cpu += mustObserve(b, target).CPU
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "ms/op")
	b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "git-cpu-ms/op")
}

// BenchmarkSlowCadence200 measures one round of the slow cadence over 200
// small task repositories: each observed once through a Watcher with four
// workers. It reports the round's wall time, the CPU time of the git
// processes and of this process, and the share of one core that the slow
// cadence (one round every 30 s) would take.
func BenchmarkSlowCadence200(b *testing.B) {
	const repos = 200
	targets := make([]gitwatch.Target, repos)
	for i := range targets {
		repo := gittest.Init(b)
		for j := range 20 {
			gittest.Write(b, repo, fmt.Sprintf("src/f%02d.txt", j), strings.Repeat("text\n", 50))
		}
		gittest.Commit(b, repo, "files")
		gittest.SettleIndex(b, repo)
		gittest.Write(b, repo, "src/f00.txt", "changed\n")
		gittest.Write(b, repo, "notes.txt", "untracked\n")
		targets[i] = gitwatch.Target{Dir: repo, BaseBranch: "main"}
	}

	var gitCPU atomic.Int64
	ended := make(chan struct{}, repos)
	w, err := gitwatch.New(gitwatch.Config{
		Workers: 4,
		Observe: func(ctx context.Context, t gitwatch.Target) (gitwatch.Observation, error) {
			o, err := gitwatch.Observe(ctx, t)
			gitCPU.Add(int64(o.CPU))
			ended <- struct{}{}
			return o, err
		},
		Record: func(_ context.Context, id string, _ gitwatch.Observation, err error) error {
			if err != nil {
				b.Errorf("observe %s: %v", id, err)
			}
			return nil
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()

	selfBefore := selfCPU(b)
	b.ResetTimer()
	for b.Loop() {
		for i, t := range targets {
			w.Refresh(fmt.Sprint("repo-", i), t)
		}
		for range repos {
			<-ended
		}
	}
	b.StopTimer()
	rounds := float64(b.N)
	git := time.Duration(gitCPU.Load()).Seconds() / rounds
	self := (selfCPU(b) - selfBefore).Seconds() / rounds
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/rounds, "ms/round")
	b.ReportMetric(git, "git-cpu-s/round")
	b.ReportMetric(self, "herd-cpu-s/round")
	b.ReportMetric(100*(git+self)/gitwatch.DefaultSlowInterval.Seconds(), "%core@30s")
}

// selfCPU returns the user plus system CPU time of this process so far.
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
