package gitdiff

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/herd-dev/herd/server/gitcli"
	"github.com/herd-dev/herd/shared"
)

// EmptyTree is git's empty tree (sha1 repositories).
const EmptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// Snapshot writes the working tree of dir as git would commit it after
// `git add -A` (tracked files as on disk, untracked files not ignored,
// deletions) to a tree object and returns its id. It works on a copy of
// the repository's index (GIT_INDEX_FILE in a temporary file), so the
// user's index, stash, refs and HEAD are untouched; blobs it writes are
// ordinary loose objects. Bounded by ctx and gitcli's timeout.
//
// The copy keeps the index's stat data, so git rereads only the files
// whose stat data changed since the index was written, and untracked
// ones: an unchanged tracked file costs no read. A file git cannot add
// (an unreadable one, a nested repository without a commit) is left as
// the index had it rather than failing the snapshot, as one such file
// must not keep a person from reviewing the rest.
func Snapshot(ctx context.Context, dir string) (string, error) {
	return snapshot(ctx, dir, nil)
}

// snapshot snapshots dir and, when then is not nil, calls it with the tree
// and a Runner whose git reads the snapshot's index, before removing it.
func snapshot(ctx context.Context, dir string, then func(git *gitcli.Runner, tree string) error) (string, error) {
	tree, err := writeSnapshot(ctx, dir, then)
	if err != nil {
		return "", fmt.Errorf("snapshot %s: %w", dir, err)
	}
	return tree, nil
}

func writeSnapshot(ctx context.Context, dir string, then func(git *gitcli.Runner, tree string) error) (string, error) {
	git := gitcli.Runner{Dir: dir}
	// A linked worktree has an index of its own, under the repository's
	// worktrees/ directory; --git-path finds it, relative to dir.
	out, err := git.Run(ctx, "rev-parse", "--git-path", "index")
	if err != nil {
		return "", err
	}
	index := strings.TrimSuffix(string(out), "\n")
	if !filepath.IsAbs(index) {
		index = filepath.Join(dir, index)
	}
	// A directory of its own holds the copy and the lock git takes beside
	// it ("index.lock"), so that removing the directory removes both,
	// whatever happened.
	tmp, err := os.MkdirTemp("", "herd-snapshot-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	copied := filepath.Join(tmp, "index")
	if err := copyIndex(index, copied); err != nil {
		return "", err
	}
	git.Env = []string{"GIT_INDEX_FILE=" + copied}
	// A split index would have git write a shared index for the copy into
	// the repository's own directory; the copy is written whole instead.
	// --ignore-errors adds what it can and exits with 1 when it could not
	// add everything; a fatal error exits with 128.
	_, err = git.Run(ctx, "-c", "core.splitIndex=false", "add", "--all", "--ignore-errors")
	if err != nil && (gitcli.ExitCode(err) != 1 || ctx.Err() != nil) {
		return "", err
	}
	out, err = git.Run(ctx, "-c", "core.splitIndex=false", "write-tree")
	if err != nil {
		return "", err
	}
	tree := strings.TrimSpace(string(out))
	if then != nil {
		if err := then(&git, tree); err != nil {
			return "", err
		}
	}
	return tree, nil
}

// copyIndex copies the index at from to the new file to. A missing index
// (nothing was ever added) is an empty one, which is what git reads when
// to does not exist either. The copy takes the index's modification time:
// git treats an entry whose file changed in the same second as the index
// was written as "racily clean" and rereads the file, and a copy dated now
// would make git trust stat data it must not trust.
func copyIndex(from, to string) error {
	src, err := os.Open(from)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer src.Close()
	// The agent's git replaces the index by renaming a new file over it,
	// so the file opened is one whole index, old or new.
	fi, err := src.Stat()
	if err != nil {
		return err
	}
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return fmt.Errorf("copy index: %w", err)
	}
	if err := dst.Close(); err != nil {
		return fmt.Errorf("copy index: %w", err)
	}
	return os.Chtimes(to, fi.ModTime(), fi.ModTime())
}

// BaseTree returns the tree a task's work is compared with: the tree of
// the merge base of base and HEAD; HEAD's tree when base is empty, cannot be
// resolved or shares no history (comparable=false then); the empty tree
// before the first commit.
//
// Of several merge bases (criss-cross merges), git merge-base picks one,
// as gitwatch's totals do.
func BaseTree(ctx context.Context, dir, base string) (tree string, comparable bool, err error) {
	git := gitcli.Runner{Dir: dir}
	tree, comparable, err = baseTree(ctx, &git, base)
	if err != nil {
		return "", false, fmt.Errorf("base tree of %s: %w", dir, err)
	}
	return tree, comparable, nil
}

func baseTree(ctx context.Context, git *gitcli.Runner, base string) (string, bool, error) {
	if base != "" {
		out, err := git.Run(ctx, "merge-base", "--end-of-options", base, "HEAD")
		switch code := gitcli.ExitCode(err); {
		case err == nil:
			tree, found, err := peelTree(ctx, git, strings.TrimSpace(string(out)))
			if err == nil && !found {
				err = fmt.Errorf("merge base %s has no tree", strings.TrimSpace(string(out)))
			}
			return tree, true, err
		case ctx.Err() != nil:
			return "", false, err
		case code != 1 && code != 128:
			// 1: no common history; 128: base (or HEAD) names no commit.
			return "", false, err
		}
	}
	tree, found, err := peelTree(ctx, git, "HEAD")
	switch {
	case err != nil:
		return "", false, err
	case found:
		return tree, false, nil
	}
	// No commit yet. The empty tree's id depends on the repository's hash
	// (sha1 or sha256), so git computes it.
	out, err := git.Run(ctx, "hash-object", "-t", "tree", "/dev/null")
	if err != nil {
		return "", false, err
	}
	return strings.TrimSpace(string(out)), false, nil
}

// peelTree returns the tree rev names or peels to, and false if there is
// none.
func peelTree(ctx context.Context, git *gitcli.Runner, rev string) (string, bool, error) {
	out, err := git.Run(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{tree}")
	switch {
	case gitcli.ExitCode(err) == 1 && ctx.Err() == nil:
		return "", false, nil
	case err != nil:
		return "", false, err
	}
	return strings.TrimSpace(string(out)), true, nil
}

// CheckTree reports an error unless id is a full hex object id naming a
// tree in dir's repository (shared.CodeBadRequest for a malformed id,
// shared.CodeNotFound for an unknown one).
//
// An id of another object (a commit, a blob) names no tree and is
// CodeNotFound too: a commit's id is never what a files page answered.
func CheckTree(ctx context.Context, dir, id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	git := gitcli.Runner{Dir: dir}
	// A full id resolves without the object existing; peeling it to a
	// tree reads it, and gives back the id itself only for a tree.
	tree, found, err := peelTree(ctx, &git, id)
	switch {
	case err != nil:
		return fmt.Errorf("check tree %s in %s: %w", id, dir, err)
	case !found || tree != id:
		return shared.Errorf(shared.CodeNotFound, "no tree %s in %s", id, dir)
	}
	return nil
}

// checkID reports a shared.CodeBadRequest error unless id is a full
// object id in lower-case hex: 40 digits (sha1) or 64 (sha256). Checked
// before git sees it, no id can read as an option or a revision
// expression.
func checkID(id string) error {
	bad := len(id) != 40 && len(id) != 64
	for i := 0; i < len(id) && !bad; i++ {
		c := id[i]
		bad = (c < '0' || c > '9') && (c < 'a' || c > 'f')
	}
	switch {
	case !bad:
		return nil
	case len(id) > 64:
		return shared.Errorf(shared.CodeBadRequest, "a tree id of %d bytes is not one: a tree id is 40 or 64 lower-case hex digits", len(id))
	}
	return shared.Errorf(shared.CodeBadRequest, "%q is not a tree id: a tree id is 40 or 64 lower-case hex digits", id)
}
