package gitdiff

import (
	"context"
	"fmt"

	"github.com/herd-dev/herd/server/gitcli"
	"github.com/herd-dev/herd/shared"
)

// Listing is one page of the files changed between two trees.
type Listing struct {
	Files                       []shared.ReviewFile // the page, path order
	Total, Additions, Deletions int                 // the whole comparison
}

// Files lists files changed from tree from to tree to, renames detected,
// skipping offset files and keeping at most limit. Binary files are named
// with Binary set. It reads git's output as a stream and keeps only the
// page.
//
// The order is git's: by path, a renamed file at its new path. A zero
// limit means shared.DefaultReviewFiles, and a limit above
// shared.MaxReviewFiles means that many; a negative offset or limit, or a
// malformed tree id, is a shared.CodeBadRequest error, and an unknown
// tree a shared.CodeNotFound one.
func Files(ctx context.Context, dir, from, to string, offset, limit int) (Listing, error) {
	limit, err := pageBounds(offset, limit, shared.DefaultReviewFiles, shared.MaxReviewFiles)
	if err != nil {
		return Listing{}, err
	}
	if err := checkTrees(from, to); err != nil {
		return Listing{}, err
	}
	git := gitcli.Runner{Dir: dir}
	l, err := files(ctx, &git, from, to, offset, limit)
	if err != nil {
		return Listing{}, treeError(ctx, dir, from, to, fmt.Errorf("files changed in %s: %w", dir, err))
	}
	return l, nil
}

// SnapshotFiles is Snapshot followed by Files from from to the snapshot,
// with Files' bounds and errors: the first page of a comparison with the
// working tree as it is now. It lists the files while the snapshot's
// index exists, and git, reading that index, takes a changed file's new
// side from the working tree, where the file still matches what the
// snapshot holds, rather than from the loose object the snapshot wrote:
// for thousands of changed files, about half the system calls and the
// time of Files.
func SnapshotFiles(ctx context.Context, dir, from string, offset, limit int) (string, Listing, error) {
	limit, err := pageBounds(offset, limit, shared.DefaultReviewFiles, shared.MaxReviewFiles)
	if err != nil {
		return "", Listing{}, err
	}
	if err := checkID(from); err != nil {
		return "", Listing{}, err
	}
	var l Listing
	tree, err := snapshot(ctx, dir, func(git *gitcli.Runner, to string) error {
		var ferr error
		if l, ferr = files(ctx, git, from, to, offset, limit); ferr != nil {
			return treeError(ctx, dir, from, to, fmt.Errorf("files changed: %w", ferr))
		}
		return nil
	})
	if err != nil {
		return "", Listing{}, err
	}
	return tree, l, nil
}

// files lists the page of Files with git.
func files(ctx context.Context, git *gitcli.Runner, from, to string, offset, limit int) (Listing, error) {
	l := Listing{Files: make([]shared.ReviewFile, 0, min(limit, 64))}
	raws, nums := 0, 0
	r := recordReader{
		raw: func(rec rawRecord) {
			if raws >= offset && raws-offset < limit {
				l.Files = append(l.Files, shared.ReviewFile{Path: string(rec.path), OldPath: string(rec.oldPath), Status: rec.status})
			}
			raws++
		},
		num: func(n numRecord) {
			l.Additions += n.additions
			l.Deletions += n.deletions
			if nums >= offset && nums-offset < len(l.Files) {
				f := &l.Files[nums-offset]
				f.Additions, f.Deletions, f.Binary = n.additions, n.deletions, n.binary
			}
			nums++
		},
	}
	// One command gives the page's names and statuses (--raw) and every
	// file's counts (--numstat), so that a page never mixes two states of
	// a moving repository. --no-ext-diff and --no-textconv keep the
	// repository's configuration from running programs of its own.
	err := git.Stream(ctx, gitcli.ScanNUL, r.token,
		"diff-tree", "-r", "-z", "-M", "--raw", "--numstat", "--no-ext-diff", "--no-textconv",
		"--end-of-options", from, to)
	if err == nil {
		err = r.finish()
	}
	if err == nil && raws != nums {
		err = fmt.Errorf("git diff-tree: %d raw records but %d numstat ones", raws, nums)
	}
	if err != nil {
		return Listing{}, err
	}
	l.Total = raws
	return l, nil
}

// pageBounds checks a page's offset and limit and returns the limit to
// use: def for zero, at most most.
func pageBounds(offset, limit, def, most int) (int, error) {
	switch {
	case offset < 0:
		return 0, shared.Errorf(shared.CodeBadRequest, "offset %d is negative", offset)
	case limit < 0:
		return 0, shared.Errorf(shared.CodeBadRequest, "limit %d is negative", limit)
	case limit == 0:
		return def, nil
	}
	return min(limit, most), nil
}

// checkTrees checks the form of both trees' ids.
func checkTrees(from, to string) error {
	if err := checkID(from); err != nil {
		return err
	}
	return checkID(to)
}

// treeError returns the CodeNotFound error of CheckTree when git failed
// because from or to names no tree, and err otherwise. It asks git only
// once git has failed, so that a good comparison costs no more commands.
func treeError(ctx context.Context, dir, from, to string, err error) error {
	if ctx.Err() != nil || gitcli.ExitCode(err) != 128 {
		return err
	}
	for _, id := range []string{from, to} {
		if terr := CheckTree(ctx, dir, id); shared.ErrorCode(terr) == shared.CodeNotFound {
			return terr
		}
	}
	return err
}
