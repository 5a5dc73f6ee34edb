package server_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/gitcli/gittest"
	"github.com/herd-dev/herd/shared"
)

// reviewBenchFiles is the size of the benchmark's repository and of its
// change.
const reviewBenchFiles = 5000

// BenchmarkReviewFilesFirstPage asks for the first page of a task's
// changed files over the WebSocket of a server on SQLite. The task's
// worktree, of a repository of 5,000 files whose objects are packed (as a
// clone's are), has 5,000 changed files: 2,500 tracked files modified and
// 2,500 untracked, small and all different, as gitdiff's own benchmark
// has them. Each request reads the task and its base tree, writes the
// working tree's snapshot (every changed file hashed) and lists the first
// page of the comparison, every file's counts included.
func BenchmarkReviewFilesFirstPage(b *testing.B) {
	repo := gittest.Init(b)
	name := func(i int) string { return fmt.Sprintf("pkg%02d/file%04d.go", i%50, i) }
	for i := range reviewBenchFiles {
		gittest.Write(b, repo, name(i), fmt.Sprintf("package pkg\n\nconst n%d = %d\n", i, i))
	}
	gittest.Commit(b, repo, "5,000 files")
	gittest.Git(b, repo, "gc", "--quiet")
	srv := MustStart(b, nil)
	// Making a worktree of 5,000 files takes a while on a busy machine.
	c := MustDial(b, srv, nil).patient()
	ws := c.call("workspace.create", map[string]any{"name": "W"})
	task := c.call("task.create", map[string]any{"workspace_id": ws["id"], "title": "bench",
		"repositories": []any{map[string]any{"path": repo}}})
	id, dir := repoOf(task)
	for i := range reviewBenchFiles / 2 {
		gittest.Write(b, dir, name(2*i), fmt.Sprintf("package pkg\n\nconst n%d = %d + 1\n", 2*i, 2*i))
		gittest.Write(b, dir, fmt.Sprintf("new%02d/file%04d.go", i%50, i), fmt.Sprintf("package pkg\n\nconst m%d = %d\n", i, i))
	}
	req := map[string]any{"task_id": task["id"], "repository_id": id, "scope": "task"}
	first := c.call("review.files", req)
	require.Equal(b, float64(reviewBenchFiles), first["total"])
	require.Len(b, first["files"], shared.DefaultReviewFiles)

	b.ResetTimer()
	for range b.N {
		page := c.call("review.files", req)
		if page["total"] != float64(reviewBenchFiles) {
			b.Fatalf("total %v", page["total"])
		}
	}
}
