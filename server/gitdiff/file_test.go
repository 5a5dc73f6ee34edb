package gitdiff_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/gitcli/gittest"
	"github.com/herd-dev/herd/server/gitdiff"
	"github.com/herd-dev/herd/shared"
)

func TestFileDiffsOfEveryKindOfChange(t *testing.T) {
	r := newTaskRepo(t)
	page := func(path, oldPath string) gitdiff.FilePage {
		return gitdiff.FilePage{From: r.base, To: r.tree, Path: path, OldPath: oldPath}
	}
	for name, c := range map[string]struct {
		page gitdiff.FilePage
		want shared.ReviewFileResponse
	}{
		"an edit": {page("edited.go", ""), shared.ReviewFileResponse{
			Path: "edited.go", Status: shared.FileModified, OldSize: 23, NewSize: int64(len("package a\n\nfunc A() { B() }\n\nfunc B() {}\n")),
			Hunks: []shared.ReviewHunk{{Header: "@@ -1,3 +1,5 @@", OldStart: 1, NewStart: 1,
				Lines: []string{" package a", " ", "-func A() {}", "+func A() { B() }", "+", "+func B() {}"}}},
		}},
		"a deletion": {page("deleted.txt", ""), shared.ReviewFileResponse{
			Path: "deleted.txt", Status: shared.FileDeleted, OldSize: 10,
			Hunks: []shared.ReviewHunk{{Header: "@@ -1,2 +0,0 @@", OldStart: 1, NewStart: 1, Lines: []string{"-gone", "-soon"}}},
		}},
		"an untracked file": {page("untracked.txt", ""), shared.ReviewFileResponse{
			Path: "untracked.txt", Status: shared.FileAdded, NewSize: 8,
			Hunks: []shared.ReviewHunk{{Header: "@@ -0,0 +1,2 @@", OldStart: 1, NewStart: 1, Lines: []string{"+one", "+two"}}},
		}},
		"a rename": {page("new/name.txt", "old/name.txt"), shared.ReviewFileResponse{
			Path: "new/name.txt", OldPath: "old/name.txt", Status: shared.FileRenamed, OldSize: 190, NewSize: 190,
			Hunks: []shared.ReviewHunk{},
		}},
		"a binary file": {page("image.png", ""), shared.ReviewFileResponse{
			Path: "image.png", Status: shared.FileModified, Binary: true, OldSize: 7, NewSize: 7, Hunks: []shared.ReviewHunk{},
		}},
		"a type change": {page("link", ""), shared.ReviewFileResponse{
			Path: "link", Status: shared.FileTypeChanged, OldSize: 28, NewSize: 9,
			Hunks: []shared.ReviewHunk{
				{Header: "@@ -1 +0,0 @@", OldStart: 1, NewStart: 1, Lines: []string{"-a regular file, then a link"}},
				{Header: "@@ -0,0 +1 @@", OldStart: 1, NewStart: 1, Lines: []string{"+edited.go", `\ No newline at end of file`}},
			},
		}},
		"a renamed file without its old path": {page("new/name.txt", ""), shared.ReviewFileResponse{
			Path: "new/name.txt", Status: shared.FileAdded, NewSize: 190,
			Hunks: []shared.ReviewHunk{{Header: "@@ -0,0 +1,10 @@", OldStart: 1, NewStart: 1,
				Lines: strings.Split(strings.TrimSuffix(strings.Repeat("+moved, not changed\n", 10), "\n"), "\n")}},
		}},
		"an old path that was not renamed": {page("untracked.txt", "edited.go"), shared.ReviewFileResponse{
			Path: "untracked.txt", Status: shared.FileAdded, NewSize: 8,
			Hunks: []shared.ReviewHunk{{Header: "@@ -0,0 +1,2 @@", OldStart: 1, NewStart: 1, Lines: []string{"+one", "+two"}}},
		}},
		"an old path whose type changed": {page("untracked.txt", "link"), shared.ReviewFileResponse{
			Path: "untracked.txt", Status: shared.FileAdded, NewSize: 8,
			Hunks: []shared.ReviewHunk{{Header: "@@ -0,0 +1,2 @@", OldStart: 1, NewStart: 1, Lines: []string{"+one", "+two"}}},
		}},
	} {
		t.Run(name, func(t *testing.T) { require.Equal(t, c.want, MustFile(t, r.dir, c.page)) })
	}
}

func TestFileOfAPathThatDidNotChange(t *testing.T) {
	r := newTaskRepo(t)
	for name, c := range map[string]struct{ path, oldPath string }{
		"unchanged":   {"README", ""},
		"missing":     {"nope.txt", ""},
		"a directory": {"new", ""},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := gitdiff.File(t.Context(), r.dir, gitdiff.FilePage{From: r.base, To: r.tree, Path: c.path, OldPath: c.oldPath})
			requireCode(t, shared.CodeNotFound, err)
		})
	}
}

func TestFileOfBadRequests(t *testing.T) {
	r := newTaskRepo(t)
	unknown := strings.Repeat("0", 39) + "1"
	ok := gitdiff.FilePage{From: r.base, To: r.tree, Path: "edited.go"}
	with := func(change func(*gitdiff.FilePage)) gitdiff.FilePage {
		p := ok
		change(&p)
		return p
	}
	for name, c := range map[string]struct {
		page gitdiff.FilePage
		code shared.Code
	}{
		"no path":           {with(func(p *gitdiff.FilePage) { p.Path = "" }), shared.CodeBadRequest},
		"a parent":          {with(func(p *gitdiff.FilePage) { p.Path = "../edited.go" }), shared.CodeBadRequest},
		"an absolute path":  {with(func(p *gitdiff.FilePage) { p.Path = "/edited.go" }), shared.CodeBadRequest},
		"an empty name":     {with(func(p *gitdiff.FilePage) { p.Path = "new//name.txt" }), shared.CodeBadRequest},
		"a trailing slash":  {with(func(p *gitdiff.FilePage) { p.Path = "new/" }), shared.CodeBadRequest},
		"a dot":             {with(func(p *gitdiff.FilePage) { p.Path = "." }), shared.CodeBadRequest},
		"a NUL":             {with(func(p *gitdiff.FilePage) { p.Path = "edited.go\x00x" }), shared.CodeBadRequest},
		"a long path":       {with(func(p *gitdiff.FilePage) { p.Path = strings.Repeat("a", shared.MaxReviewPathBytes+1) }), shared.CodeBadRequest},
		"a bad old path":    {with(func(p *gitdiff.FilePage) { p.OldPath = "../x" }), shared.CodeBadRequest},
		"a negative offset": {with(func(p *gitdiff.FilePage) { p.Offset = -1 }), shared.CodeBadRequest},
		"a negative limit":  {with(func(p *gitdiff.FilePage) { p.Limit = -1 }), shared.CodeBadRequest},
		"a malformed tree":  {with(func(p *gitdiff.FilePage) { p.From = "main" }), shared.CodeBadRequest},
		"an unknown tree":   {with(func(p *gitdiff.FilePage) { p.To = unknown }), shared.CodeNotFound},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := gitdiff.File(t.Context(), r.dir, c.page)
			requireCode(t, c.code, err)
		})
	}
}

func TestFilePathsAreNamesNotPathspecs(t *testing.T) {
	repo := gittest.Init(t)
	// Each sibling is what a name would also match as a pattern or with
	// its magic: "*" everything, "[ab].txt" a.txt, ":(top)magic" magic.
	siblings := []string{"magic", "a.txt", "b.txt"}
	for _, name := range append(awkwardNames, siblings...) {
		gittest.Write(t, repo, name, "old\n")
	}
	gittest.Commit(t, repo, "files")
	from := headTree(t, repo)
	for _, name := range append(awkwardNames, siblings...) {
		gittest.Write(t, repo, name, "new\n")
	}
	to := MustSnapshot(t, repo)

	for _, name := range awkwardNames {
		t.Run(name, func(t *testing.T) {
			require.Equal(t, shared.ReviewFileResponse{
				Path: name, Status: shared.FileModified, OldSize: 4, NewSize: 4,
				Hunks: []shared.ReviewHunk{{Header: "@@ -1 +1 @@", OldStart: 1, NewStart: 1, Lines: []string{"-old", "+new"}}},
			}, MustFile(t, repo, gitdiff.FilePage{From: from, To: to, Path: name}))
		})
	}
}

func TestFileThatBecameADirectory(t *testing.T) {
	repo := gittest.Init(t)
	gittest.Write(t, repo, "a", "a file\n")
	gittest.Commit(t, repo, "a file")
	from := headTree(t, repo)
	require.NoError(t, os.Remove(filepath.Join(repo, "a")))
	gittest.Write(t, repo, "a/inside.txt", "a file in a directory\n")
	to := MustSnapshot(t, repo)

	require.Equal(t, shared.ReviewFileResponse{
		Path: "a", Status: shared.FileDeleted, OldSize: 7,
		Hunks: []shared.ReviewHunk{{Header: "@@ -1 +0,0 @@", OldStart: 1, NewStart: 1, Lines: []string{"-a file"}}},
	}, MustFile(t, repo, gitdiff.FilePage{From: from, To: to, Path: "a"}), "the directory's files are not the file's diff")
}

func TestFileLinesAsGitWritesThem(t *testing.T) {
	for name, c := range map[string]struct {
		old, new string
		config   []string
		want     []string
	}{
		"crlf": {"a\r\nb\r\n", "a\r\nc\r\n", nil, []string{" a\r", "-b\r", "+c\r"}},
		"no final newline": {"x", "y", nil,
			[]string{"-x", `\ No newline at end of file`, "+y", `\ No newline at end of file`}},
		"lines that read as headers": {"x\n-- a\n@@ -1 +1 @@\ny\n", "x\n++ b\ny\n", nil,
			[]string{" x", "--- a", "-@@ -1 +1 @@", "+++ b", " y"}},
		"blank context written empty": {"a\n\nb\n", "a\n\nc\n", []string{"diff.suppressBlankEmpty", "true"},
			[]string{" a", " ", "-b", "+c"}},
	} {
		t.Run(name, func(t *testing.T) {
			repo := gittest.Init(t)
			if c.config != nil {
				gittest.Git(t, repo, append([]string{"config"}, c.config...)...)
			}
			gittest.Write(t, repo, "f", c.old)
			gittest.Commit(t, repo, "old")
			from := headTree(t, repo)
			gittest.Write(t, repo, "f", c.new)

			resp := MustFile(t, repo, gitdiff.FilePage{From: from, To: MustSnapshot(t, repo), Path: "f"})
			require.Len(t, resp.Hunks, 1)
			require.Equal(t, c.want, resp.Hunks[0].Lines)
		})
	}
}

// bigChange writes the old and new sides of a change of over 20,000 diff
// lines to f: old line k reads "line k"; the new side starts with five
// added lines, "added j", then has every second line of the first half
// changed (one long hunk) and every tenth of the second (many short
// ones) to "changed k".
func bigChange(t testing.TB) (dir, from, to string) {
	t.Helper()
	dir = gittest.Init(t)
	var oldText, newText strings.Builder
	for j := 1; j <= 5; j++ {
		fmt.Fprintf(&newText, "added %d\n", j)
	}
	for k := 1; k <= 20_000; k++ {
		fmt.Fprintf(&oldText, "line %05d\n", k)
		if k <= 10_000 && k%2 == 0 || k > 10_000 && k%10 == 0 {
			fmt.Fprintf(&newText, "changed %05d\n", k)
		} else {
			fmt.Fprintf(&newText, "line %05d\n", k)
		}
	}
	gittest.Write(t, dir, "f", oldText.String())
	gittest.Commit(t, dir, "old")
	from = headTree(t, dir)
	gittest.Write(t, dir, "f", newText.String())
	return dir, from, MustSnapshot(t, dir)
}

// gitHunks returns the hunks of git's own patch of one file, header and
// lines, for files whose lines never start with "@@ ".
func gitHunks(t *testing.T, dir, from, to, path string) []shared.ReviewHunk {
	t.Helper()
	var hunks []shared.ReviewHunk
	for line := range strings.SplitSeq(gittest.Git(t, dir, "diff-tree", "-p", from, to, "--", path), "\n") {
		switch {
		case strings.HasPrefix(line, "@@ "):
			hunks = append(hunks, shared.ReviewHunk{Header: line})
		case len(hunks) > 0:
			hunks[len(hunks)-1].Lines = append(hunks[len(hunks)-1].Lines, line)
		}
	}
	return hunks
}

// readPages reads every page of a file's diff, checking that each starts
// where the one before said the next would.
func readPages(t *testing.T, dir string, p gitdiff.FilePage) []shared.ReviewFileResponse {
	t.Helper()
	var pages []shared.ReviewFileResponse
	for {
		resp := MustFile(t, dir, p)
		require.Equal(t, p.Offset, resp.Offset)
		pages = append(pages, resp)
		if resp.NextOffset == 0 {
			return pages
		}
		n := 0
		for _, h := range resp.Hunks {
			n += len(h.Lines)
		}
		require.Equal(t, p.Offset+n, resp.NextOffset, "the next page starts after this one's lines")
		p.Offset = resp.NextOffset
		require.Less(t, len(pages), 1000)
	}
}

// joinPages joins pages' hunks, each continued hunk into the one it
// continues, and fails t unless a page's first hunk is continued exactly
// when the page before ended inside it.
func joinPages(t *testing.T, pages []shared.ReviewFileResponse) []shared.ReviewHunk {
	t.Helper()
	var hunks []shared.ReviewHunk
	for _, page := range pages {
		for i, h := range page.Hunks {
			continues := i == 0 && len(hunks) > 0 && unfinished(t, hunks[len(hunks)-1])
			require.Equal(t, continues, h.Continued, "hunk %q of the page at %d", h.Header, page.Offset)
			if continues {
				last := &hunks[len(hunks)-1]
				require.Equal(t, last.Header, h.Header)
				last.Lines = append(last.Lines, h.Lines...)
				continue
			}
			h.OldStart, h.NewStart, h.Cut = 0, 0, false
			hunks = append(hunks, h)
		}
	}
	return hunks
}

var hunkHeader = regexp.MustCompile(`^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@`)

// unfinished reports whether h lacks lines its header counts.
func unfinished(t *testing.T, h shared.ReviewHunk) bool {
	t.Helper()
	m := hunkHeader.FindStringSubmatch(h.Header)
	require.NotNil(t, m, "hunk header %q", h.Header)
	count := func(s string) int {
		if s == "" {
			return 1
		}
		n, err := strconv.Atoi(s)
		require.NoError(t, err)
		return n
	}
	oldLeft, newLeft := count(m[1]), count(m[2])
	for _, l := range h.Lines {
		switch l[0] {
		case ' ':
			oldLeft, newLeft = oldLeft-1, newLeft-1
		case '-':
			oldLeft--
		case '+':
			newLeft--
		}
	}
	return oldLeft > 0 || newLeft > 0
}

// requireBigChangeNumbers checks every line's numbers against its text:
// " line k" is old line k and new line k+5, "-line k" old line k,
// "+changed k" new line k+5 and "+added j" new line j.
func requireBigChangeNumbers(t *testing.T, pages []shared.ReviewFileResponse) {
	t.Helper()
	for _, page := range pages {
		for _, h := range page.Hunks {
			oldLine, newLine := h.OldStart, h.NewStart
			for _, l := range h.Lines {
				fields := strings.Fields(l[1:])
				n, err := strconv.Atoi(fields[1])
				require.NoError(t, err)
				switch {
				case l[0] == ' ':
					require.Equal(t, [2]int{n, n + 5}, [2]int{oldLine, newLine}, "%q in the page at %d", l, page.Offset)
					oldLine, newLine = oldLine+1, newLine+1
				case l[0] == '-':
					require.Equal(t, n, oldLine, "%q in the page at %d", l, page.Offset)
					oldLine++
				case fields[0] == "added":
					require.Equal(t, n, newLine, "%q in the page at %d", l, page.Offset)
					newLine++
				default:
					require.Equal(t, n+5, newLine, "%q in the page at %d", l, page.Offset)
					newLine++
				}
			}
		}
	}
}

func TestFileOfA20000LineChangeReadInPages(t *testing.T) {
	dir, from, to := bigChange(t)
	whole := gitHunks(t, dir, from, to, "f")
	lines := 0
	for _, h := range whole {
		lines += len(h.Lines)
	}
	require.Greater(t, lines, 20_000)
	require.Greater(t, len(whole), 500)

	for _, limit := range []int{0, 333, shared.MaxReviewLines} {
		t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
			pages := readPages(t, dir, gitdiff.FilePage{From: from, To: to, Path: "f", Limit: limit})
			perPage := limit
			if limit == 0 {
				perPage = shared.DefaultReviewLines
			}
			require.Len(t, pages, (lines+perPage-1)/perPage)
			require.Equal(t, whole, joinPages(t, pages), "the pages joined are the whole diff")
			requireBigChangeNumbers(t, pages)
		})
	}
}

func TestFilePageAfterTheLastLine(t *testing.T) {
	dir, from, to := bigChange(t)
	resp := MustFile(t, dir, gitdiff.FilePage{From: from, To: to, Path: "f", Offset: 1_000_000})
	require.Equal(t, shared.ReviewFileResponse{
		Path: "f", Status: shared.FileModified, OldSize: 20_000 * int64(len("line 00001\n")), NewSize: int64(len(gittest.Git(t, dir, "show", to+":f")) + 1),
		Hunks: []shared.ReviewHunk{}, Offset: 1_000_000,
	}, resp, "no lines, and no next page")
}

func TestFilePagesHoldAtMostMaxReviewPageBytes(t *testing.T) {
	repo := gittest.Init(t)
	from := headTree(t, repo)
	var b strings.Builder
	for i := range 300 {
		fmt.Fprintf(&b, "%03d%s\n", i, strings.Repeat("w", 3996))
	}
	gittest.Write(t, repo, "wide.txt", b.String())
	to := MustSnapshot(t, repo)

	pages := readPages(t, repo, gitdiff.FilePage{From: from, To: to, Path: "wide.txt", Limit: shared.MaxReviewLines})
	require.Greater(t, len(pages), 4)
	for i, page := range pages {
		size := 0
		for _, h := range page.Hunks {
			size += len(h.Header)
			for _, l := range h.Lines {
				size += len(l)
			}
		}
		require.LessOrEqual(t, size, shared.MaxReviewPageBytes)
		if i < len(pages)-1 {
			require.Greater(t, size, shared.MaxReviewPageBytes-4001, "a page ends only when the next line would not fit")
		}
	}
	require.Equal(t, gitHunks(t, repo, from, to, "wide.txt"), joinPages(t, pages))
}

func TestFileLongLinesAreCutAtACharacter(t *testing.T) {
	repo := gittest.Init(t)
	from := headTree(t, repo)
	exact := strings.Repeat("e", shared.MaxReviewLineBytes-1) // with its mark, just fits
	accents := strings.Repeat("é", 5_000)
	huge := strings.Repeat("x", 1<<20) // far beyond the token a scanner takes by default
	gittest.Write(t, repo, "fits.txt", "short\n"+exact+"\n")
	gittest.Write(t, repo, "long.txt", "short\n"+accents+"\n"+huge+"\nend\n")
	to := MustSnapshot(t, repo)

	fits := MustFile(t, repo, gitdiff.FilePage{From: from, To: to, Path: "fits.txt"})
	require.Equal(t, []shared.ReviewHunk{{Header: "@@ -0,0 +1,2 @@", OldStart: 1, NewStart: 1,
		Lines: []string{"+short", "+" + exact}}}, fits.Hunks)

	long := MustFile(t, repo, gitdiff.FilePage{From: from, To: to, Path: "long.txt"})
	require.Len(t, long.Hunks, 1)
	h := long.Hunks[0]
	require.True(t, h.Cut)
	require.Len(t, h.Lines, 4)
	require.Equal(t, "+short", h.Lines[0])
	require.Equal(t, "+"+accents[:shared.MaxReviewLineBytes-2], h.Lines[1], "cut before the é the bound would split")
	require.True(t, utf8.ValidString(h.Lines[1]))
	require.Equal(t, "+"+huge[:shared.MaxReviewLineBytes-1], h.Lines[2])
	require.Equal(t, "+end", h.Lines[3], "the line after a long one is whole")
}

func TestFileTooLargeIsNamedNotRead(t *testing.T) {
	repo := gittest.Init(t)
	gittest.Write(t, repo, "grows.txt", "small\n")
	gittest.Commit(t, repo, "small")
	from := headTree(t, repo)
	gittest.Write(t, repo, "grows.txt", strings.Repeat("y", shared.MaxReviewFileBytes)+"\n")
	gittest.Write(t, repo, "bound.txt", strings.Repeat("z", shared.MaxReviewFileBytes-1)+"\n")
	to := MustSnapshot(t, repo)

	require.Equal(t, shared.ReviewFileResponse{
		Path: "grows.txt", Status: shared.FileModified, TooLarge: true, OldSize: 6, NewSize: shared.MaxReviewFileBytes + 1,
		Hunks: []shared.ReviewHunk{},
	}, MustFile(t, repo, gitdiff.FilePage{From: from, To: to, Path: "grows.txt"}))
	bound := MustFile(t, repo, gitdiff.FilePage{From: from, To: to, Path: "bound.txt"})
	require.False(t, bound.TooLarge, "a file of exactly the bound is diffed")
	require.Equal(t, int64(shared.MaxReviewFileBytes), bound.NewSize)
	require.Len(t, bound.Hunks, 1)
	require.True(t, bound.Hunks[0].Cut)
}

func TestFileOfASubmodule(t *testing.T) {
	repo := gittest.Init(t)
	from := headTree(t, repo)
	nested := gittest.Init(t)
	require.NoError(t, os.Rename(nested, filepath.Join(repo, "sub")))
	commit := gittest.Git(t, filepath.Join(repo, "sub"), "rev-parse", "HEAD")
	to := MustSnapshot(t, repo)

	require.Equal(t, shared.ReviewFileResponse{
		Path: "sub", Status: shared.FileAdded,
		Hunks: []shared.ReviewHunk{{Header: "@@ -0,0 +1 @@", OldStart: 1, NewStart: 1, Lines: []string{"+Subproject commit " + commit}}},
	}, MustFile(t, repo, gitdiff.FilePage{From: from, To: to, Path: "sub"}), "a submodule's commit is not in the repository: no size")
}

func TestFileStopsWithItsContext(t *testing.T) {
	r := newTaskRepo(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := gitdiff.File(ctx, r.dir, gitdiff.FilePage{From: r.base, To: r.tree, Path: "edited.go"})
	require.ErrorIs(t, err, context.Canceled)
}
