package gitwatch

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/herd-dev/herd/server/gitcli"
)

// Target is a working tree to observe.
type Target struct {
	// Dir is the top directory of the working tree: a task's worktree, or
	// a repository an agent works in in place.
	Dir string
	// BaseBranch is what the work is compared with: a branch, or any name
	// git resolves to a commit. Empty means there is nothing to compare
	// with, as when it cannot be resolved.
	BaseBranch string
}

// Observation is the state of a working tree compared with its base. Its
// fields mirror store.GitObservation, plus the upstream comparison and the
// cost of making it.
type Observation struct {
	// ObservedAt is when the observation started.
	ObservedAt time.Time
	// Additions and Deletions count the lines added and deleted by
	// everything the working tree holds that its merge base with the base
	// branch does not: commits, staged and unstaged changes, and untracked
	// files, whose lines are all additions. ChangedFiles counts the files
	// concerned. Binary files count as changed files with no lines.
	Additions, Deletions, ChangedFiles int
	// Ahead counts the commits of HEAD that the base branch does not
	// have, and Behind those of the base branch that HEAD does not have.
	Ahead, Behind int
	// ComparisonUnavailable is true when the base branch is empty, cannot
	// be resolved, or shares no history with HEAD. Ahead and Behind are
	// then zero, and the line and file totals count only what is not
	// committed: changes against HEAD (against nothing, before the first
	// commit) and untracked files.
	ComparisonUnavailable bool
	// HasUpstream is true when HEAD's branch has an upstream branch;
	// UpstreamAhead and UpstreamBehind then count the commits HEAD has
	// that the upstream does not, and the reverse.
	HasUpstream                   bool
	UpstreamAhead, UpstreamBehind int
	// CPU is the user plus system CPU time the git commands spent. It is
	// the cost of the observation, not part of what was observed, and is
	// set even when Observe fails.
	CPU time.Duration
}

// sameState reports whether o and p observed the same state, whenever
// they were made and whatever they cost.
func (o Observation) sameState(p Observation) bool {
	o.ObservedAt, o.CPU = time.Time{}, 0
	p.ObservedAt, p.CPU = time.Time{}, 0
	return o == p
}

// Observe observes the working tree of t. It runs four git commands in
// the usual case, streams their output without keeping it, and reads
// untracked files to count their lines; ctx bounds the whole. A directory
// that is not a git working tree, or a git that fails or outlives ctx, is
// an error, and the Observation's fields other than CPU are then
// meaningless.
func Observe(ctx context.Context, t Target) (Observation, error) {
	o := Observation{ObservedAt: time.Now()}
	git := gitcli.Runner{Dir: t.Dir}
	err := observe(ctx, &git, t, &o)
	o.CPU = git.CPU()
	if err != nil {
		return o, fmt.Errorf("observe %s: %w", t.Dir, err)
	}
	return o, nil
}

// observe fills o in, running git through git.
func observe(ctx context.Context, git *gitcli.Runner, t Target, o *Observation) error {
	compared, err := compareWithBase(ctx, git, t.BaseBranch, o)
	if err != nil {
		return err
	}
	hasHead := true
	if !compared {
		o.ComparisonUnavailable = true
		if hasHead, err = compareWithHead(ctx, git, o); err != nil {
			return err
		}
	}
	if hasHead {
		// Before the first commit nothing has an upstream.
		o.UpstreamBehind, o.UpstreamAhead, o.HasUpstream, err = leftRight(ctx, git, "@{upstream}...HEAD")
		if err != nil {
			return err
		}
	}
	return untrackedTotals(ctx, git, o)
}

// compareWithBase sets Ahead and Behind, and adds the changes from the
// merge base of HEAD and base to the working tree. It reports false when
// there is nothing to compare with: no base, an unknown one, or no common
// history.
func compareWithBase(ctx context.Context, git *gitcli.Runner, base string, o *Observation) (bool, error) {
	if base == "" {
		return false, nil
	}
	behind, ahead, ok, err := leftRight(ctx, git, base+"...HEAD")
	if err != nil || !ok {
		return false, err
	}
	err = diffTotals(ctx, git, o, true, base)
	if code := gitcli.ExitCode(err); code == 128 && ctx.Err() == nil {
		// --merge-base refuses histories with no merge base, or with
		// several, where git merge-base picks the best one.
		out, mbErr := git.Run(ctx, "merge-base", "--end-of-options", base, "HEAD")
		switch {
		case gitcli.ExitCode(mbErr) == 1:
			return false, nil
		case mbErr != nil:
			return false, mbErr
		}
		err = diffTotals(ctx, git, o, false, strings.TrimSpace(string(out)))
	}
	if err != nil {
		return false, err
	}
	o.Ahead, o.Behind = ahead, behind
	return true, nil
}

// compareWithHead adds the changes from HEAD, or from nothing before the
// first commit, to the working tree. It reports whether HEAD has a commit.
func compareWithHead(ctx context.Context, git *gitcli.Runner, o *Observation) (hasHead bool, err error) {
	from := "HEAD"
	_, err = git.Run(ctx, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	switch {
	case gitcli.ExitCode(err) == 1:
		out, err := git.Run(ctx, "hash-object", "-t", "tree", "/dev/null")
		if err != nil {
			return false, err
		}
		from = strings.TrimSpace(string(out)) // the empty tree
	case err != nil:
		return false, err
	}
	return from == "HEAD", diffTotals(ctx, git, o, false, from)
}

// leftRight counts the commits only on the left and only on the right of
// the symmetric difference rng ("A...B"). It reports false, with a nil
// error, when git cannot resolve rng.
func leftRight(ctx context.Context, git *gitcli.Runner, rng string) (left, right int, ok bool, err error) {
	out, err := git.Run(ctx, "rev-list", "--left-right", "--count", "--end-of-options", rng)
	if err != nil {
		if ctx.Err() != nil || gitcli.ExitCode(err) != 128 {
			return 0, 0, false, err
		}
		return 0, 0, false, nil
	}
	l, r, found := strings.Cut(strings.TrimSpace(string(out)), "\t")
	if left, err = strconv.Atoi(l); err == nil && found {
		right, err = strconv.Atoi(r)
	}
	if err != nil || !found {
		return 0, 0, false, fmt.Errorf("git rev-list --count %s: unexpected output %q", rng, out)
	}
	return left, right, true, nil
}

// diffTotals adds the numbers of git diff --numstat from rev, or from the
// merge base of rev and HEAD, to the working tree to o, reading them as
// git writes them. It adds nothing if git fails.
func diffTotals(ctx context.Context, git *gitcli.Runner, o *Observation, mergeBase bool, rev string) error {
	args := []string{"diff", "--numstat", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", "--no-color", "--no-relative"}
	if mergeBase {
		args = append(args, "--merge-base")
	}
	args = append(args, "--end-of-options", rev, "--")
	var added, deleted, files int
	var bad []byte
	err := git.Stream(ctx, gitcli.ScanNUL, func(rec []byte) bool {
		// "ADDED\tDELETED\tPATH", with "-" for both in a binary file.
		a, rest, ok1 := bytes.Cut(rec, []byte{'\t'})
		d, _, ok2 := bytes.Cut(rest, []byte{'\t'})
		na, okA := count(a)
		nd, okD := count(d)
		if !ok1 || !ok2 || !okA || !okD {
			bad = bytes.Clone(rec)
			return false
		}
		added, deleted, files = added+na, deleted+nd, files+1
		return true
	}, args...)
	switch {
	case err != nil:
		return err
	case bad != nil:
		return fmt.Errorf("git diff --numstat: unexpected record %q", bad)
	}
	o.Additions += added
	o.Deletions += deleted
	o.ChangedFiles += files
	return nil
}

// count parses a count of git diff --numstat: digits, or "-" for zero.
func count(b []byte) (int, bool) {
	if string(b) == "-" {
		return 0, true
	}
	n, err := strconv.Atoi(string(b))
	return n, err == nil && n >= 0
}

// untrackedTotals adds the untracked files that are not ignored to o: each
// is a changed file whose lines are additions.
func untrackedTotals(ctx context.Context, git *gitcli.Runner, o *Observation) error {
	c := newLineCounter()
	err := git.Stream(ctx, gitcli.ScanNUL, func(name []byte) bool {
		if ctx.Err() != nil {
			return false
		}
		lines, exists := c.count(filepath.Join(git.Dir, string(name)))
		if exists {
			o.ChangedFiles++
			o.Additions += lines
		}
		return true
	}, "ls-files", "--others", "--exclude-standard", "-z")
	if err == nil {
		err = ctx.Err()
	}
	return err
}
