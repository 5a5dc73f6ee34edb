package gitdiff

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/herd-dev/herd/shared"
)

// rawRecord is one record of git diff-tree --raw -z as recordReader hands
// it over: its byte slices are valid only during the call, so that a
// record nobody keeps costs no copy.
type rawRecord struct {
	// oldMode and newMode are the file's modes in octal ("100644",
	// "120000" for a link, "160000" for a submodule, "000000" for none);
	// oldID and newID its blobs (all zeros for none).
	oldMode, newMode []byte
	oldID, newID     []byte
	// status is a shared.File* status.
	status string
	// path is the file's path after the change (before it, for a deleted
	// file); oldPath its path before a rename, else empty.
	path, oldPath []byte
}

// clone returns a copy of rec that stays valid after the call that
// handed rec over.
func (rec rawRecord) clone() rawRecord {
	c := rec
	for _, b := range []*[]byte{&c.oldMode, &c.newMode, &c.oldID, &c.newID, &c.path, &c.oldPath} {
		*b = bytes.Clone(*b)
	}
	return c
}

// numRecord is one record of git diff-tree --numstat -z.
type numRecord struct {
	additions, deletions int
	binary               bool
}

// statuses maps git's status letters to the shared ones. With -M and
// without -C or -B, git writes no others between two trees.
var statuses = map[byte]string{
	'A': shared.FileAdded,
	'M': shared.FileModified,
	'D': shared.FileDeleted,
	'R': shared.FileRenamed,
	'T': shared.FileTypeChanged,
}

// recordReader decodes the output of git diff-tree -r -z with --raw,
// --numstat or both, token by token (gitcli.ScanNUL), and hands each
// record over as soon as it is whole: git writes every raw record first,
// then every numstat record, both in the same order. It keeps nothing of
// a record once handed over, so its memory does not grow with the diff.
//
// With -z, a raw record is ":META\x00PATH\x00", or ":META\x00OLD\x00NEW\x00"
// for a rename; a numstat record is "ADDED\tDELETED\tPATH\x00", or
// "ADDED\tDELETED\t\x00OLD\x00NEW\x00" for a rename, with "-" for both
// counts of a binary file. Records are told apart by their first token: a
// raw one starts with ':', a numstat one with a digit or '-'; the tokens
// after that are paths, whatever bytes they hold.
type recordReader struct {
	raw func(rawRecord)
	num func(numRecord)

	pending int // path tokens the current record still needs
	rec     rawRecord
	metaBuf []byte // the current raw record's first token, holding rec's fields
	oldBuf  []byte // the current raw record's old path, rec.oldPath
	inNum   bool   // the current record is a numstat one
	nrec    numRecord
	err     error
}

// token takes the next token of git's output. It returns false, with err
// set, when the output is not what git writes.
func (r *recordReader) token(tok []byte) bool {
	if r.pending > 0 {
		r.pending--
		switch {
		case r.inNum && r.pending == 0:
			r.num(r.nrec)
		case r.inNum:
			// A rename's old path: the page takes its paths from the raw
			// record.
		case r.pending == 1:
			r.oldBuf = append(r.oldBuf[:0], tok...)
			r.rec.oldPath = r.oldBuf
		default:
			r.rec.path = tok
			r.raw(r.rec)
		}
		return true
	}
	if len(tok) > 0 && tok[0] == ':' {
		return r.meta(tok)
	}
	return r.numstat(tok)
}

// meta starts a raw record: ":OLDMODE NEWMODE OLDID NEWID STATUS[SCORE]".
func (r *recordReader) meta(tok []byte) bool {
	r.metaBuf = append(r.metaBuf[:0], tok[1:]...)
	var f [5][]byte
	rest := r.metaBuf
	for i := range f {
		var ok bool
		if f[i], rest, ok = bytes.Cut(rest, []byte{' '}); ok != (i < 4) || len(f[i]) == 0 {
			return r.fail("raw record", tok)
		}
	}
	status, ok := statuses[f[4][0]]
	if !ok {
		return r.fail("status", f[4])
	}
	r.rec = rawRecord{oldMode: f[0], newMode: f[1], oldID: f[2], newID: f[3], status: status}
	r.inNum, r.pending = false, 1
	if status == shared.FileRenamed {
		r.pending = 2
	}
	return true
}

// numstat starts a numstat record, and ends it unless it is a rename's,
// whose paths follow.
func (r *recordReader) numstat(tok []byte) bool {
	a, rest, ok1 := bytes.Cut(tok, []byte{'\t'})
	d, path, ok2 := bytes.Cut(rest, []byte{'\t'})
	if !ok1 || !ok2 {
		return r.fail("numstat record", tok)
	}
	r.nrec = numRecord{}
	if string(a) == "-" && string(d) == "-" {
		r.nrec.binary = true
	} else {
		var err1, err2 error
		r.nrec.additions, err1 = strconv.Atoi(string(a))
		r.nrec.deletions, err2 = strconv.Atoi(string(d))
		if err1 != nil || err2 != nil || r.nrec.additions < 0 || r.nrec.deletions < 0 {
			return r.fail("numstat record", tok)
		}
	}
	r.inNum = true
	if len(path) == 0 {
		r.pending = 2
		return true
	}
	r.num(r.nrec)
	return true
}

func (r *recordReader) fail(what string, tok []byte) bool {
	r.err = fmt.Errorf("git diff-tree: unexpected %s %q", what, tok[:min(len(tok), 200)])
	return false
}

// finish returns what went wrong, if anything, once git's output ended.
func (r *recordReader) finish() error {
	if r.err == nil && r.pending > 0 {
		r.err = fmt.Errorf("git diff-tree: output ends inside a record")
	}
	return r.err
}
