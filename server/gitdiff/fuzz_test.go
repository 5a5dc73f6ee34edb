package gitdiff

import (
	"bufio"
	"bytes"
	"testing"

	"github.com/herd-dev/herd/server/gitcli"
	"github.com/herd-dev/herd/shared"
)

// FuzzPatchReader feeds the patch reader whatever git might write, through
// the line splitter, and checks that it never panics and that a page it
// fills keeps its bounds: at most limit lines, none longer than
// shared.MaxReviewLineBytes, at most shared.MaxReviewPageBytes in all.
func FuzzPatchReader(f *testing.F) {
	f.Add([]byte("diff --git a/f b/f\nindex 1..2 100644\n--- a/f\n+++ b/f\n@@ -1,3 +1,4 @@ ctx\n a\n-b\n+B\n c\n+d\n"), 0, 2)
	f.Add([]byte("diff --git a/l b/l\n@@ -1 +0,0 @@\n-x\ndiff --git a/l b/l\n@@ -0,0 +1 @@\n+y\n\\ No newline at end of file\n"), 1, 1)
	f.Add([]byte("diff --git a/b b/b\nBinary files a/b and b/b differ\n"), 0, 10)
	f.Add([]byte("@@ -5,2 +4,0 @@\n--- a\n-@@ -1 +1 @@\n"), 0, 10)
	f.Add(append([]byte("diff --git a/w b/w\n@@ -0,0 +1 @@\n+"), bytes.Repeat([]byte("é"), 3000)...), 0, 10)
	f.Fuzz(func(t *testing.T, patch []byte, offset, limit int) {
		if offset < 0 || limit <= 0 || limit > shared.MaxReviewLines {
			return
		}
		resp := shared.ReviewFileResponse{Hunks: []shared.ReviewHunk{}}
		r := patchReader{offset: offset, limit: limit, resp: &resp, skip: 0, last: 2}
		sc := bufio.NewScanner(bytes.NewReader(patch))
		sc.Buffer(make([]byte, 0, 4<<10), gitcli.DefaultLimit)
		sc.Split((&lineSplitter{}).split)
		for sc.Scan() && r.line(sc.Bytes()) {
		}
		if sc.Err() != nil {
			t.Fatalf("scan: %v", sc.Err())
		}
		_ = r.finish()
		lines, size := 0, 0
		for _, h := range resp.Hunks {
			size += len(h.Header)
			for _, l := range h.Lines {
				if len(l) > shared.MaxReviewLineBytes {
					t.Fatalf("a line of %d bytes", len(l))
				}
				lines++
				size += len(l)
			}
		}
		if lines > limit || lines > 1 && size > shared.MaxReviewPageBytes {
			t.Fatalf("a page of %d lines and %d bytes; limit %d", lines, size, limit)
		}
	})
}

// FuzzRecordReader feeds the record reader whatever git diff-tree -z
// might write and checks that it never panics and hands over records
// whose statuses are shared ones.
func FuzzRecordReader(f *testing.F) {
	f.Add([]byte(":100644 100644 aaaa bbbb M\x00a.txt\x00:100644 100644 cccc cccc R100\x00old\x00new\x002\t1\ta.txt\x000\t0\t\x00old\x00new\x00"))
	f.Add([]byte(":000000 100644 0000 aaaa A\x00-\t-\tx\x00-\t-\tx\x00"))
	f.Add([]byte("1\t2\t\x00only old\x00"))
	f.Fuzz(func(t *testing.T, out []byte) {
		known := map[string]bool{}
		for _, s := range statuses {
			known[s] = true
		}
		r := recordReader{
			raw: func(rec rawRecord) {
				if !known[rec.status] {
					t.Fatalf("status %q", rec.status)
				}
			},
			num: func(n numRecord) {
				if n.additions < 0 || n.deletions < 0 {
					t.Fatalf("counts %+v", n)
				}
			},
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		sc.Split(gitcli.ScanNUL)
		for sc.Scan() && r.token(sc.Bytes()) {
		}
		_ = r.finish()
	})
}
