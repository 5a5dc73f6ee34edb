package gitdiff_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/herd-dev/herd/server/gitcli/gittest"
	"github.com/herd-dev/herd/server/gitdiff"
	"github.com/herd-dev/herd/shared"
)

// BenchmarkFilesFirstPage measures what the first page of a task's files
// costs in a worktree with 5,000 changed files (2,500 tracked files
// modified, 2,500 untracked, all small and different) of a repository of
// 5,000: the base tree, a snapshot of the working tree and the first page
// of shared.DefaultReviewFiles files, through Snapshot then Files, or
// through SnapshotFiles, and through SnapshotFiles once every changed
// file was written anew. It reports the git processes' CPU time beside
// the wall time.
//
// Git reads a loose object with a few system calls of its own and a
// packed one without, so the repository's objects are either packed, as
// in a clone or after git gc, or all loose, as in a repository never
// packed; the blobs a snapshot writes are loose in both.
func BenchmarkFilesFirstPage(b *testing.B) {
	for _, packed := range []bool{true, false} {
		b.Run(map[bool]string{true: "base packed", false: "all loose"}[packed], func(b *testing.B) {
			wt := manyChanges(b, packed)
			b.Run("Snapshot+Files", func(b *testing.B) {
				benchmarkFirstPage(b, func() (string, gitdiff.Listing, error) {
					base, _, err := gitdiff.BaseTree(b.Context(), wt, "main")
					if err != nil {
						return "", gitdiff.Listing{}, err
					}
					tree, err := gitdiff.Snapshot(b.Context(), wt)
					if err != nil {
						return "", gitdiff.Listing{}, err
					}
					l, err := gitdiff.Files(b.Context(), wt, base, tree, 0, shared.DefaultReviewFiles)
					return tree, l, err
				})
			})
			snapshotFiles := func() (string, gitdiff.Listing, error) {
				base, _, err := gitdiff.BaseTree(b.Context(), wt, "main")
				if err != nil {
					return "", gitdiff.Listing{}, err
				}
				return gitdiff.SnapshotFiles(b.Context(), wt, base, 0, shared.DefaultReviewFiles)
			}
			b.Run("SnapshotFiles", func(b *testing.B) { benchmarkFirstPage(b, snapshotFiles) })
			if !packed {
				return
			}
			// After a turn that wrote every changed file anew, the
			// snapshot writes 5,000 blobs before the listing.
			round := 0
			b.Run("SnapshotFiles of new content", func(b *testing.B) {
				benchmarkFirstPage(b, func() (string, gitdiff.Listing, error) {
					b.StopTimer()
					round++
					writeChanges(b, wt, fmt.Sprintf("round %d, ", round))
					b.StartTimer()
					return snapshotFiles()
				})
			})
		})
	}
}

// manyChanges returns a task's worktree with 5,000 changed files in a
// repository of 5,000, whose objects are packed or not.
func manyChanges(b *testing.B, packed bool) string {
	repo := gittest.InitEmpty(b)
	for i := range 5_000 {
		gittest.Write(b, repo, fmt.Sprintf("pkg%02d/file%04d.go", i/100, i), strings.Repeat(fmt.Sprintf("// line %d of code\n", i), 20))
	}
	gittest.Commit(b, repo, "5,000 files")
	if packed {
		gittest.Git(b, repo, "repack", "-a", "-d", "-q")
	}
	wt := MustWorktree(b, repo)
	gittest.SettleIndex(b, wt)
	writeChanges(b, wt, "")
	// The first snapshot writes 5,000 blobs; those after it find them.
	MustSnapshot(b, wt)
	return wt
}

// writeChanges modifies 2,500 of manyChanges' tracked files and writes
// 2,500 untracked ones, each with a content of its own that starts with
// prefix.
func writeChanges(b *testing.B, wt, prefix string) {
	for i := range 2_500 {
		gittest.Write(b, wt, fmt.Sprintf("pkg%02d/file%04d.go", i*2/100, i*2), strings.Repeat(fmt.Sprintf("// %schanged line %d\n", prefix, i), 21))
		gittest.Write(b, wt, fmt.Sprintf("new%02d/file%04d.go", i/100, i), strings.Repeat(fmt.Sprintf("// %snew line %d\n", prefix, i), 10))
	}
}

// benchmarkFirstPage measures firstPage, which must list the first page
// of manyChanges.
func benchmarkFirstPage(b *testing.B, firstPage func() (string, gitdiff.Listing, error)) {
	check := func() {
		_, l, err := firstPage()
		switch {
		case err != nil:
			b.Fatal(err)
		case l.Total != 5_000 || len(l.Files) != shared.DefaultReviewFiles || l.Additions != 2_500*31 || l.Deletions != 2_500*20:
			b.Fatalf("unexpected listing: %d files, +%d −%d, a page of %d", l.Total, l.Additions, l.Deletions, len(l.Files))
		}
	}
	check()
	b.ReportAllocs()
	cpu := childCPU(b)
	for b.Loop() {
		check()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "ms/op")
	b.ReportMetric(float64((childCPU(b)-cpu).Microseconds())/1e3/float64(b.N), "git-cpu-ms/op")
}

// BenchmarkFileDiffPage measures one page of shared.DefaultReviewLines
// lines of the 20,000-line change of TestFileOfA20000LineChangeReadInPages,
// at its start and in its middle.
func BenchmarkFileDiffPage(b *testing.B) {
	dir, from, to := bigChange(b)
	for _, offset := range []int{0, 12_000} {
		b.Run(fmt.Sprint("offset ", offset), func(b *testing.B) {
			p := gitdiff.FilePage{From: from, To: to, Path: "f", Offset: offset}
			b.ReportAllocs()
			cpu := childCPU(b)
			for b.Loop() {
				resp, err := gitdiff.File(b.Context(), dir, p)
				if err != nil {
					b.Fatal(err)
				}
				if resp.NextOffset != offset+shared.DefaultReviewLines {
					b.Fatalf("next offset %d", resp.NextOffset)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "ms/op")
			b.ReportMetric(float64((childCPU(b)-cpu).Microseconds())/1e3/float64(b.N), "git-cpu-ms/op")
		})
	}
}

// childCPU returns the user plus system CPU time of the processes this
// one started and waited for so far: its gits.
func childCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
