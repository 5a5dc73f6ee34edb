package gitfinish_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/gitcli/gittest"
	"github.com/herd-dev/herd/server/gitfinish"
)

// MustRead reads the state of dir against base, which must succeed.
func MustRead(tb testing.TB, dir, base string) gitfinish.State {
	tb.Helper()
	s, err := gitfinish.Read(tb.Context(), dir, base)
	require.NoError(tb, err)
	return s
}

func TestAFreshWorktreeHasNothingToFinish(t *testing.T) {
	wt := MustWorktree(t, gittest.Init(t))
	require.Equal(t, gitfinish.State{Branch: "herd/task"}, MustRead(t, wt, "main"))
}

func TestUncommittedCountsEveryFileACommitWouldTake(t *testing.T) {
	repo := gittest.Init(t)
	for _, name := range []string{"edit.txt", "staged.txt", "gone.txt", "from.txt"} {
		gittest.Write(t, repo, name, name+"\n")
	}
	gittest.Write(t, repo, ".gitignore", "*.log\n")
	gittest.Commit(t, repo, "files")
	wt := MustWorktree(t, repo)

	gittest.Write(t, wt, "edit.txt", "changed\n") // unstaged
	gittest.Write(t, wt, "staged.txt", "changed\n")
	gittest.Git(t, wt, "add", "staged.txt")                      // staged
	require.NoError(t, os.Remove(filepath.Join(wt, "gone.txt"))) // deleted
	gittest.Git(t, wt, "mv", "from.txt", "to.txt")               // renamed: a deletion and an addition
	gittest.Write(t, wt, "new/deep/untracked.txt", "x\n")        // untracked, in a new directory
	gittest.Write(t, wt, "debug.log", "ignored\n")               // ignored

	s := MustRead(t, wt, "main")
	require.Equal(t, 6, s.Uncommitted)
	require.Zero(t, s.Ahead)
}

func TestAheadCountsTheCommitsTheBaseLacks(t *testing.T) {
	repo := gittest.Init(t)
	wt := MustWorktree(t, repo)
	gittest.Write(t, wt, "one.txt", "1\n")
	gittest.Commit(t, wt, "one")
	gittest.Write(t, wt, "two.txt", "2\n")
	gittest.Commit(t, wt, "two")
	gittest.Write(t, repo, "base.txt", "the base moved on\n")
	gittest.Commit(t, repo, "base")

	require.Equal(t, 2, MustRead(t, wt, "main").Ahead)
	require.Zero(t, MustRead(t, wt, "no-such-branch").Ahead, "a base that cannot be resolved")
	require.Zero(t, MustRead(t, wt, "").Ahead, "no base")
}

func TestThePushRemoteIsTheUpstreamsThenOriginThenTheOnlyOne(t *testing.T) {
	cases := []struct {
		name    string
		remotes []string
		// upstream is the remote branch.herd/task.remote names; "" for none.
		upstream string
		want     string
	}{
		{name: "no remote", want: ""},
		{name: "the only remote", remotes: []string{"fork"}, want: "fork"},
		{name: "origin among several", remotes: []string{"a", "origin", "z"}, want: "origin"},
		{name: "several without origin", remotes: []string{"a", "b"}, want: ""},
		{name: "the upstream's remote before origin", remotes: []string{"fork", "origin"}, upstream: "fork", want: "fork"},
		{name: "an upstream in the repository itself", remotes: []string{"origin"}, upstream: ".", want: "origin"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wt := MustWorktree(t, gittest.Init(t))
			for _, r := range c.remotes {
				gittest.Git(t, wt, "remote", "add", r, "https://example.invalid/"+r+".git")
			}
			if c.upstream != "" {
				gittest.Git(t, wt, "config", "branch.herd/task.remote", c.upstream)
			}
			s := MustRead(t, wt, "main")
			require.Equal(t, c.want, s.Remote)
			if c.want != "" {
				require.Equal(t, "https://example.invalid/"+c.want+".git", s.RemoteURL)
			} else {
				require.Empty(t, s.RemoteURL)
			}
			require.Empty(t, s.Upstream, "no remote-tracking branch exists")
			require.Nil(t, s.UpstreamAhead)
		})
	}
}

func TestTheRemoteURLCarriesNoCredentials(t *testing.T) {
	cases := map[string]string{
		"https://x-access-token:ghp_secret@github.com/o/r.git": "https://github.com/o/r.git",
		"https://ghp_secret@github.com/o/r.git":                "https://github.com/o/r.git",
		"ssh://git:secret@github.com/o/r.git":                  "ssh://git@github.com/o/r.git",
		"ssh://git@github.com/o/r.git":                         "ssh://git@github.com/o/r.git",
		"git@github.com:o/r.git":                               "git@github.com:o/r.git",
		"/srv/git/r.git":                                       "/srv/git/r.git",
	}
	for remote, want := range cases {
		t.Run(remote, func(t *testing.T) {
			wt := MustWorktree(t, gittest.Init(t))
			gittest.Git(t, wt, "remote", "add", "origin", remote)
			require.Equal(t, want, MustRead(t, wt, "main").RemoteURL)
		})
	}
}

func TestADetachedHeadHasNoBranch(t *testing.T) {
	wt := MustWorktree(t, gittest.Init(t))
	gittest.Git(t, wt, "remote", "add", "origin", "https://example.invalid/r.git")
	gittest.Git(t, wt, "checkout", "--quiet", "--detach")
	s := MustRead(t, wt, "main")
	require.Empty(t, s.Branch)
	require.Equal(t, "origin", s.Remote)
	require.Nil(t, s.UpstreamAhead)
}

func TestBeforeTheFirstCommit(t *testing.T) {
	repo := gittest.InitEmpty(t)
	gittest.Write(t, repo, "first.txt", "1\n")
	require.Equal(t, gitfinish.State{Branch: "main", Uncommitted: 1}, MustRead(t, repo, "main"))
}

func TestReadingWhatIsNoRepositoryFails(t *testing.T) {
	_, err := gitfinish.Read(t.Context(), t.TempDir(), "main")
	require.ErrorContains(t, err, "not a git repository")
	_, err = gitfinish.Read(t.Context(), "", "main")
	require.ErrorContains(t, err, "no directory")
}
