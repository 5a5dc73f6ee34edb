package state

import (
	"slices"

	"github.com/herd-dev/herd/shared"
)

// Ticket names one request of a paged listing (ReviewFiles, ReviewDiff).
// Only the answer to the newest one is taken, so a refresh, or another
// file opened meanwhile, is never overwritten by an older answer.
type Ticket uint64

// paging is the request state of a paged listing: the newest ticket, and
// whether it is in flight or failed.
type paging struct {
	ticket Ticket
	busy   bool
	err    string
}

// ask starts a request and returns its ticket.
func (p *paging) ask() Ticket {
	p.ticket++
	p.busy, p.err = true, ""
	return p.ticket
}

// answered ends request t; it reports false for an older request, whose
// answer must be dropped.
func (p *paging) answered(t Ticket, err string) bool {
	if t != p.ticket || !p.busy {
		return false
	}
	p.busy, p.err = false, err
	return true
}

// Busy reports whether a page is being fetched.
func (p *paging) Busy() bool { return p.busy }

// Err returns why the last page could not be fetched; empty if it could.
func (p *paging) Err() string { return p.err }

// ReviewKey names one comparison of a task's repository: a scope and, for
// ReviewScopeTurn, the turn (empty for the newest).
type ReviewKey struct {
	TaskID       string
	RepositoryID string
	Scope        shared.ReviewScope
	TurnID       string
}

// ReviewFiles is the changed files of one comparison, as far as they are
// paged in: the first page names the comparison's trees, later pages ask
// for the same trees from where the list ends, so every page belongs to
// one comparison however the worktree moves meanwhile.
type ReviewFiles struct {
	key    ReviewKey
	list   shared.ReviewFilesResponse
	loaded bool
	// first says the request in flight is a first page.
	first bool
	paging
}

// NewReviewFiles returns the empty listing of a comparison.
func NewReviewFiles(key ReviewKey) *ReviewFiles { return &ReviewFiles{key: key} }

// Key returns the comparison listed.
func (f *ReviewFiles) Key() ReviewKey { return f.key }

// Loaded reports whether the first page has arrived.
func (f *ReviewFiles) Loaded() bool { return f.loaded }

// Listing returns the files paged in so far, with the comparison's trees
// and totals; More says files follow.
func (f *ReviewFiles) Listing() shared.ReviewFilesResponse { return f.list }

// Find returns the listed file at path.
func (f *ReviewFiles) Find(path string) (shared.ReviewFile, bool) {
	i := slices.IndexFunc(f.list.Files, func(x shared.ReviewFile) bool { return x.Path == path })
	if i < 0 {
		return shared.ReviewFile{}, false
	}
	return f.list.Files[i], true
}

// First returns the request for the first page, which also refreshes the
// listing against the working tree as it is now.
func (f *ReviewFiles) First(limit int) (shared.ReviewFilesRequest, Ticket) {
	f.first = true
	return shared.ReviewFilesRequest{
		TaskID: f.key.TaskID, RepositoryID: f.key.RepositoryID, Scope: f.key.Scope, TurnID: f.key.TurnID, Limit: limit,
	}, f.ask()
}

// Refreshing reports whether a first page is being fetched: the listing
// is read anew, not only continued.
func (f *ReviewFiles) Refreshing() bool { return f.busy && f.first }

// Next returns the request for the page after the files listed; false
// while a page is in flight or when none follows.
func (f *ReviewFiles) Next(limit int) (shared.ReviewFilesRequest, Ticket, bool) {
	if f.busy || !f.loaded || !f.list.More {
		return shared.ReviewFilesRequest{}, 0, false
	}
	req, t := f.First(limit)
	f.first = false
	req.From, req.To, req.Offset = f.list.From, f.list.To, len(f.list.Files)
	return req, t, true
}

// errNotContinued is why a page that does not continue what is paged in
// was dropped.
const errNotContinued = "the answer does not continue what is shown; refresh to read it again"

// Apply takes the answer to request t. A first page replaces the listing;
// a later one is appended only when it continues it (same trees, offset
// where the list ends), else the request fails. It reports whether the
// answer was taken; an older request's never is.
func (f *ReviewFiles) Apply(t Ticket, resp shared.ReviewFilesResponse) bool {
	if t != f.ticket || !f.busy {
		return false
	}
	first := resp.Offset == 0
	if resp.RepositoryID != f.key.RepositoryID || resp.Scope != f.key.Scope ||
		!first && (!f.loaded || resp.From != f.list.From || resp.To != f.list.To || resp.Offset != len(f.list.Files)) {
		f.answered(t, errNotContinued)
		return false
	}
	f.answered(t, "")
	if first {
		files := slices.Clone(resp.Files)
		f.list, f.loaded = resp, true
		f.list.Files = files
		return true
	}
	f.list.Files = append(f.list.Files, resp.Files...)
	f.list.Total, f.list.Additions, f.list.Deletions, f.list.More = resp.Total, resp.Additions, resp.Deletions, resp.More
	return true
}

// Fail records why request t failed.
func (f *ReviewFiles) Fail(t Ticket, reason string) { f.answered(t, reason) }

// Line marks of ReviewLine besides the diff's own (' ', '+', '-', '\').
const (
	// MarkHunk is the mark of a hunk's header row.
	MarkHunk = '@'
)

// ReviewLine is one row of a file's diff as review shows it: a hunk's
// header or one diff line, numbered on each side it belongs to.
type ReviewLine struct {
	// Mark is ' ' context, '+' added, '-' removed, '\' git's "No newline
	// at end of file", or MarkHunk for a hunk's header.
	Mark byte
	// Old and New are the line's numbers in the file before and after the
	// change; 0 on a side that does not hold it.
	Old, New int
	// Text is the line without its mark; a header's text is git's.
	Text string
	// Hunk counts the file's hunks from 0: a range of comments stays in
	// one.
	Hunk int
	// Cut says the line was longer than the wire carries and holds only
	// its start.
	Cut bool
}

// Numbered reports whether the row is a line a comment can name.
func (l ReviewLine) Numbered() bool { return l.Old > 0 || l.New > 0 }

// ReviewDiffKey names one file's diff between the trees of a listing.
type ReviewDiffKey struct {
	TaskID, RepositoryID string
	From, To             string
	Path, OldPath        string
}

// ReviewDiff is one file's diff as far as it is paged in, its hunks
// flattened into numbered rows.
type ReviewDiff struct {
	key    ReviewDiffKey
	file   shared.ReviewFileResponse // without its hunks
	lines  []ReviewLine
	next   int
	hunks  int
	loaded bool
	paging
}

// NewReviewDiff returns the empty diff of one file.
func NewReviewDiff(key ReviewDiffKey) *ReviewDiff { return &ReviewDiff{key: key} }

// Key returns the file and trees compared.
func (d *ReviewDiff) Key() ReviewDiffKey { return d.key }

// Loaded reports whether the first page has arrived.
func (d *ReviewDiff) Loaded() bool { return d.loaded }

// File returns what the server said of the file (status, binary, too
// large, sizes); its Hunks are empty: see Lines.
func (d *ReviewDiff) File() shared.ReviewFileResponse { return d.file }

// Lines returns the rows paged in so far. The slice is not to be changed.
func (d *ReviewDiff) Lines() []ReviewLine { return d.lines }

// More reports whether diff lines follow the rows paged in.
func (d *ReviewDiff) More() bool { return d.loaded && d.next > 0 }

// First returns the request for the first page.
func (d *ReviewDiff) First(limit int) (shared.ReviewFileRequest, Ticket) {
	return shared.ReviewFileRequest{
		TaskID: d.key.TaskID, RepositoryID: d.key.RepositoryID, From: d.key.From, To: d.key.To,
		Path: d.key.Path, OldPath: d.key.OldPath, Limit: limit,
	}, d.ask()
}

// Next returns the request for the page after the rows paged in; false
// while a page is in flight or when the diff is whole.
func (d *ReviewDiff) Next(limit int) (shared.ReviewFileRequest, Ticket, bool) {
	if d.busy || !d.More() {
		return shared.ReviewFileRequest{}, 0, false
	}
	req, t := d.First(limit)
	req.Offset = d.next
	return req, t, true
}

// Apply takes the answer to request t: a first page replaces the rows, a
// later one is appended when it starts where they end (else the request
// fails), a hunk it continues keeping its header and number. It reports
// whether the answer was taken; an older request's never is.
func (d *ReviewDiff) Apply(t Ticket, resp shared.ReviewFileResponse) bool {
	if t != d.ticket || !d.busy {
		return false
	}
	first := resp.Offset == 0
	if resp.Path != d.key.Path || !first && (!d.More() || resp.Offset != d.next) {
		d.answered(t, errNotContinued)
		return false
	}
	d.answered(t, "")
	if first {
		d.lines, d.hunks = nil, 0
	}
	d.file, d.loaded, d.next = resp, true, resp.NextOffset
	d.file.Hunks = nil
	for _, h := range resp.Hunks {
		if !h.Continued || d.hunks == 0 {
			d.hunks++
			d.lines = append(d.lines, ReviewLine{Mark: MarkHunk, Text: h.Header, Hunk: d.hunks - 1})
		}
		d.lines = appendHunk(d.lines, h, d.hunks-1)
	}
	return true
}

// Fail records why request t failed.
func (d *ReviewDiff) Fail(t Ticket, reason string) { d.answered(t, reason) }

// appendHunk numbers a hunk's lines from its starts and appends them.
func appendHunk(rows []ReviewLine, h shared.ReviewHunk, hunk int) []ReviewLine {
	old, new := h.OldStart, h.NewStart
	for _, raw := range h.Lines {
		l := ReviewLine{Mark: ' ', Text: raw, Hunk: hunk}
		if raw != "" {
			switch raw[0] {
			case ' ', '+', '-', '\\':
				l.Mark, l.Text = raw[0], raw[1:]
			}
		}
		// The wire cuts a long line at MaxReviewLineBytes, on a character
		// boundary: a line that long in a hunk that says so is the cut one.
		l.Cut = h.Cut && len(raw) > shared.MaxReviewLineBytes-4
		switch l.Mark {
		case ' ':
			l.Old, l.New = old, new
			old++
			new++
		case '-':
			l.Old = old
			old++
		case '+':
			l.New = new
			new++
		}
		rows = append(rows, l)
	}
	return rows
}
