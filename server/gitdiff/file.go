package gitdiff

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/herd-dev/herd/server/gitcli"
	"github.com/herd-dev/herd/shared"
)

// FilePage is what File needs.
type FilePage struct {
	// From and To are the trees compared; Path is the file's path in To
	// (in From, for a deleted file) and OldPath its path in From before a
	// rename, else empty.
	From, To, Path, OldPath string
	// Offset is the number of diff lines earlier pages held; Limit the
	// page's size in diff lines.
	Offset, Limit int
}

// File returns one page of one file's diff between two trees (see
// shared.ReviewFileResponse): binary and too-large files are named and
// sized, not sent; hunks split across pages carry Continued; lines longer
// than shared.MaxReviewLineBytes are cut (Cut). A path not changed between
// the trees is a shared.CodeNotFound error.
//
// OldPath names a renamed file's path before the rename; when the trees
// hold no such rename, File shows Path's own change. Offset counts diff
// lines, the lines of hunks; a zero Limit means shared.DefaultReviewLines
// and one above shared.MaxReviewLines that many. A page also ends before
// its text would pass shared.MaxReviewPageBytes. Bad ids, paths, offsets
// and limits are shared.CodeBadRequest errors, an unknown tree a
// shared.CodeNotFound one.
func File(ctx context.Context, dir string, p FilePage) (shared.ReviewFileResponse, error) {
	limit, err := pageBounds(p.Offset, p.Limit, shared.DefaultReviewLines, shared.MaxReviewLines)
	if err != nil {
		return shared.ReviewFileResponse{}, err
	}
	p.Limit = limit
	if err := checkTrees(p.From, p.To); err != nil {
		return shared.ReviewFileResponse{}, err
	}
	if err := checkPath(p.Path); err != nil {
		return shared.ReviewFileResponse{}, err
	}
	if p.OldPath == p.Path {
		p.OldPath = ""
	}
	if p.OldPath != "" {
		if err := checkPath(p.OldPath); err != nil {
			return shared.ReviewFileResponse{}, err
		}
	}
	git := gitcli.Runner{Dir: dir, Env: pathspecEnv}
	resp, err := file(ctx, &git, p)
	if err != nil {
		return shared.ReviewFileResponse{}, treeError(ctx, dir, p.From, p.To, fmt.Errorf("diff of %q in %s: %w", p.Path, dir, err))
	}
	return resp, nil
}

func file(ctx context.Context, git *gitcli.Runner, p FilePage) (shared.ReviewFileResponse, error) {
	specs := pathspecs(p.OldPath, p.Path)
	rec, before, err := findRecord(ctx, git, p, specs)
	if err != nil {
		return shared.ReviewFileResponse{}, err
	}
	resp := shared.ReviewFileResponse{
		Path: string(rec.path), OldPath: string(rec.oldPath), Status: rec.status, Hunks: []shared.ReviewHunk{}, Offset: p.Offset,
	}
	if resp.OldSize, err = blobSize(ctx, git, rec.oldMode, rec.oldID); err != nil {
		return shared.ReviewFileResponse{}, err
	}
	if resp.NewSize, err = blobSize(ctx, git, rec.newMode, rec.newID); err != nil {
		return shared.ReviewFileResponse{}, err
	}
	if resp.OldSize > shared.MaxReviewFileBytes || resp.NewSize > shared.MaxReviewFileBytes {
		resp.TooLarge = true
		return resp, nil
	}
	pr := patchReader{offset: p.Offset, limit: p.Limit, resp: &resp, skip: before, last: before + patches(rec)}
	err = git.Stream(ctx, (&lineSplitter{}).split, pr.line, append([]string{
		"diff-tree", "-r", "-p", "-M", "--no-color", "--no-ext-diff", "--no-textconv",
		"--end-of-options", p.From, p.To, "--"}, specs...)...)
	if err == nil {
		err = pr.finish()
	}
	if err != nil {
		return shared.ReviewFileResponse{}, err
	}
	return resp, nil
}

// pathspecEnv keeps the process's environment from changing what File's
// pathspecs mean: each is literal through its own magic, which a global
// GIT_LITERAL_PATHSPECS would turn into part of the name, and matched
// with case.
var pathspecEnv = []string{
	"GIT_LITERAL_PATHSPECS=0", "GIT_GLOB_PATHSPECS=0", "GIT_NOGLOB_PATHSPECS=0", "GIT_ICASE_PATHSPECS=0",
}

// pathspecs returns pathspecs that match the files named, whatever bytes
// their names hold (":(top)", "*", "--x" are names too): literal, and
// from the top of the working tree.
func pathspecs(paths ...string) []string {
	var specs []string
	for _, p := range paths {
		if p != "" {
			specs = append(specs, ":(top,literal)"+p)
		}
	}
	return specs
}

// findRecord returns the raw record of the change p asks for (the rename
// from p.OldPath to p.Path, else p.Path's own change) and the number of
// patches git writes, with the same pathspecs, before that record's.
//
// A pathspec also matches what lies under a directory of that name, as
// when a file became a directory, and an exclusion of "PATH/" would drop
// a submodule of that name too; so git diffs everything the pathspecs
// match, and the patch reader keeps the patches of this record only. Git
// writes records and patches in one order, that of its diff, for the same
// trees and pathspecs.
func findRecord(ctx context.Context, git *gitcli.Runner, p FilePage, specs []string) (rec rawRecord, before int, err error) {
	found := false
	r := recordReader{raw: func(next rawRecord) {
		switch {
		case found:
		case string(next.path) == p.Path:
			rec, found = next.clone(), true
		default:
			before += patches(next)
		}
	}}
	err = git.Stream(ctx, gitcli.ScanNUL, r.token, append([]string{
		"diff-tree", "-r", "-z", "-M", "--raw", "--no-ext-diff", "--no-textconv",
		"--end-of-options", p.From, p.To, "--"}, specs...)...)
	if err == nil {
		err = r.finish()
	}
	switch {
	case err != nil:
		return rawRecord{}, 0, err
	case !found:
		return rawRecord{}, 0, shared.Errorf(shared.CodeNotFound, "%q did not change between %s and %s", p.Path, p.From, p.To)
	}
	// With p.OldPath named, the record of p.Path is the rename from it
	// or, when git sees none, p.Path's own change.
	return rec, before, nil
}

// patches returns the number of patches git diff -p writes for rec: two
// for a file whose type changed (the old one deleted, the new one
// added), one for any other.
func patches(rec rawRecord) int {
	if !noFile(rec.oldMode) && !noFile(rec.newMode) && fileType(rec.oldMode) != fileType(rec.newMode) {
		return 2
	}
	return 1
}

// fileType returns the type bits (S_IFMT) of an octal mode of git's.
func fileType(mode []byte) uint64 {
	m, _ := strconv.ParseUint(string(mode), 8, 32)
	return m & 0o170000
}

// noFile reports whether mode says a side holds no file.
func noFile(mode []byte) bool { return string(mode) == "000000" }

// blobSize returns the size of the blob id of a file of mode: zero when
// the side has no file, or holds a submodule, whose commit is not in this
// repository.
func blobSize(ctx context.Context, git *gitcli.Runner, mode, id []byte) (int64, error) {
	if noFile(mode) || string(mode) == "160000" {
		return 0, nil
	}
	out, err := git.Run(ctx, "cat-file", "-s", string(id))
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("git cat-file -s %s: unexpected output %q", id, out)
	}
	return n, nil
}

// checkPath reports a shared.CodeBadRequest error unless path can name a
// file in a tree: slash-separated names, none of them empty, "." or "..",
// and no NUL byte, which no argument to git can hold.
func checkPath(path string) error {
	switch {
	case path == "":
		return shared.Errorf(shared.CodeBadRequest, "a file's path is needed")
	case len(path) > shared.MaxReviewPathBytes:
		return shared.Errorf(shared.CodeBadRequest, "a path of %d bytes; the limit is %d", len(path), shared.MaxReviewPathBytes)
	case strings.IndexByte(path, 0) >= 0:
		return shared.Errorf(shared.CodeBadRequest, "path %q holds a NUL byte", path)
	}
	for name := range strings.SplitSeq(path, "/") {
		if name == "" || name == "." || name == ".." {
			return shared.Errorf(shared.CodeBadRequest, "%q is not a path in a tree", path)
		}
	}
	return nil
}
