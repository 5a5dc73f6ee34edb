package gitfinish

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/gitcli/gittest"
)

// users returns how many hold or wait for dir's lock.
func users(dir string) int {
	dirs.mu.Lock()
	defer dirs.mu.Unlock()
	if d := dirs.held[lockKey(dir)]; d != nil {
		return d.users
	}
	return 0
}

func TestCommitsOfOneWorktreeTakeTurns(t *testing.T) {
	repo := gittest.Init(t)
	// The first commit's pre-commit hook says it started and waits to be
	// released, while git holds the index lock; without taking turns, the
	// second commit's git add would find that lock taken and fail.
	ctl := t.TempDir()
	started, release := filepath.Join(ctl, "started"), filepath.Join(ctl, "release")
	require.NoError(t, syscall.Mkfifo(started, 0o600))
	require.NoError(t, syscall.Mkfifo(release, 0o600))
	hooks := gittest.Git(t, repo, "rev-parse", "--path-format=absolute", "--git-path", "hooks")
	require.NoError(t, os.MkdirAll(hooks, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(hooks, "pre-commit"), []byte("#!/bin/sh\n"+
		"if [ ! -e "+ctl+"/first ]; then : >"+ctl+"/first; echo started >"+started+"; cat "+release+" >/dev/null; fi\n"), 0o755))

	gittest.Write(t, repo, "one.txt", "1\n")
	first := make(chan error, 1)
	go func() {
		_, err := Commit(t.Context(), repo, "one")
		first <- err
	}()
	_, err := os.ReadFile(started)
	require.NoError(t, err)

	gittest.Write(t, repo, "two.txt", "2\n")
	second := make(chan error, 1)
	go func() {
		_, err := Commit(t.Context(), repo, "two")
		second <- err
	}()
	require.Eventually(t, func() bool { return users(repo) == 2 }, 10*time.Second, time.Millisecond,
		"the second commit waits for the first")
	require.NoError(t, os.WriteFile(release, []byte("go\n"), 0o600))

	require.NoError(t, <-first)
	require.NoError(t, <-second)
	require.Equal(t, "two\none\ninitial commit", gittest.Git(t, repo, "log", "--format=%s"))
	require.Equal(t, "one.txt", gittest.Git(t, repo, "show", "--format=", "--name-only", "HEAD~1"))
	require.Equal(t, "two.txt", gittest.Git(t, repo, "show", "--format=", "--name-only", "HEAD"))
	require.Zero(t, users(repo), "the lock is gone with its last user")
}

func TestWaitingForALockEndsWithTheContext(t *testing.T) {
	dir := t.TempDir()
	unlock, err := dirs.lock(t.Context(), dir)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = dirs.lock(ctx, dir)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 1, users(dir), "the holder is left")
	unlock()
	require.Zero(t, users(dir))
}

func TestTwoSpellingsOfADirectoryShareItsLock(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(dir, link))
	unlock, err := dirs.lock(t.Context(), dir)
	require.NoError(t, err)
	defer unlock()
	require.Equal(t, 1, users(link+"/."))
}
