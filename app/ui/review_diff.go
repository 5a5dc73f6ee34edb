package ui

import (
	"strconv"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/shared"
)

// renderDiff draws the chosen file's diff: its head (on a phone with the
// way back to the list), then what can be shown of it: its hunks with
// "Show more" while lines follow, or why it is not shown.
func (rv *reviewView) renderDiff() app.UI {
	d := rv.diff
	f, _ := rv.chosenFile()
	el := app.Section().ID(idReviewDiff).Class("review-diff").Aria("label", "Diff of "+f.Path)
	if app.IsClient {
		// Paths are only ever set as attributes in the browser (see the
		// package documentation on the server's attribute quoting).
		el = el.DataSet("path", f.Path)
	}
	return el.Body(
		app.Header().Class("review-diff-head").Body(
			app.If(rv.Phone, func() app.UI {
				r := rv.Route
				r.File = ""
				return app.A().ID("review-back").Class("text-button", "review-back").Href(r.Path()).Text("← Files")
			}),
			statusLetter(f.Status),
			app.H2().Class("review-diff-path").Body(
				app.If(f.OldPath != "", func() app.UI { return app.Span().Class("review-file-old").Text(f.OldPath + " → ") }),
				app.Span().Text(f.Path),
			),
			app.If(!f.Binary && f.Status != "", func() app.UI {
				return app.Span().Class("review-file-counts").Body(
					app.Span().Class("adds").Text("+"+strconv.Itoa(f.Additions)),
					app.Text(" "),
					app.Span().Class("dels").Text("−"+strconv.Itoa(f.Deletions)),
				)
			}),
		),
		app.If(d != nil, func() app.UI { return rv.renderDiffBody(d) }),
	)
}

// renderDiffBody draws what is loaded of diff d.
func (rv *reviewView) renderDiffBody(d *state.ReviewDiff) app.UI {
	file := d.File()
	switch {
	case !d.Loaded() && d.Err() != "":
		return reviewError("review-diff-error", "Could not load the diff: "+d.Err(), "review-diff-retry",
			func(app.Context, app.Event) { rv.loadDiff(false) })
	case !d.Loaded():
		return app.P().Class("review-loading", "muted").Role("status").Text("Loading the diff…")
	case file.Binary:
		return app.P().ID("review-binary").Class("review-not-shown").Text("Binary file, not shown: " + sizes(file))
	case file.TooLarge:
		return app.P().ID("review-too-large").Class("review-not-shown").
			Text("Too large to show (over " + byteWords(shared.MaxReviewFileBytes) + " on a side): " + sizes(file))
	case len(d.Lines()) == 0:
		return app.P().Class("review-not-shown").Text("No line changed: only the file's mode or type.")
	}
	blocks := rv.blocks(d)
	return app.Div().Class("review-diff-body").Body(
		app.P().ID("review-diff-hint").Class("review-hint", "muted").Text(rv.selectHint()),
		// The box scrolls sideways, the page never: its inner block is as
		// wide as the longest line, so every row's colour reaches as far.
		app.Div().Class("review-lines").OnClick(rv.onLineNumber).Body(
			app.Div().Class("review-lines-inner").Body(
				app.Range(blocks).Slice(func(i int) app.UI { return blocks[i] }),
			),
		),
		app.If(d.More(), func() app.UI {
			return app.Div().Class("review-more").Body(
				busyButton("review-more-lines", "Show more", "Loading…", d.Busy()).OnClick(func(app.Context, app.Event) { rv.loadDiff(true) }),
			)
		}),
		app.If(d.More() && d.Err() != "", func() app.UI {
			return app.P().Class("review-error-text").Role("alert").Text("Could not load more: " + d.Err())
		}),
	)
}

// selectHint says how to choose lines to comment on, on this device.
func (rv *reviewView) selectHint() string {
	if rv.Phone {
		return "Tap a line number to comment on it; tap a second one for a range."
	}
	return "Click a line number to comment on it; shift-click another for a range."
}

// sizes says a binary or too large file's sizes on the sides it has.
func sizes(f shared.ReviewFileResponse) string {
	switch f.Status {
	case shared.FileAdded:
		return byteWords(int(f.NewSize))
	case shared.FileDeleted:
		return byteWords(int(f.OldSize)) + " before, deleted"
	}
	return byteWords(int(f.OldSize)) + " before, " + byteWords(int(f.NewSize)) + " after"
}

// reviewBlockRows bounds the rows of one block: a click re-renders the
// block it changes, so a selection in a hunk of a thousand lines costs the
// render of a few dozen.
const reviewBlockRows = 64

// blocks cuts diff d's rows into block components, runs of at most
// reviewBlockRows rows of one hunk, each with the selection, the comment
// box and the comments that fall in it.
func (rv *reviewView) blocks(d *state.ReviewDiff) []app.UI {
	repoID := d.Key().RepositoryID
	notes := map[int][]state.PendingComment{}
	covered := map[int]bool{}
	if rv.comments != nil {
		for _, p := range rv.commentsOn(repoID, d.Key().Path) {
			if row, ok := d.Row(p.ReviewComment); ok {
				notes[row] = append(notes[row], p)
				for i := row; i >= 0 && coversRow(p.ReviewComment, d.Lines()[i]); i-- {
					covered[i] = true
				}
			}
		}
	}
	first, last := rv.sel.Bounds()
	rows := d.Lines()
	var out []app.UI
	for start := 0; start < len(rows); {
		end := start + 1
		for end < len(rows) && end-start < reviewBlockRows && rows[end].Hunk == rows[start].Hunk {
			end++
		}
		h := &reviewBlock{View: rv, Rows: rows[start:end], Start: start, SelFirst: -1, SelLast: -1}
		if rv.sel.Set && first < end && last >= start {
			h.SelFirst, h.SelLast, h.Compose = first, last, last < end
		}
		for i := start; i < end; i++ {
			if covered[i] {
				h.Covered = append(h.Covered, i)
			}
			for _, p := range notes[i] {
				h.Notes = append(h.Notes, blockNote{Row: i, Comment: p, Editing: rv.editing == p.ID && rv.editWhere == editInline})
			}
		}
		out = append(out, h)
		start = end
	}
	return out
}

// coversRow reports whether row l is one of the lines comment c is on,
// on its side, or a row between them.
func coversRow(c shared.ReviewComment, l state.ReviewLine) bool {
	n := l.New
	if c.Side == shared.SideOld {
		n = l.Old
	}
	return l.Mark != state.MarkHunk && (n == 0 || n >= c.StartLine && n <= c.EndLine)
}

// commentsOn returns the comments, pending or on their way, on a file of
// a repository, in the order written.
func (rv *reviewView) commentsOn(repoID, path string) []state.PendingComment {
	var out []state.PendingComment
	for _, p := range rv.comments.All() {
		if p.RepositoryID == repoID && p.Path == path {
			out = append(out, p)
		}
	}
	return out
}

// onLineNumber is the diff's one click handler: a click (a tap) on a
// line number selects the line, a shift-click or, on a touch screen, a
// second tap extends the selection to a range (state.ReviewDiff.Click).
// One handler for the whole diff, rather than one per line, keeps a page
// of a thousand lines cheap to render.
func (rv *reviewView) onLineNumber(ctx app.Context, e app.Event) {
	num := e.Get("target").Call("closest", ".review-num")
	if rv.diff == nil || !num.Truthy() {
		return
	}
	i, err := strconv.Atoi(num.Get("dataset").Get("row").String())
	if err != nil {
		return
	}
	was := rv.sel.Set
	switch {
	case e.Get("shiftKey").Bool():
		rv.sel = rv.diff.Click(rv.sel, i, true)
	case rv.Phone || e.Get("pointerType").String() == "touch":
		rv.sel = rv.diff.Tap(rv.sel, i)
	default:
		rv.sel = rv.diff.Click(rv.sel, i, false)
	}
	rv.draftErr = ""
	if rv.sel.Set && !was && !rv.Phone {
		// On a phone the keyboard would cover the lines while the person
		// may still tap the range's end.
		focus(rv.ui(), idCommentInput)
	}
}

// onDraft keeps the comment being written.
func (rv *reviewView) onDraft(ctx app.Context, _ app.Event) {
	rv.draft = ctx.JSSrc().Get("value").String()
}

// onAddComment keeps the comment on the selected lines, pending, and
// closes the box.
func (rv *reviewView) onAddComment(_ app.Context, e app.Event) {
	e.PreventDefault()
	rv.inReview(func() {
		if rv.diff == nil || !rv.sel.Set || rv.comments == nil {
			return
		}
		c, ok := rv.diff.Comment(rv.sel.Bounds())
		if !ok {
			return
		}
		c.Body = rv.draft
		if _, err := rv.comments.Add(rv.diff.Key().RepositoryID, c); err != nil {
			rv.draftErr = describe(err)
			return
		}
		rv.sel, rv.draft, rv.draftErr, rv.sendErr = state.LineSelection{}, "", "", ""
		rv.delivered = delivery{}
	})
}

// onComposeKey closes the comment box on Escape and adds the comment on
// Ctrl+Enter (Cmd+Enter on a Mac).
func (rv *reviewView) onComposeKey(ctx app.Context, e app.Event) {
	switch key := e.Get("key").String(); {
	case key == "Escape":
		rv.onCancelComment(ctx, e)
	case key == "Enter" && (e.Get("ctrlKey").Bool() || e.Get("metaKey").Bool()):
		rv.onAddComment(ctx, e)
	}
}

// onCancelComment closes the comment box and clears the selection.
func (rv *reviewView) onCancelComment(app.Context, app.Event) {
	rv.inReview(func() { rv.sel, rv.draft, rv.draftErr = state.LineSelection{}, "", "" })
}

// inReview runs fn through the shell, so the whole review renders after
// it. A handler on an element a block renders runs in the block's
// context, and go-app would render only that block again: not the head's
// count, nor another block's comments.
func (rv *reviewView) inReview(fn func()) {
	dispatch(rv.ui(), func(app.Context) { fn() })
}

// reviewBlock is a run of rows of one hunk of the diff shown. It is a
// component so that a selection, a comment or a page more re-renders
// only the blocks it changes: its exported fields are its whole input.
type reviewBlock struct {
	app.Compo

	// View is the review, for the comment box; it never changes.
	View *reviewView
	Rows []state.ReviewLine
	// Start is the index of Rows[0] among the diff's rows.
	Start int
	// SelFirst and SelLast bound the rows selected, when the selection
	// reaches into this block; -1 when it does not. Compose shows the
	// comment box under SelLast, which is in this block.
	SelFirst, SelLast int
	Compose           bool
	// Covered lists the rows pending comments are on.
	Covered []int
	// Notes are the comments that show in this block, each after its row.
	Notes []blockNote
}

// blockNote is a comment shown after row Row.
type blockNote struct {
	Row     int
	Comment state.PendingComment
	Editing bool
}

// Render draws the block's rows, each in a slot of its own that also holds
// the comments after it and the comment box, so a box coming or going
// never moves the rows after it.
func (h *reviewBlock) Render() app.UI {
	rows := make([]app.UI, len(h.Rows))
	for j, l := range h.Rows {
		i := h.Start + j
		var extra []app.UI
		for _, n := range h.Notes {
			if n.Row == i {
				extra = append(extra, h.View.renderNote(n.Comment, n.Editing, editInline))
			}
		}
		if h.Compose && i == h.SelLast {
			extra = append(extra, h.View.renderCompose(h.SelFirst, h.SelLast))
		}
		rows[j] = h.row(i, l, extra)
	}
	return app.Div().Class("review-block").Body(rows...)
}

// rowClass is the class of a row's mark.
var rowClass = map[byte]string{
	' ': "review-context", '+': "review-added", '-': "review-removed", '\\': "review-eof", state.MarkHunk: "review-hunk-head",
}

// row draws row i: its line numbers as one button (a header or git's note
// has none), its mark and its text, then extra.
func (h *reviewBlock) row(i int, l state.ReviewLine, extra []app.UI) app.UI {
	el := app.Div().Class("review-row", rowClass[l.Mark])
	selected := i >= h.SelFirst && i <= h.SelLast && h.SelFirst >= 0
	if selected {
		el = el.Class("review-selected")
	}
	for _, c := range h.Covered {
		if c == i {
			el = el.Class("review-commented")
		}
	}
	if l.Mark == state.MarkHunk {
		return el.Body(app.Div().Class("review-line").Body(app.Span().Class("review-code").Text(l.Text)))
	}
	var gutter app.UI = app.Span().Class("review-gutter").Aria("hidden", "true")
	if l.Numbered() {
		gutter = app.Button().Class("review-num").Type("button").
			DataSet("row", i).
			Aria("label", lineLabel(l)).
			Aria("pressed", selected).
			Body(
				app.Span().Class("review-old").Text(lineNumber(l.Old)),
				app.Span().Class("review-new").Text(lineNumber(l.New)),
			)
	}
	line := app.Div().Class("review-line").Body(
		gutter,
		app.Span().Class("review-mark").Aria("hidden", "true").Text(string(l.Mark)),
		app.Span().Class("review-code").Text(l.Text),
		app.If(l.Cut, func() app.UI {
			return app.Span().Class("review-cut").Text(" … cut at " + byteWords(shared.MaxReviewLineBytes))
		}),
	)
	return el.Body(append([]app.UI{line}, extra...)...)
}

// lineNumber shows a line number, empty for none.
func lineNumber(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// lineLabel names a line's number button for assistive technology.
func lineLabel(l state.ReviewLine) string {
	switch l.Mark {
	case '+':
		return "Added line " + strconv.Itoa(l.New)
	case '-':
		return "Removed line " + strconv.Itoa(l.Old)
	}
	return "Line " + strconv.Itoa(l.New)
}

// renderCompose draws the box for a comment on rows first to last.
func (rv *reviewView) renderCompose(first, last int) app.UI {
	what := "Comment"
	if rv.diff != nil {
		if c, ok := rv.diff.Comment(first, last); ok {
			what = "Comment on " + rangeWords(c)
		}
	}
	add := app.Button().ID("review-comment-add").Class("primary-button").Type("submit").Text("Add comment")
	return app.Form().ID("review-compose").Class("review-extra", "review-compose").OnSubmit(rv.onAddComment).Body(
		app.Label().For(idCommentInput).Class("review-compose-label").Text(what),
		app.Textarea().ID(idCommentInput).Class("review-comment-input").Rows(3).
			Placeholder("What should the agent change here?").
			Attr("value", rv.draft).
			OnInput(rv.onDraft).
			OnKeyDown(rv.onComposeKey),
		app.If(rv.draftErr != "", func() app.UI {
			return app.P().Class("review-error-text").Role("alert").Text(rv.draftErr)
		}),
		app.Div().Class("review-compose-actions").Body(
			add,
			app.Button().ID("review-comment-cancel").Class("text-button").Type("button").OnClick(rv.onCancelComment).Text("Cancel"),
		),
	)
}

// rangeWords names a comment's lines: "line 12", "lines 12–14", with
// "(before the change)" on the old side.
func rangeWords(c shared.ReviewComment) string {
	w := "line " + strconv.Itoa(c.StartLine)
	if c.EndLine > c.StartLine {
		w = "lines " + strconv.Itoa(c.StartLine) + "–" + strconv.Itoa(c.EndLine)
	}
	if c.Side == shared.SideOld {
		w += " (before the change)"
	}
	return w
}
