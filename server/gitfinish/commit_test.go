package gitfinish_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/gitcli/gittest"
	"github.com/herd-dev/herd/server/gitfinish"
	"github.com/herd-dev/herd/shared"
)

// Message returns the message of dir's HEAD commit as stored.
func Message(tb testing.TB, dir string) string {
	tb.Helper()
	// gittest.Git drops the final newline, which the message has.
	_, msg, found := strings.Cut(gittest.Git(tb, dir, "cat-file", "commit", "HEAD")+"\n", "\n\n")
	require.True(tb, found)
	return msg
}

func TestCommitTakesEditsRenamesDeletionsAndUntrackedFiles(t *testing.T) {
	repo := gittest.Init(t)
	gittest.Write(t, repo, "edit.txt", "before\n")
	gittest.Write(t, repo, "gone.txt", "gone\n")
	gittest.Write(t, repo, "from.txt", "a file long enough\nthat git sees\nits rename\n")
	gittest.Write(t, repo, ".gitignore", "*.log\n")
	gittest.Commit(t, repo, "files")
	wt := MustWorktree(t, repo)

	gittest.Write(t, wt, "edit.txt", "after\n")
	require.NoError(t, os.Remove(filepath.Join(wt, "gone.txt")))
	require.NoError(t, os.Rename(filepath.Join(wt, "from.txt"), filepath.Join(wt, "to.txt")))
	gittest.Write(t, wt, "new/untracked.txt", "new\n")
	gittest.Write(t, wt, "debug.log", "ignored\n")

	id, err := gitfinish.Commit(t.Context(), wt, "Finish the task\n\nWith a body.\n")
	require.NoError(t, err)
	require.Equal(t, gittest.Git(t, wt, "rev-parse", "HEAD"), id)
	require.Equal(t, strings.Join([]string{
		"M\tedit.txt", "D\tgone.txt", "A\tnew/untracked.txt", "R100\tfrom.txt\tto.txt",
	}, "\n"), gittest.Git(t, wt, "show", "--format=", "--name-status", "--find-renames", "HEAD"))
	require.Equal(t, "Finish the task\n\nWith a body.\n", Message(t, wt))

	s := MustRead(t, wt, "main")
	require.Zero(t, s.Uncommitted, "the tree is clean")
	require.Equal(t, 1, s.Ahead)
	require.FileExists(t, filepath.Join(wt, "debug.log"), "an ignored file stays")
	require.Empty(t, gittest.Git(t, wt, "ls-files", "debug.log"), "an ignored file is not committed")
}

func TestCommitKeepsTheMessageAsWritten(t *testing.T) {
	wt := MustWorktree(t, gittest.Init(t))
	gittest.Write(t, wt, "a.txt", "a\n")
	// Lines starting with '#' are Markdown headings, not comments: only
	// whitespace is cleaned up.
	_, err := gitfinish.Commit(t.Context(), wt, "\n\nSubject   \n\n# Heading\n\n\n\n- item\t\n\n")
	require.NoError(t, err)
	require.Equal(t, "Subject\n\n# Heading\n\n- item\n", Message(t, wt))
}

func TestCommitWithNothingToCommitIsAConflict(t *testing.T) {
	repo := gittest.Init(t)
	gittest.Write(t, repo, ".gitignore", "*.log\n")
	gittest.Commit(t, repo, "ignore logs")
	wt := MustWorktree(t, repo)
	gittest.Write(t, wt, "debug.log", "ignored\n")
	head := gittest.Git(t, wt, "rev-parse", "HEAD")

	_, err := gitfinish.Commit(t.Context(), wt, "nothing")
	RequireCode(t, err, shared.CodeConflict, "nothing to commit, working tree clean")
	require.Equal(t, head, gittest.Git(t, wt, "rev-parse", "HEAD"))
}

func TestCommitWithoutAnIdentityIsAConflict(t *testing.T) {
	// EMAIL gives git an address, from which it would commit under a name
	// guessed from the account (root), as it does outside herd.
	for name, email := range map[string]string{"none at all": "", "a guessed name": "agent@example.com"} {
		t.Run(name, func(t *testing.T) {
			wt := MustWorktree(t, gittest.Init(t))
			gittest.Write(t, wt, "a.txt", "a\n")
			// gittest gives every git an identity in the environment, and
			// HOME an empty directory without configuration; take the
			// identity away.
			for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"} {
				t.Setenv(k, "") // restores it after the test
				require.NoError(t, os.Unsetenv(k))
			}
			if email != "" {
				t.Setenv("EMAIL", email)
			}
			head := gittest.Git(t, wt, "rev-parse", "HEAD")

			_, err := gitfinish.Commit(t.Context(), wt, "who am I")
			RequireCode(t, err, shared.CodeConflict, "Author identity unknown", "Please tell me who you are")
			require.Equal(t, head, gittest.Git(t, wt, "rev-parse", "HEAD"))
		})
	}
}

func TestCommitRefusedByAHookIsAConflictWithItsOutput(t *testing.T) {
	wt := MustWorktree(t, gittest.Init(t))
	Hook(t, wt, "pre-commit", "echo 'lint: a.txt is not formatted'\nexit 1\n")
	gittest.Write(t, wt, "a.txt", "a\n")
	head := gittest.Git(t, wt, "rev-parse", "HEAD")

	_, err := gitfinish.Commit(t.Context(), wt, "unformatted")
	RequireCode(t, err, shared.CodeConflict, "lint: a.txt is not formatted")
	require.Equal(t, head, gittest.Git(t, wt, "rev-parse", "HEAD"))
}

func TestCommitRefusesAMessageThatCannotBeOne(t *testing.T) {
	cases := map[string]string{
		"empty":          "",
		"blank":          " \n\t\n",
		"a NUL byte":     "subject\x00",
		"over the limit": strings.Repeat("x", shared.MaxCommitMessageBytes+1),
	}
	for name, message := range cases {
		t.Run(name, func(t *testing.T) {
			wt := MustWorktree(t, gittest.Init(t))
			gittest.Write(t, wt, "a.txt", "a\n")
			head := gittest.Git(t, wt, "rev-parse", "HEAD")

			_, err := gitfinish.Commit(t.Context(), wt, message)
			RequireCode(t, err, shared.CodeBadRequest)
			require.Equal(t, head, gittest.Git(t, wt, "rev-parse", "HEAD"))
			require.Equal(t, "?? a.txt", gittest.Git(t, wt, "status", "--porcelain"), "nothing was staged")
		})
	}
}

func TestCommitAtTheLimitIsTaken(t *testing.T) {
	wt := MustWorktree(t, gittest.Init(t))
	gittest.Write(t, wt, "a.txt", "a\n")
	message := strings.Repeat("x", shared.MaxCommitMessageBytes-1) + "\n"
	_, err := gitfinish.Commit(t.Context(), wt, message)
	require.NoError(t, err)
	require.Equal(t, message, Message(t, wt))
}

func TestCommitWhileAnotherGitHoldsTheIndexIsAConflict(t *testing.T) {
	wt := MustWorktree(t, gittest.Init(t))
	gittest.Write(t, wt, "a.txt", "a\n")
	// The agent's own git, say, in the middle of a command.
	lock := gittest.Git(t, wt, "rev-parse", "--path-format=absolute", "--git-path", "index.lock")
	require.NoError(t, os.WriteFile(lock, nil, 0o644))

	_, err := gitfinish.Commit(t.Context(), wt, "blocked")
	RequireCode(t, err, shared.CodeConflict, "stage the changes", "index.lock': File exists")
}
