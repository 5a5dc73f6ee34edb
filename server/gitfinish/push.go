package gitfinish

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/herd-dev/herd/server/gitcli"
	"github.com/herd-dev/herd/shared"
)

// PushTimeout bounds a Push as a whole, the wait for the directory's lock
// included: a push talks to another machine, sends what it lacks, and
// waits for its hooks.
const PushTimeout = 2 * time.Minute

// batchSSH is the ssh command a push runs when the person configured none
// (see the package documentation).
const batchSSH = "ssh -o BatchMode=yes"

// Push pushes the branch HEAD is on in dir to State.Remote under the same
// name, setting it as the branch's upstream (git push --set-upstream
// REMOTE HEAD:refs/heads/BRANCH), and returns git's summary of the push,
// one line per ref. It never waits for a person (see the package
// documentation). A detached HEAD, no remote, a rejected push (not a fast
// forward, refused by a hook), an authentication failure, a remote that
// cannot be reached: shared.CodeConflict with git's own reason.
func Push(ctx context.Context, dir string) (string, error) {
	if dir == "" {
		return "", errors.New("push: no directory named")
	}
	opCtx, cancel := context.WithTimeout(ctx, PushTimeout)
	defer cancel()
	unlock, err := acquire(ctx, opCtx, dir, "push", PushTimeout)
	if err != nil {
		return "", err
	}
	defer unlock()

	git := &gitcli.Runner{Dir: dir, Timeout: PushTimeout}
	branch, err := headBranch(opCtx, git)
	if err != nil {
		return "", failure(ctx, "push: read HEAD", PushTimeout, err, nil)
	}
	if branch == "" {
		return "", shared.Errorf(shared.CodeConflict, "push: HEAD is detached; check out a branch to push")
	}
	remote, err := pushRemote(opCtx, git, branch)
	if err != nil {
		return "", failure(ctx, "push: read the remotes", PushTimeout, err, nil)
	}
	if remote == "" {
		return "", shared.Errorf(shared.CodeConflict,
			"push: the repository has no remote to push %s to; add one (git remote add origin URL)", branch)
	}
	args, err := promptless(opCtx, git)
	if err != nil {
		return "", failure(ctx, "push: read the configuration", PushTimeout, err, nil)
	}
	args = append(args, "push", "--porcelain", "--set-upstream", "--end-of-options", remote, "HEAD:refs/heads/"+branch)
	out, err := run(opCtx, git, args...)
	summary := pushSummary(out)
	if err != nil {
		return "", failure(ctx, "push "+branch+" to "+remote, PushTimeout, err, summary)
	}
	return strings.Join(summary, "\n"), nil
}

// promptless returns the options that keep a push from waiting for a
// person: credential helpers told not to ask and, unless the person
// configured their own, no SSH_ASKPASS fallback and ssh in batch mode.
func promptless(ctx context.Context, git *gitcli.Runner) ([]string, error) {
	out, err := git.Run(ctx, "config", "--name-only", "--get-regexp", `^core\.(askpass|sshcommand)$`)
	if err != nil && gitcli.ExitCode(err) != 1 { // 1: neither is set
		return nil, err
	}
	configured := strings.Fields(string(out))
	args := []string{"-c", "credential.interactive=never"}
	// git takes an empty core.askPass over SSH_ASKPASS, and GIT_ASKPASS
	// over both.
	if !slices.Contains(configured, "core.askpass") {
		args = append(args, "-c", "core.askPass=")
	}
	// git takes GIT_SSH_COMMAND over core.sshCommand, and core.sshCommand
	// over GIT_SSH, which must not be overridden.
	if os.Getenv("GIT_SSH") == "" && !slices.Contains(configured, "core.sshcommand") {
		args = append(args, "-c", "core.sshCommand="+batchSSH)
	}
	return args, nil
}

// pushSummary turns the output of git push --porcelain into lines a
// person reads: "To URL", then a line per ref as git push writes it
// without --porcelain ("* [new branch] HEAD -> herd/x", "! [rejected]
// HEAD -> herd/x (non-fast-forward)"), then what else git said (the
// upstream it set). The closing "Done" says nothing.
func pushSummary(lines []string) []string {
	var out []string
	for _, line := range lines {
		fields := strings.Split(line, "\t")
		switch {
		case line == "Done" || strings.TrimSpace(line) == "":
			continue
		case len(fields) == 3:
			// FLAG \t FROM:TO \t SUMMARY[ (REASON)]
			from, to, _ := strings.Cut(fields[1], ":")
			summary, reason, _ := strings.Cut(fields[2], " (")
			s := strings.TrimSpace(fields[0] + " " + summary + " " + from + " -> " + strings.TrimPrefix(to, "refs/heads/"))
			if reason != "" {
				s += " (" + reason
			}
			out = append(out, s)
		default:
			out = append(out, line)
		}
	}
	return out
}
