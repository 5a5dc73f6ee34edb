package ui

import (
	"path"
	"strconv"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/shared"
)

// renderFiles draws the comparison's changed files as links to their
// diffs, in path order, with "Show more files" while more follow.
func (rv *reviewView) renderFiles() app.UI {
	f := rv.files
	switch {
	case f == nil:
		return nil
	case !f.Loaded() && f.Err() == "":
		return app.P().Class("review-loading", "muted").Role("status").Text("Listing the changed files…")
	case !f.Loaded():
		return nil
	}
	l := f.Listing()
	if len(l.Files) == 0 {
		text := "No changes."
		if l.Scope == shared.ReviewScopeTurn {
			text = "No changes in this turn."
		}
		return app.P().ID("review-empty").Class("review-empty").Role("status").Text(text)
	}
	chosen, _ := rv.chosenFile()
	return app.Nav().ID(idReviewFiles).Class("review-files").Aria("label", "Changed files").Body(
		app.Ul().Class("review-file-list").Body(
			app.Range(l.Files).Slice(func(i int) app.UI {
				return rv.renderFile(l.Files[i], l.Files[i].Path == chosen.Path)
			}),
		),
		app.If(l.More, func() app.UI {
			return app.Div().Class("review-more").Body(
				app.Span().Class("muted").Text(strconv.Itoa(len(l.Files))+" of "+plural(l.Total, "file", "files")+" "),
				busyButton("review-more-files", "Show more files", "Loading…", f.Busy()).OnClick(rv.onMoreFiles),
			)
		}),
		app.If(l.More && f.Err() != "", func() app.UI {
			return app.P().Class("review-error-text").Role("alert").Text("Could not list more: " + f.Err())
		}),
	)
}

// renderFile draws one changed file: its status letter, its path (with
// the old one of a rename), its line counts or that it is binary. Paths
// are only ever text, and the link's address carries them escaped.
func (rv *reviewView) renderFile(f shared.ReviewFile, chosen bool) app.UI {
	r := rv.Route
	r.File = f.Path
	dir, name := path.Split(f.Path)
	a := app.A().Class("review-file").Href(r.Path()).DataSet("path", f.Path).DataSet("status", f.Status)
	if chosen {
		a = a.Aria("current", "true")
	}
	return app.Li().Body(a.Body(
		statusLetter(f.Status),
		app.Span().Class("review-file-path").Body(
			app.If(f.OldPath != "", func() app.UI {
				return app.Span().Class("review-file-old").Text(f.OldPath + " → ")
			}),
			app.Span().Class("review-file-dir").Text(dir),
			app.Span().Class("review-file-name").Text(name),
		),
		app.If(f.Binary, func() app.UI {
			return app.Span().Class("review-file-binary").Text("binary")
		}).Else(func() app.UI {
			return app.Span().Class("review-file-counts").Body(
				app.Span().Class("adds").Text("+"+strconv.Itoa(f.Additions)),
				app.Text(" "),
				app.Span().Class("dels").Text("−"+strconv.Itoa(f.Deletions)),
			)
		}),
	))
}

// fileStatuses are the letters and words of the statuses of a changed
// file, as git names them.
var fileStatuses = map[string][2]string{
	shared.FileAdded:       {"A", "added"},
	shared.FileModified:    {"M", "modified"},
	shared.FileDeleted:     {"D", "deleted"},
	shared.FileRenamed:     {"R", "renamed"},
	shared.FileTypeChanged: {"T", "type changed"},
}

// statusLetter draws a status as git's letter, named in words.
func statusLetter(status string) app.UI {
	s, ok := fileStatuses[status]
	if !ok {
		s = [2]string{"X", "changed"}
	}
	return namedSpan(s[1]).Class("review-status", "review-status-"+s[0]).Text(s[0])
}
