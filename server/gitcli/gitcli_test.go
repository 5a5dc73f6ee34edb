package gitcli_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/gitcli"
	"github.com/herd-dev/herd/server/gitcli/gittest"
)

func TestMain(m *testing.M) { os.Exit(gittest.Main(m)) }

func TestRunReturnsStandardOutput(t *testing.T) {
	repo := gittest.Init(t)
	out, err := gitcli.Run(t.Context(), repo, "rev-parse", "--abbrev-ref", "HEAD")
	require.NoError(t, err)
	require.Equal(t, "main\n", string(out))
}

func TestFailureCarriesExitCodeAndMessage(t *testing.T) {
	dir := t.TempDir()
	_, err := gitcli.Run(t.Context(), dir, "rev-parse", "--git-dir")
	require.Error(t, err)
	require.Equal(t, 128, gitcli.ExitCode(err))
	require.Equal(t, -1, gitcli.ExitCode(errors.New("not git")))
	require.Equal(t, "git rev-parse --git-dir: fatal: not a git repository (or any of the parent directories): .git", err.Error())
}

func TestMissingDirectoryFailsWithoutExitCode(t *testing.T) {
	_, err := gitcli.Run(t.Context(), filepath.Join(t.TempDir(), "gone"), "status")
	require.Error(t, err)
	require.Equal(t, -1, gitcli.ExitCode(err))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestOutputOverTheLimitIsAnError(t *testing.T) {
	r := gitcli.Runner{Dir: t.TempDir(), Limit: 4}
	_, err := r.Run(t.Context(), "version")
	require.ErrorContains(t, err, "git version: output longer than 4 bytes")
}

func TestTimeoutKillsGitAndWhatItStarted(t *testing.T) {
	repo := gittest.Init(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	r := gitcli.Runner{Dir: repo, Timeout: 500 * time.Millisecond}
	_, err := r.Run(t.Context(), "-c", "alias.hang=!echo $$ >"+pidFile+"; exec sleep 60", "hang")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, -1, gitcli.ExitCode(err))
	requireGoneFile(t, pidFile)
}

func TestCancelKillsGitAndWhatItStarted(t *testing.T) {
	repo := gittest.Init(t)
	fifo := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	ctx, cancel := context.WithCancel(t.Context())
	pid := make(chan int, 1)
	go func() {
		defer cancel()
		// Reading the FIFO waits for the alias's shell to write its pid.
		b, _ := os.ReadFile(fifo)
		n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		pid <- n
	}()
	_, err := gitcli.Run(ctx, repo, "-c", "alias.hang=!echo $$ >"+fifo+"; exec sleep 60", "hang")
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, -1, gitcli.ExitCode(err))
	p := <-pid
	require.Positive(t, p)
	requireGone(t, p)
}

// requireGoneFile fails t unless the process whose id is in pidFile ends
// soon.
func requireGoneFile(t *testing.T, pidFile string) {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if errors.Is(err, os.ErrNotExist) {
		return // the shell never started, so nothing can outlive git
	}
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	requireGone(t, pid)
}

// requireGone fails t unless the alias's process pid ends soon.
func requireGone(t *testing.T, pid int) {
	t.Helper()
	require.Eventually(t, func() bool { return processGone(pid) }, 5*time.Second, 10*time.Millisecond,
		"the alias's sleep outlived git")
}

func TestCancelledContextStopsGit(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := gitcli.Run(ctx, t.TempDir(), "version")
	require.ErrorIs(t, err, context.Canceled)
}

func TestStreamHandsOverEveryToken(t *testing.T) {
	repo := gittest.Init(t)
	gittest.Write(t, repo, "with space", "x\n")
	gittest.Write(t, repo, "new\nline", "x\n")
	gittest.Commit(t, repo, "names")
	var names []string
	r := gitcli.Runner{Dir: repo}
	err := r.Stream(t.Context(), gitcli.ScanNUL, func(tok []byte) bool {
		names = append(names, string(tok))
		return true
	}, "ls-files", "-z")
	require.NoError(t, err)
	require.Equal(t, []string{"README", "new\nline", "with space"}, names)
}

func TestStreamStopsWhenAsked(t *testing.T) {
	repo := gittest.Init(t)
	for i := range 100 {
		gittest.Write(t, repo, fmt.Sprintf("f%03d", i), "x\n")
	}
	gittest.Commit(t, repo, "many")
	seen := 0
	r := gitcli.Runner{Dir: repo}
	err := r.Stream(t.Context(), bufio.ScanLines, func([]byte) bool {
		seen++
		return seen < 3
	}, "ls-files")
	require.NoError(t, err)
	require.Equal(t, 3, seen)
}

func TestStreamRejectsATokenOverTheLimit(t *testing.T) {
	repo := gittest.Init(t)
	gittest.Write(t, repo, strings.Repeat("n", 100), "x\n")
	gittest.Commit(t, repo, "long name")
	r := gitcli.Runner{Dir: repo, Limit: 64}
	err := r.Stream(t.Context(), gitcli.ScanNUL, func([]byte) bool { return true }, "ls-files", "-z")
	require.ErrorIs(t, err, bufio.ErrTooLong)
}

func TestStreamReportsFailure(t *testing.T) {
	r := gitcli.Runner{Dir: t.TempDir()}
	err := r.Stream(t.Context(), bufio.ScanLines, func([]byte) bool { return true }, "ls-files")
	require.Equal(t, 128, gitcli.ExitCode(err))
	require.ErrorContains(t, err, "not a git repository")
}

func TestEnvironmentPointingElsewhereIsIgnored(t *testing.T) {
	repo := gittest.Init(t)
	other := gittest.Init(t)
	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))
	t.Setenv("GIT_WORK_TREE", other)
	out, err := gitcli.Run(t.Context(), repo, "rev-parse", "--show-toplevel")
	require.NoError(t, err)
	want, err := filepath.EvalSymlinks(repo)
	require.NoError(t, err)
	require.Equal(t, want, strings.TrimSpace(string(out)))
}

func TestEnvSetsARemovedVariableOnPurpose(t *testing.T) {
	repo := gittest.Init(t)
	t.Setenv("GIT_INDEX_FILE", filepath.Join(t.TempDir(), "inherited")) // removed, as always
	index := filepath.Join(t.TempDir(), "index")                        // none yet: an empty index
	r := gitcli.Runner{Dir: repo, Env: []string{"GIT_INDEX_FILE=" + index}}

	out, err := r.Run(t.Context(), "ls-files")
	require.NoError(t, err)
	require.Empty(t, string(out), "git reads the index Env names, not the repository's")
	gittest.Write(t, repo, "new.txt", "n\n")
	_, err = r.Run(t.Context(), "add", "new.txt")
	require.NoError(t, err)
	require.FileExists(t, index)

	out, err = gitcli.Run(t.Context(), repo, "ls-files")
	require.NoError(t, err)
	require.Equal(t, "README\n", string(out), "without Env, git reads the repository's own index, untouched")
}

func TestGitNeverPromptsNorTakesOptionalLocks(t *testing.T) {
	repo := gittest.Init(t)
	out, err := gitcli.Run(t.Context(), repo, "-c", "alias.env=!env", "env")
	require.NoError(t, err)
	env := strings.Split(string(out), "\n")
	require.Contains(t, env, "GIT_TERMINAL_PROMPT=0")
	require.Contains(t, env, "GIT_OPTIONAL_LOCKS=0")
	require.Contains(t, env, "LC_ALL=C")
}

// processGone reports whether pid no longer runs: it does not exist, or it
// is a zombie waiting for a reaper.
func processGone(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(stat, ')')
	return i > 0 && len(stat) > i+2 && stat[i+2] == 'Z'
}
