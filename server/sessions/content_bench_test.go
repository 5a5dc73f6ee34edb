package sessions

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// BenchmarkListFiles measures session.files.list on a worktree of 20,000
// untracked files in 200 directories: the first page of every file, and a
// query that matches one file in a hundred (the @ completion's case).
func BenchmarkListFiles(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	repo := filepath.Join(dir, "repo")
	for d := range 200 {
		sub := filepath.Join(repo, fmt.Sprintf("pkg%03d", d))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 100 {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("file%03d.go", f)), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	if out, err := exec.Command("git", "-C", repo, "init", "--quiet").CombinedOutput(); err != nil {
		b.Fatalf("git init: %v %s", err, out)
	}
	st, err := store.Open(ctx, store.Config{DataDir: dir})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ws, _ := st.CreateWorkspace(ctx, "w")
	task, err := st.CreateTask(ctx, shared.TaskCreateRequest{WorkspaceID: ws.ID, Title: "t",
		Repositories: []shared.RepositoryInput{{Path: repo, RunInPlace: true}}})
	if err != nil {
		b.Fatal(err)
	}
	session, err := st.CreateSession(ctx, task.ID, agent.MockProfileID)
	if err != nil {
		b.Fatal(err)
	}
	m, err := New(Config{Store: st, Profile: noProfile, ScratchDir: filepath.Join(dir, "scratch")})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	for _, q := range []struct{ name, query string }{{"first page", ""}, {"query", "file042"}} {
		b.Run(q.name, func(b *testing.B) {
			for b.Loop() {
				resp, err := m.ListFiles(ctx, shared.FileListRequest{SessionID: session.ID, Query: q.query})
				if err != nil || len(resp.Files) == 0 {
					b.Fatalf("%+v %v", resp, err)
				}
			}
		})
	}
}
