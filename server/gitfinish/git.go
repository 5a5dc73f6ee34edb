package gitfinish

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/herd-dev/herd/server/gitcli"
	"github.com/herd-dev/herd/shared"
)

// maxOutputBytes bounds the standard output run keeps of one command.
// git's answers here are short; what they say beyond this is not needed
// to tell a person why a command failed.
const maxOutputBytes = 4 << 10

// run runs git with args and returns the start of its standard output,
// split into lines. Unlike gitcli's Run it keeps them when git fails too:
// git commit says why it committed nothing on standard output, and git
// push --porcelain what became of each ref.
func run(ctx context.Context, git *gitcli.Runner, args ...string) ([]string, error) {
	var lines []string
	kept := 0
	err := git.Stream(ctx, bufio.ScanLines, func(line []byte) bool {
		// Reading on to the end, rather than stopping git, lets it finish
		// what it is doing.
		if kept < maxOutputBytes {
			lines = append(lines, string(line[:min(len(line), maxOutputBytes-kept)]))
			kept += len(line)
		}
		return true
	}, args...)
	return lines, err
}

// failure is the error of a command run for what ("commit", "push
// herd/x to origin") within bound that failed with err, after writing
// stdout. parent is the caller's context: when it ended, the caller gave
// up and gets its context's error back. A command that outlived bound is
// shared.CodeUnavailable; one git refused (it exited with a status) is
// shared.CodeConflict with git's words, from standard output and then
// standard error.
func failure(parent context.Context, what string, bound time.Duration, err error, stdout []string) error {
	gitErr, isGit := errors.AsType[*gitcli.Error](err)
	switch {
	case parent.Err() != nil:
		return fmt.Errorf("%s: %w", what, err)
	case errors.Is(err, context.DeadlineExceeded):
		return shared.Errorf(shared.CodeUnavailable, "%s did not finish within %v", what, bound)
	case !isGit || gitErr.ExitCode <= 0:
		return fmt.Errorf("%s: %w", what, err)
	}
	var words []string
	for _, line := range stdout {
		if line = strings.TrimSpace(line); line != "" {
			words = append(words, line)
		}
	}
	if gitErr.Stderr != "" {
		words = append(words, gitErr.Stderr)
	}
	if len(words) == 0 {
		words = append(words, fmt.Sprintf("git exited with status %d", gitErr.ExitCode))
	}
	return shared.Errorf(shared.CodeConflict, "%s: %s", what, strings.Join(words, "; "))
}
