package gitfinish_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/gitcli/gittest"
	"github.com/herd-dev/herd/server/gitfinish"
	"github.com/herd-dev/herd/shared"
)

// MustWorktreeWithRemote adds a task's worktree of a repository whose
// origin is a bare repository on disk, and returns both paths.
func MustWorktreeWithRemote(tb testing.TB) (wt, remote string) {
	tb.Helper()
	repo := gittest.Init(tb)
	remote = MustBare(tb)
	gittest.Git(tb, repo, "remote", "add", "origin", remote)
	return MustWorktree(tb, repo), remote
}

func TestPushSendsTheBranchAndSetsItsUpstream(t *testing.T) {
	wt, remote := MustWorktreeWithRemote(t)
	gittest.Write(t, wt, "a.txt", "a\n")
	_, err := gitfinish.Commit(t.Context(), wt, "first")
	require.NoError(t, err)

	out, err := gitfinish.Push(t.Context(), wt)
	require.NoError(t, err)
	require.Equal(t, "To "+remote+"\n"+
		"* [new branch] HEAD -> herd/task\n"+
		"branch 'herd/task' set up to track 'origin/herd/task'.", out)
	head := gittest.Git(t, wt, "rev-parse", "HEAD")
	require.Equal(t, head, gittest.Git(t, remote, "rev-parse", "refs/heads/herd/task"))
	s := MustRead(t, wt, "main")
	require.Equal(t, "origin", s.Remote)
	require.Equal(t, remote, s.RemoteURL)
	require.Equal(t, "origin/herd/task", s.Upstream)
	require.Equal(t, new(0), s.UpstreamAhead)

	gittest.Write(t, wt, "b.txt", "b\n")
	_, err = gitfinish.Commit(t.Context(), wt, "second")
	require.NoError(t, err)
	require.Equal(t, new(1), MustRead(t, wt, "main").UpstreamAhead)
	out, err = gitfinish.Push(t.Context(), wt)
	require.NoError(t, err)
	next := gittest.Git(t, wt, "rev-parse", "HEAD")
	require.Contains(t, out, head[:7]+".."+next[:7]+" HEAD -> herd/task")
	require.Equal(t, next, gittest.Git(t, remote, "rev-parse", "refs/heads/herd/task"))
	require.Equal(t, new(0), MustRead(t, wt, "main").UpstreamAhead)
}

func TestAPushThatIsNotAFastForwardIsRejectedWithGitsReason(t *testing.T) {
	wt, remote := MustWorktreeWithRemote(t)
	gittest.Write(t, wt, "a.txt", "a\n")
	gittest.Commit(t, wt, "first")
	_, err := gitfinish.Push(t.Context(), wt)
	require.NoError(t, err)

	// Someone else pushes to the branch.
	other := filepath.Join(t.TempDir(), "other")
	gittest.Git(t, t.TempDir(), "clone", "--quiet", "--branch", "herd/task", remote, other)
	gittest.Write(t, other, "theirs.txt", "theirs\n")
	gittest.Commit(t, other, "theirs")
	gittest.Git(t, other, "push", "--quiet", "origin", "herd/task")
	theirs := gittest.Git(t, other, "rev-parse", "HEAD")

	gittest.Write(t, wt, "mine.txt", "mine\n")
	gittest.Commit(t, wt, "mine")
	gittest.Git(t, wt, "fetch", "--quiet", "origin")
	_, err = gitfinish.Push(t.Context(), wt)
	RequireCode(t, err, shared.CodeConflict, "! [rejected] HEAD -> herd/task (non-fast-forward)", "failed to push some refs")
	require.Equal(t, theirs, gittest.Git(t, remote, "rev-parse", "refs/heads/herd/task"), "the remote keeps their commit")
}

func TestPushRefusals(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T) string // returns the directory to push
		words []string
	}{
		{
			name:  "no remote",
			setup: func(t *testing.T) string { return MustWorktree(t, gittest.Init(t)) },
			words: []string{"no remote to push herd/task to"},
		},
		{
			name: "a remote missing on disk",
			setup: func(t *testing.T) string {
				wt := MustWorktree(t, gittest.Init(t))
				gittest.Git(t, wt, "remote", "add", "origin", filepath.Join(t.TempDir(), "gone.git"))
				return wt
			},
			words: []string{"push herd/task to origin", "gone.git' does not appear to be a git repository"},
		},
		{
			name: "a detached HEAD",
			setup: func(t *testing.T) string {
				wt, _ := MustWorktreeWithRemote(t)
				gittest.Git(t, wt, "checkout", "--quiet", "--detach")
				return wt
			},
			words: []string{"HEAD is detached"},
		},
		{
			name: "no commit yet",
			setup: func(t *testing.T) string {
				repo := gittest.InitEmpty(t)
				gittest.Git(t, repo, "remote", "add", "origin", MustBare(t))
				return repo
			},
			words: []string{"src refspec HEAD does not match any"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := gitfinish.Push(t.Context(), c.setup(t))
			RequireCode(t, err, shared.CodeConflict, c.words...)
		})
	}
}

// unauthorized is a git server over HTTP that refuses everyone.
func unauthorized(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/o/r.git"
}

// unsetenv unsets k for the rest of the test.
func unsetenv(t *testing.T, k string) {
	t.Setenv(k, "") // restores it after the test
	require.NoError(t, os.Unsetenv(k))
}

func TestAPushNeedingCredentialsFailsRatherThanPrompt(t *testing.T) {
	wt := MustWorktree(t, gittest.Init(t))
	gittest.Git(t, wt, "remote", "add", "origin", unauthorized(t))
	// A desktop session's SSH_ASKPASS opens a dialog; git falls back on
	// it when nothing else is configured.
	asked := filepath.Join(t.TempDir(), "asked")
	askpass := filepath.Join(t.TempDir(), "askpass")
	WriteScript(t, askpass, "echo \"$1\" >>"+asked+"\necho someone\n")
	unsetenv(t, "GIT_ASKPASS")
	t.Setenv("SSH_ASKPASS", askpass)

	_, err := gitfinish.Push(t.Context(), wt)
	RequireCode(t, err, shared.CodeConflict, "could not read Username", "terminal prompts disabled")
	require.NoFileExists(t, asked, "SSH_ASKPASS was not run")
}

func TestAPushUsesTheAskpassThePersonConfigured(t *testing.T) {
	for name, configure := range map[string]func(t *testing.T, wt, askpass string){
		"GIT_ASKPASS":  func(t *testing.T, _, askpass string) { t.Setenv("GIT_ASKPASS", askpass) },
		"core.askPass": func(t *testing.T, wt, askpass string) { gittest.Git(t, wt, "config", "core.askPass", askpass) },
	} {
		t.Run(name, func(t *testing.T) {
			wt := MustWorktree(t, gittest.Init(t))
			gittest.Git(t, wt, "remote", "add", "origin", unauthorized(t))
			asked := filepath.Join(t.TempDir(), "asked")
			askpass := filepath.Join(t.TempDir(), "askpass")
			WriteScript(t, askpass, "echo \"$1\" >>"+asked+"\necho token\n")
			unsetenv(t, "GIT_ASKPASS")
			configure(t, wt, askpass)

			_, err := gitfinish.Push(t.Context(), wt)
			RequireCode(t, err, shared.CodeConflict, "Authentication failed")
			b, err := os.ReadFile(asked)
			require.NoError(t, err, "the person's askpass was asked")
			require.Contains(t, string(b), "Username for")
		})
	}
}

func TestAPushOverSSHRunsSSHInBatchModeUnlessThePersonChoseACommand(t *testing.T) {
	cases := []struct {
		name      string
		configure func(t *testing.T, wt, ssh string)
		want      string // the start of the arguments ssh received
	}{
		{name: "nothing configured", configure: func(*testing.T, string, string) {}, want: "-o BatchMode=yes git@example.invalid"},
		{
			name:      "GIT_SSH_COMMAND",
			configure: func(t *testing.T, _, ssh string) { t.Setenv("GIT_SSH_COMMAND", ssh+" -i mine") },
			want:      "-i mine git@example.invalid",
		},
		{
			name:      "GIT_SSH",
			configure: func(t *testing.T, _, ssh string) { t.Setenv("GIT_SSH", ssh) },
			want:      "git@example.invalid",
		},
		{
			name:      "core.sshCommand",
			configure: func(t *testing.T, wt, ssh string) { gittest.Git(t, wt, "config", "core.sshCommand", ssh+" -i mine") },
			want:      "-i mine git@example.invalid",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wt := MustWorktree(t, gittest.Init(t))
			gittest.Git(t, wt, "remote", "add", "origin", "ssh://git@example.invalid/o/r.git")
			// An ssh on PATH that records its arguments and fails as ssh
			// does when it cannot connect.
			bin := t.TempDir()
			args := filepath.Join(t.TempDir(), "args")
			WriteScript(t, filepath.Join(bin, "ssh"), "echo \"$@\" >"+args+"\necho 'ssh: connection refused' >&2\nexit 255\n")
			t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			unsetenv(t, "GIT_SSH_COMMAND")
			unsetenv(t, "GIT_SSH")
			c.configure(t, wt, filepath.Join(bin, "ssh"))

			_, err := gitfinish.Push(t.Context(), wt)
			RequireCode(t, err, shared.CodeConflict, "ssh: connection refused")
			b, err := os.ReadFile(args)
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(string(b), c.want), "ssh ran with %q", b)
		})
	}
}

func TestFilesNamedLikeRevisionsDoNotConfuseRead(t *testing.T) {
	wt, _ := MustWorktreeWithRemote(t)
	gittest.Write(t, wt, "a.txt", "a\n")
	gittest.Commit(t, wt, "first")
	for _, name := range []string{"@{upstream}", "@{upstream}..HEAD", "main..HEAD"} {
		gittest.Write(t, wt, name, "x\n")
	}
	s := MustRead(t, wt, "main")
	require.Empty(t, s.Upstream, "no upstream yet")
	require.Equal(t, 1, s.Ahead)

	_, err := gitfinish.Push(t.Context(), wt)
	require.NoError(t, err)
	s = MustRead(t, wt, "main")
	require.Equal(t, "origin/herd/task", s.Upstream)
	require.Equal(t, new(0), s.UpstreamAhead)
	require.Equal(t, 1, s.Ahead)
	require.Equal(t, 3, s.Uncommitted)
}

func TestAnUpstreamWhoseRemoteBranchIsGoneIsNone(t *testing.T) {
	wt, _ := MustWorktreeWithRemote(t)
	gittest.Write(t, wt, "a.txt", "a\n")
	gittest.Commit(t, wt, "first")
	_, err := gitfinish.Push(t.Context(), wt)
	require.NoError(t, err)
	gittest.Git(t, wt, "branch", "--quiet", "--delete", "--remotes", "origin/herd/task")
	gittest.Write(t, wt, "@{upstream}", "a file, not the upstream\n")
	s := MustRead(t, wt, "main")
	require.Equal(t, "origin", s.Remote, "the upstream's remote still")
	require.Empty(t, s.Upstream)
	require.Nil(t, s.UpstreamAhead)
}
