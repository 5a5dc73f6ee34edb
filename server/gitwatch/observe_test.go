package gitwatch_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/gitcli/gittest"
	"github.com/herd-dev/herd/server/gitwatch"
)

// totals is the part of an Observation the tests compare.
type totals struct {
	Additions, Deletions, ChangedFiles int
	Ahead, Behind                      int
	ComparisonUnavailable              bool
	HasUpstream                        bool
	UpstreamAhead, UpstreamBehind      int
}

// MustObserve observes t, which must succeed, and returns its totals.
func MustObserve(tb testing.TB, t gitwatch.Target) totals {
	tb.Helper()
	o := mustObserve(tb, t)
	require.False(tb, o.ObservedAt.IsZero())
	return totals{
		Additions: o.Additions, Deletions: o.Deletions, ChangedFiles: o.ChangedFiles,
		Ahead: o.Ahead, Behind: o.Behind, ComparisonUnavailable: o.ComparisonUnavailable,
		HasUpstream: o.HasUpstream, UpstreamAhead: o.UpstreamAhead, UpstreamBehind: o.UpstreamBehind,
	}
}

// mustObserve observes t, failing tb if that fails.
func mustObserve(tb testing.TB, t gitwatch.Target) gitwatch.Observation {
	tb.Helper()
	o, err := gitwatch.Observe(tb.Context(), t)
	require.NoError(tb, err)
	return o
}

func TestCleanWorktreeHasNothingToShow(t *testing.T) {
	wt := MustWorktree(t, gittest.Init(t))
	require.Equal(t, totals{}, MustObserve(t, gitwatch.Target{Dir: wt, BaseBranch: "main"}))
}

func TestTotalsCountCommittedStagedUnstagedAndUntrackedChanges(t *testing.T) {
	repo := gittest.Init(t)
	gittest.Write(t, repo, "a.txt", "one\ntwo\nthree\n")
	gittest.Write(t, repo, "b.txt", "keep\ndrop\n")
	gittest.Write(t, repo, "c.txt", "c\n")
	gittest.Write(t, repo, ".gitignore", "*.log\n")
	gittest.Commit(t, repo, "files")
	wt := MustWorktree(t, repo)

	gittest.Write(t, wt, "a.txt", "one\n2\nthree\n") // committed: +1 −1
	gittest.Commit(t, wt, "change a")
	gittest.Write(t, wt, "b.txt", "keep\n") // staged: −1
	gittest.Git(t, wt, "add", "b.txt")
	gittest.Write(t, wt, "c.txt", "c\nd\ne\n")   // unstaged: +2
	gittest.Write(t, wt, "new/u.txt", "x\ny\nz") // untracked: +3, no final newline
	gittest.Write(t, wt, "debug.log", "ignored\n")

	require.Equal(t, totals{Additions: 6, Deletions: 2, ChangedFiles: 4, Ahead: 1},
		MustObserve(t, gitwatch.Target{Dir: wt, BaseBranch: "main"}))
}

func TestAheadAndBehindTheBaseBranch(t *testing.T) {
	repo := gittest.Init(t)
	wt := MustWorktree(t, repo)
	gittest.Write(t, wt, "one.txt", "1\n")
	gittest.Commit(t, wt, "one")
	gittest.Write(t, wt, "two.txt", "2\n")
	gittest.Commit(t, wt, "two")
	gittest.Write(t, repo, "base.txt", "base moved on\nby two lines\n")
	gittest.Commit(t, repo, "base")

	require.Equal(t, totals{Additions: 2, ChangedFiles: 2, Ahead: 2, Behind: 1},
		MustObserve(t, gitwatch.Target{Dir: wt, BaseBranch: "main"}),
		"totals count the task's work from the merge base, not the base's new commits")
}

func TestCrissCrossMergesCompareWithOneMergeBase(t *testing.T) {
	repo := gittest.Init(t)
	wt := MustWorktree(t, repo)
	gittest.Write(t, repo, "x.txt", "x\n")
	gittest.Commit(t, repo, "x on main")
	x := gittest.Git(t, repo, "rev-parse", "HEAD")
	gittest.Write(t, wt, "y.txt", "y\n")
	gittest.Commit(t, wt, "y on the task")
	y := gittest.Git(t, wt, "rev-parse", "HEAD")
	gittest.Git(t, wt, "merge", "--quiet", "--no-edit", x)
	gittest.Git(t, repo, "merge", "--quiet", "--no-edit", y)
	require.Len(t, strings.Fields(gittest.Git(t, wt, "merge-base", "--all", "main", "HEAD")), 2)

	require.Equal(t, totals{Additions: 1, ChangedFiles: 1, Ahead: 1, Behind: 1},
		MustObserve(t, gitwatch.Target{Dir: wt, BaseBranch: "main"}))
}

func TestUpstreamCounts(t *testing.T) {
	repo := gittest.Init(t)
	remote := t.TempDir()
	gittest.Git(t, remote, "init", "--quiet", "--bare")
	gittest.Git(t, repo, "remote", "add", "origin", remote)
	gittest.Git(t, repo, "push", "--quiet", "origin", "main")
	wt := MustWorktree(t, repo)
	target := gitwatch.Target{Dir: wt, BaseBranch: "main"}

	require.False(t, MustObserve(t, target).HasUpstream)

	gittest.Write(t, wt, "pushed.txt", "p\n")
	gittest.Commit(t, wt, "pushed")
	gittest.Git(t, wt, "push", "--quiet", "--set-upstream", "origin", "herd/task")
	require.Equal(t, totals{Additions: 1, ChangedFiles: 1, Ahead: 1, HasUpstream: true}, MustObserve(t, target))

	// Someone else pushes to the task's branch; the agent commits locally.
	other := t.TempDir()
	gittest.Git(t, other, "clone", "--quiet", "--branch", "herd/task", remote, ".")
	gittest.Write(t, other, "theirs.txt", "t\n")
	gittest.Commit(t, other, "theirs")
	gittest.Git(t, other, "push", "--quiet")
	gittest.Write(t, wt, "mine.txt", "m\n")
	gittest.Commit(t, wt, "mine")
	gittest.Git(t, wt, "fetch", "--quiet")

	require.Equal(t, totals{Additions: 2, ChangedFiles: 2, Ahead: 2, HasUpstream: true, UpstreamAhead: 1, UpstreamBehind: 1},
		MustObserve(t, target))
}

func TestComparisonUnavailableCountsOnlyUncommittedWork(t *testing.T) {
	repo := gittest.Init(t)
	gittest.Git(t, repo, "switch", "--quiet", "--orphan", "unrelated")
	gittest.Write(t, repo, "other.txt", "o\n")
	gittest.Commit(t, repo, "unrelated history")
	gittest.Git(t, repo, "switch", "--quiet", "main")
	wt := MustWorktree(t, repo)
	gittest.Write(t, wt, "committed.txt", "c\n")
	gittest.Commit(t, wt, "committed")
	gittest.Write(t, wt, "README", "herd\nedited\n")
	gittest.Write(t, wt, "untracked.txt", "u\n")

	want := totals{Additions: 2, ChangedFiles: 2, ComparisonUnavailable: true}
	for _, base := range []string{"", "release", "unrelated", "--all"} {
		t.Run("base "+base, func(t *testing.T) {
			require.Equal(t, want, MustObserve(t, gitwatch.Target{Dir: wt, BaseBranch: base}))
		})
	}
}

func TestRepositoryWithoutCommits(t *testing.T) {
	repo := gittest.InitEmpty(t)
	gittest.Write(t, repo, "staged.txt", "s\nt\n")
	gittest.Git(t, repo, "add", "staged.txt")
	gittest.Write(t, repo, "untracked.txt", "u\n")

	require.Equal(t, totals{Additions: 3, ChangedFiles: 2, ComparisonUnavailable: true},
		MustObserve(t, gitwatch.Target{Dir: repo, BaseBranch: "main"}))
}

func TestRepositoryObservedInPlace(t *testing.T) {
	repo := gittest.Init(t)
	gittest.Write(t, repo, "README", "changed\n")
	require.Equal(t, totals{Additions: 1, Deletions: 1, ChangedFiles: 1},
		MustObserve(t, gitwatch.Target{Dir: repo, BaseBranch: "main"}))
}

func TestBinaryFilesCountAsFilesWithoutLines(t *testing.T) {
	repo := gittest.Init(t)
	wt := MustWorktree(t, repo)
	gittest.Write(t, wt, "committed.bin", "\x00\x01\x02\n\n\n")
	gittest.Commit(t, wt, "binary")
	gittest.Write(t, wt, "untracked.bin", "header\n\x00\n\n\n")

	require.Equal(t, totals{ChangedFiles: 2, Ahead: 1}, MustObserve(t, gitwatch.Target{Dir: wt, BaseBranch: "main"}))
}

func TestUntrackedFilesCountTheLinesGitWouldCount(t *testing.T) {
	for name, content := range map[string]string{
		"empty":                 "",
		"one line":              "a\n",
		"no final newline":      "a\nb",
		"crlf":                  "a\r\nb\r\n",
		"blank lines":           "\n\n\n",
		"nul after 8000 bytes":  strings.Repeat("x\n", 4001) + "\x00\n",
		"long line":             strings.Repeat("y", 100_000) + "\n",
		"many chunks of a file": strings.Repeat("line\n", 50_000),
	} {
		t.Run(name, func(t *testing.T) {
			repo := gittest.Init(t)
			gittest.Write(t, repo, "f", content)
			target := gitwatch.Target{Dir: repo, BaseBranch: "main"}
			untracked := MustObserve(t, target)
			gittest.Git(t, repo, "add", "f")
			require.Equal(t, MustObserve(t, target), untracked)
		})
	}
}

func TestSpecialUntrackedFiles(t *testing.T) {
	repo := gittest.Init(t)
	require.NoError(t, os.Symlink("README", filepath.Join(repo, "link")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(repo, "fifo"), 0o600))
	nested := filepath.Join(repo, "nested")
	require.NoError(t, os.Mkdir(nested, 0o755))
	gittest.Git(t, nested, "init", "--quiet")
	gittest.Write(t, nested, "inside.txt", "i\n")

	// The link counts its target as one line, as git stores it; the
	// nested repository counts as one file; the FIFO is neither listed
	// nor, above all, opened.
	require.Equal(t, totals{Additions: 1, ChangedFiles: 2}, MustObserve(t, gitwatch.Target{Dir: repo, BaseBranch: "main"}))
}

func TestObserveFails(t *testing.T) {
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		dir     string
		message string
	}{
		{"not a repository", t.Context(), t.TempDir(), "not a git repository"},
		{"directory missing", t.Context(), filepath.Join(t.TempDir(), "gone"), "no such file or directory"},
		{"context ended", cancelled, gittest.Init(t), "context canceled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := gitwatch.Observe(tc.ctx, gitwatch.Target{Dir: tc.dir, BaseBranch: "main"})
			require.ErrorContains(t, err, "observe "+tc.dir+": ")
			require.ErrorContains(t, err, tc.message)
		})
	}
}
