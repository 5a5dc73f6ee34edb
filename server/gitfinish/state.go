package gitfinish

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/herd-dev/herd/server/gitcli"
)

// State is what finishing needs to know of a working tree.
type State struct {
	// Branch is the branch HEAD is on; "" when HEAD is detached.
	Branch string
	// Remote is where a push goes: the remote of the branch's upstream,
	// else "origin", else the only remote; "" when there is none to
	// choose.
	Remote string
	// RemoteURL is Remote's fetch URL as git uses it (url.insteadOf
	// applied), without the credentials a URL may carry (see
	// withoutCredentials), so that a token written into a remote goes no
	// further.
	RemoteURL string
	// Upstream is the branch's upstream as git abbreviates it
	// ("origin/herd/…"); "" without one, or when its remote-tracking
	// branch is gone.
	Upstream string
	// UpstreamAhead counts the commits a push would send: HEAD's commits
	// that Upstream lacks. Nil without Upstream.
	UpstreamAhead *int
	// Uncommitted counts the files a commit would take: staged, unstaged
	// and untracked (not ignored) alike. A rename counts as the deletion
	// and the addition it is on disk, so staging changes nothing of the
	// count; a submodule counts when its commit changed, not for changes
	// inside it, which no commit here takes.
	Uncommitted int
	// Ahead counts the commits of HEAD that the base lacks; 0 when the
	// base is empty or cannot be resolved, or HEAD has no commit yet.
	Ahead int
}

// Read reads the State of the working tree in dir, compared with base (a
// branch, or any name git resolves to a commit). A directory that is not
// a git working tree, or a git that fails or outlives gitcli's bound, is
// an error.
func Read(ctx context.Context, dir, base string) (State, error) {
	if dir == "" {
		return State{}, errors.New("read the working tree: no directory named")
	}
	git := &gitcli.Runner{Dir: dir}
	s, err := read(ctx, git, base)
	if err != nil {
		return State{}, fmt.Errorf("read the working tree %s: %w", dir, err)
	}
	return s, nil
}

// read fills a State in, running git through git.
func read(ctx context.Context, git *gitcli.Runner, base string) (State, error) {
	var s State
	var err error
	if s.Branch, err = headBranch(ctx, git); err != nil {
		return State{}, err
	}
	if s.Remote, err = pushRemote(ctx, git, s.Branch); err != nil {
		return State{}, err
	}
	if s.Remote != "" {
		out, err := git.Run(ctx, "remote", "get-url", "--end-of-options", s.Remote)
		if err != nil {
			return State{}, err
		}
		s.RemoteURL = withoutCredentials(strings.TrimSpace(string(out)))
	}
	if s.Branch != "" {
		if s.Upstream, err = upstream(ctx, git); err != nil {
			return State{}, err
		}
	}
	if s.Upstream != "" {
		n, ok, err := countCommits(ctx, git, "@{upstream}..HEAD")
		switch {
		case err != nil:
			return State{}, err
		case ok:
			s.UpstreamAhead = &n
		}
	}
	if base != "" {
		if s.Ahead, _, err = countCommits(ctx, git, base+"..HEAD"); err != nil {
			return State{}, err
		}
	}
	if s.Uncommitted, err = uncommitted(ctx, git); err != nil {
		return State{}, err
	}
	return s, nil
}

// headBranch returns the branch HEAD is on, one not born yet included,
// or "" when HEAD is detached.
func headBranch(ctx context.Context, git *gitcli.Runner) (string, error) {
	out, err := git.Run(ctx, "symbolic-ref", "--quiet", "HEAD")
	switch {
	case gitcli.ExitCode(err) == 1:
		return "", nil
	case err != nil:
		return "", err
	}
	// HEAD may name a ref outside refs/heads/ only by hand; there is no
	// branch to push then.
	branch, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "refs/heads/")
	if !ok {
		return "", nil
	}
	return branch, nil
}

// pushRemote returns the remote a push of branch goes to: the remote of
// its upstream, else origin, else the only remote; "" when none of these
// exists.
func pushRemote(ctx context.Context, git *gitcli.Runner, branch string) (string, error) {
	out, err := git.Run(ctx, "remote")
	if err != nil {
		return "", err
	}
	remotes := strings.Fields(string(out))
	if branch != "" {
		out, err := git.Run(ctx, "config", "--get", "branch."+branch+".remote")
		switch {
		case gitcli.ExitCode(err) == 1:
			// No upstream remote configured.
		case err != nil:
			return "", err
		default:
			// An upstream in this repository (".") or at a URL is no
			// remote to name.
			if r := strings.TrimSpace(string(out)); slices.Contains(remotes, r) {
				return r, nil
			}
		}
	}
	switch {
	case slices.Contains(remotes, "origin"):
		return "origin", nil
	case len(remotes) == 1:
		return remotes[0], nil
	}
	return "", nil
}

// upstream returns the upstream of HEAD's branch as git abbreviates it,
// or "" when it has none or its remote-tracking branch is gone.
func upstream(ctx context.Context, git *gitcli.Runner) (string, error) {
	// --verify: without it, a file named "@{upstream}" would be taken for
	// the answer.
	out, err := git.Run(ctx, "rev-parse", "--verify", "--abbrev-ref", "--symbolic-full-name", "@{upstream}")
	if code := gitcli.ExitCode(err); code == 128 && ctx.Err() == nil {
		return "", nil
	} else if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// countCommits counts the commits of the range rng ("A..B"). It reports
// false, with a nil error, when git cannot resolve rng.
func countCommits(ctx context.Context, git *gitcli.Runner, rng string) (n int, ok bool, err error) {
	// "--": rng is a revision range even when a file has its name.
	out, err := git.Run(ctx, "rev-list", "--count", "--end-of-options", rng, "--")
	if code := gitcli.ExitCode(err); code == 128 && ctx.Err() == nil {
		return 0, false, nil
	} else if err != nil {
		return 0, false, err
	}
	n, err = strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return 0, false, fmt.Errorf("git rev-list --count %s: unexpected output %q", rng, out)
	}
	return n, true, nil
}

// uncommitted counts the files a commit of everything would take, reading
// git status entry by entry.
func uncommitted(ctx context.Context, git *gitcli.Runner) (int, error) {
	n := 0
	err := git.Stream(ctx, gitcli.ScanNUL, func([]byte) bool {
		n++
		return true
	}, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--ignore-submodules=dirty")
	return n, err
}

// withoutCredentials returns a remote URL of the scheme://… form without
// the credentials it may carry: the password of any, and for other
// schemes than ssh the user name too, which is where a token goes in
// https://TOKEN@HOST/…; ssh's user name is an account ("git"), no secret.
// Other forms (git's scp-like USER@HOST:PATH, a local path) carry no
// password and are kept.
func withoutCredentials(remote string) string {
	if !strings.Contains(remote, "://") {
		return remote
	}
	u, err := url.Parse(remote)
	if err != nil || u.User == nil {
		return remote
	}
	if u.Scheme == "ssh" {
		u.User = url.User(u.User.Username())
	} else {
		u.User = nil
	}
	return u.String()
}
