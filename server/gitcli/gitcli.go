package gitcli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

const (
	// DefaultTimeout bounds one command when Runner.Timeout is zero.
	DefaultTimeout = 30 * time.Second
	// DefaultLimit bounds the standard output Run keeps, and the length of
	// one token Stream hands over, when Runner.Limit is zero.
	DefaultLimit = 64 << 10

	// stderrLimit bounds the standard error kept for an Error's message.
	stderrLimit = 4 << 10
	// waitDelay bounds how long a finished or killed git's pipes may stay
	// open, held by a descendant that escaped the kill.
	waitDelay = time.Second
)

// Runner runs git commands in one directory. A Runner is used by one
// goroutine at a time; its zero Timeout and Limit mean the defaults.
type Runner struct {
	// Dir is the directory git runs in.
	Dir string
	// Timeout bounds each command; zero means DefaultTimeout.
	Timeout time.Duration
	// Limit bounds the standard output Run keeps and the token Stream
	// hands over, in bytes; zero means DefaultLimit.
	Limit int
	// Env holds variables, "NAME=value", added to every command's
	// environment after the variables that point git at another
	// repository were removed, so that a caller can set one of them on
	// purpose (GIT_INDEX_FILE, to work on a copy of the index). A name
	// given twice takes its last value.
	Env []string

	cpu time.Duration // user plus system time of the commands run so far
}

// Run runs git with args in dir with the default bounds and returns its
// standard output.
func Run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	r := Runner{Dir: dir}
	return r.Run(ctx, args...)
}

// CPU returns the user plus system CPU time of the commands the Runner has
// run, including those that failed.
func (r *Runner) CPU() time.Duration { return r.cpu }

// Run runs git with args and returns its standard output. A command that
// fails, times out or writes more than the Runner's Limit to standard
// output returns an *Error.
func (r *Runner) Run(ctx context.Context, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout())
	defer cancel()
	cmd := r.command(ctx, args)
	stdout := &limitedBuffer{limit: r.limit()}
	stderr := &limitedBuffer{limit: stderrLimit}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	r.account(cmd)
	if err != nil {
		return nil, newError(ctx, args, err, stderr)
	}
	if stdout.truncated {
		return nil, &Error{Args: args, ExitCode: 0, Err: fmt.Errorf("output longer than %d bytes", r.limit())}
	}
	return stdout.buf.Bytes(), nil
}

// Stream runs git with args and hands its standard output, split into
// tokens by split, to each, one token at a time; the token is valid only
// during the call. When each returns false, Stream stops git and returns
// nil. A token longer than the Runner's Limit, a failure or a timeout
// returns an *Error.
func (r *Runner) Stream(ctx context.Context, split bufio.SplitFunc, each func(token []byte) bool, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, r.timeout())
	defer cancel()
	cmd := r.command(ctx, args)
	stderr := &limitedBuffer{limit: stderrLimit}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return &Error{Args: args, ExitCode: -1, Err: err}
	}
	if err := cmd.Start(); err != nil {
		return newError(ctx, args, err, stderr)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, min(r.limit(), 4<<10)), r.limit())
	sc.Split(split)
	stopped := false
	for sc.Scan() {
		if !each(sc.Bytes()) {
			stopped = true
			break
		}
	}
	scanErr := sc.Err()
	if stopped || scanErr != nil {
		cancel() // kills git; its exit status no longer matters
	}
	err = cmd.Wait()
	r.account(cmd)
	switch {
	case stopped:
		return nil
	case scanErr != nil:
		return &Error{Args: args, ExitCode: -1, Err: fmt.Errorf("read output: %w", scanErr)}
	case err != nil:
		return newError(ctx, args, err, stderr)
	}
	return nil
}

// ScanNUL is a bufio.SplitFunc that splits output written with git's -z
// option: tokens end with a NUL byte, which is not part of the token.
func ScanNUL(data []byte, atEOF bool) (advance int, token []byte, err error) {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

func (r *Runner) timeout() time.Duration {
	if r.Timeout > 0 {
		return r.Timeout
	}
	return DefaultTimeout
}

func (r *Runner) limit() int {
	if r.Limit > 0 {
		return r.Limit
	}
	return DefaultLimit
}

// command builds git's command in its own process group, which the end of
// ctx kills as a whole.
func (r *Runner) command(ctx context.Context, args []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = r.Dir
	cmd.Env = append(environ(), r.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = waitDelay
	return cmd
}

// account adds the CPU time of cmd, once it has exited, to the Runner's.
func (r *Runner) account(cmd *exec.Cmd) {
	if ps := cmd.ProcessState; ps != nil {
		r.cpu += ps.UserTime() + ps.SystemTime()
	}
}

// repositoryVariables point git at another repository than the one in its
// working directory; environ removes them.
var repositoryVariables = []string{
	"GIT_DIR=", "GIT_WORK_TREE=", "GIT_INDEX_FILE=", "GIT_COMMON_DIR=",
	"GIT_OBJECT_DIRECTORY=", "GIT_ALTERNATE_OBJECT_DIRECTORIES=", "GIT_PREFIX=",
}

// environ returns the process's environment without repositoryVariables,
// with git's prompts, optional locks and localisation turned off.
func environ() []string {
	env := os.Environ()
	kept := env[:0]
	for _, kv := range env {
		redirects := false
		for _, prefix := range repositoryVariables {
			if strings.HasPrefix(kv, prefix) {
				redirects = true
				break
			}
		}
		if !redirects {
			kept = append(kept, kv)
		}
	}
	return append(kept, "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C")
}

// Error is a git command that failed, timed out or answered more than its
// caller would keep.
type Error struct {
	// Args are the command's arguments, without "git".
	Args []string
	// ExitCode is git's exit status; -1 when git did not exit by itself
	// (it could not start, or it was killed).
	ExitCode int
	// Stderr is the start of what git wrote to standard error, trimmed.
	Stderr string
	// Err is the underlying error: the context's error after a timeout or
	// cancellation, else the one from os/exec.
	Err error
}

// Error returns "git ARGS: " followed by git's message, or by the
// underlying error when git said nothing.
func (e *Error) Error() string {
	msg := e.Stderr
	if msg == "" {
		msg = e.Err.Error()
	}
	return "git " + strings.Join(e.Args, " ") + ": " + msg
}

// Unwrap returns the underlying error, so errors.Is(err,
// context.DeadlineExceeded) holds for a command that timed out.
func (e *Error) Unwrap() error { return e.Err }

// ExitCode returns git's exit status if err is or wraps an *Error, and -1
// otherwise.
func ExitCode(err error) int {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.ExitCode
	}
	return -1
}

// newError describes a command that failed with err.
func newError(ctx context.Context, args []string, err error, stderr *limitedBuffer) *Error {
	e := &Error{Args: args, ExitCode: -1, Stderr: oneLine(stderr.buf.String()), Err: err}
	if ctxErr := ctx.Err(); ctxErr != nil {
		e.Err = ctxErr
		return e
	}
	if exit, ok := errors.AsType[*exec.ExitError](err); ok {
		e.ExitCode = exit.ExitCode()
	}
	return e
}

// oneLine trims s and joins its lines with "; ", so that a message of git
// reads as one line in a log.
func oneLine(s string) string {
	var lines []string
	for line := range strings.Lines(s) {
		if line = strings.TrimSpace(line); line != "" {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "; ")
}

// limitedBuffer keeps the first limit bytes written to it and discards the
// rest, noting that it did. Writes never fail, so git is never stopped by
// a full pipe.
type limitedBuffer struct {
	buf       bytes.Buffer
	limit     int
	truncated bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.limit - b.buf.Len(); len(p) > room {
		b.buf.Write(p[:max(room, 0)])
		b.truncated = true
		return len(p), nil
	}
	return b.buf.Write(p)
}
