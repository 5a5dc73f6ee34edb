package gitfinish

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/herd-dev/herd/server/gitcli"
	"github.com/herd-dev/herd/shared"
)

// CommitTimeout bounds a Commit as a whole, the wait for the directory's
// lock included: the repository's hooks run (a pre-commit hook may lint
// or test), and staging a large tree takes a while.
const CommitTimeout = 2 * time.Minute

// asciiSpace is what git's whitespace cleanup of a message strips.
const asciiSpace = " \t\n\v\f\r"

// Commit stages everything in the working tree in dir (git add --all:
// changes, deletions and untracked files that are not ignored) and
// commits it with message, returning the new commit's id. The message is
// kept as written but for git's whitespace cleanup (trailing spaces,
// leading and trailing blank lines, runs of blank lines); lines starting
// with '#' stay. The repository's hooks run. A message that is blank,
// longer than shared.MaxCommitMessageBytes or holds a NUL byte is
// shared.CodeBadRequest. A tree with nothing to commit, an author
// identity that neither git's configuration (user.name, user.email) nor
// GIT_AUTHOR_* and GIT_COMMITTER_* give (herd never commits under one git
// guessed from the machine's account), a failing hook, an index another
// git holds: shared.CodeConflict with git's own words. A failed commit
// leaves the changes staged.
func Commit(ctx context.Context, dir, message string) (string, error) {
	if dir == "" {
		return "", errors.New("commit: no directory named")
	}
	if err := checkMessage(message); err != nil {
		return "", err
	}
	opCtx, cancel := context.WithTimeout(ctx, CommitTimeout)
	defer cancel()
	unlock, err := acquire(ctx, opCtx, dir, "commit", CommitTimeout)
	if err != nil {
		return "", err
	}
	defer unlock()

	file, err := writeMessage(message)
	if err != nil {
		return "", err
	}
	defer os.Remove(file)
	git := &gitcli.Runner{Dir: dir, Timeout: CommitTimeout}
	if out, err := run(opCtx, git, "add", "--all"); err != nil {
		return "", failure(ctx, "stage the changes", CommitTimeout, err, out)
	}
	// user.useConfigOnly: a commit under a name and address git made up
	// from the machine's (root@host) would be pushed for all to see.
	out, err := run(opCtx, git, "-c", "user.useConfigOnly=true",
		"commit", "--quiet", "--cleanup=whitespace", "--file="+file)
	if err != nil {
		return "", failure(ctx, "commit", CommitTimeout, err, out)
	}
	id, err := git.Run(opCtx, "rev-parse", "--verify", "HEAD")
	if err != nil {
		return "", failure(ctx, "read the new commit", CommitTimeout, err, nil)
	}
	return strings.TrimSpace(string(id)), nil
}

// checkMessage returns a shared.CodeBadRequest error unless message can
// be a commit's.
func checkMessage(message string) error {
	switch {
	case strings.Trim(message, asciiSpace) == "":
		return shared.Errorf(shared.CodeBadRequest, "a commit needs a message")
	case len(message) > shared.MaxCommitMessageBytes:
		return shared.Errorf(shared.CodeBadRequest, "the commit message is %d bytes; the limit is %d",
			len(message), shared.MaxCommitMessageBytes)
	case strings.IndexByte(message, 0) >= 0:
		return shared.Errorf(shared.CodeBadRequest, "a commit message cannot hold a NUL byte")
	}
	return nil
}

// writeMessage writes message to a new temporary file and returns its
// path: git commit reads it from there (--file), as gitcli gives git no
// standard input, and a message in an argument would show in every
// process listing.
func writeMessage(message string) (string, error) {
	f, err := os.CreateTemp("", "herd-commit-message-")
	if err != nil {
		return "", fmt.Errorf("commit: write the message: %w", err)
	}
	_, err = f.WriteString(message)
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("commit: write the message: %w", err)
	}
	return f.Name(), nil
}
