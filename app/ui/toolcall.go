package ui

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/app/wsclient"
	"github.com/herd-dev/herd/shared"
)

// renderTool draws a tool call card: its kind, title and status, the
// files it touches, each part of its content (text in a bounded <pre>, a
// diff as numbered unified diff lines, collapsed when long), and its raw
// input and output behind disclosures. A part the wire carried truncated
// offers "Show all", which fetches the rest. Every part and group sits in
// a slot of its own, so an update in place keeps the elements (and a
// disclosure the person opened stays open).
func (it *messageItem) renderTool() app.UI {
	m := it.Msg
	meta := metadataOf(m)
	return app.Div().Class("card", "tool-card").DataSet("kind", meta.Kind).Body(
		app.Div().Class("card-head").Body(
			app.Span().Class("tool-title").Body(
				app.Span().Class("tool-kind").Text(toolKindWords(meta.Kind)),
				app.Span().Class("tool-name").Text(m.Content),
			),
			app.Span().Class("badge", "badge-"+string(m.Status)).Text(statusWords(m.Status)),
		),
		app.Ul().Class("tool-locations").Body(
			app.Range(meta.Locations).Slice(func(i int) app.UI {
				l := meta.Locations[i]
				return app.Li().Class("tool-location").Text(locationText(l))
			}),
		),
		app.Div().Class("tool-parts").Body(
			app.Range(meta.Content).Slice(func(i int) app.UI {
				return it.renderToolPart(i, meta.Content[i])
			}),
		),
		app.Div().Class("tool-raw").Body(
			app.If(meta.Input != "", func() app.UI {
				return app.Details().Class("tool-io").Body(app.Summary().Text("Input"), app.Pre().Text(meta.Input))
			}),
			app.If(meta.Output != "", func() app.UI {
				return app.Details().Class("tool-io").Body(app.Summary().Text("Raw output"), app.Pre().Text(meta.Output))
			}),
		),
	)
}

// renderToolPart draws part i of the call's content.
func (it *messageItem) renderToolPart(i int, p shared.ToolContent) app.UI {
	tools := it.View.tools
	body, whole := tools.Body(it.Msg.ID, i, p)
	switch p.Type {
	case shared.ToolContentDiff:
		// Collapsing is state of its own (not a <details>, whose open
		// attribute the first screen's HTML and later renders would
		// fight over), and a collapsed diff renders no lines at all.
		open := tools.Expanded(it.Msg.ID, i, p)
		var runs []state.DiffRun
		shown := 0
		if open {
			runs = state.DiffRuns(state.DiffLines(body))
			for _, r := range runs {
				shown += r.Lines
			}
		}
		arrow := "▸"
		if open {
			arrow = "▾"
		}
		return app.Div().Class("tool-part", "tool-diff").DataSet("part", i).DataSet("open", open).Body(
			app.Button().Class("diff-head").Type("button").Aria("expanded", open).OnClick(it.onToggleDiff(i)).Body(
				app.Span().Class("diff-arrow").Aria("hidden", true).Text(arrow),
				app.Span().Class("diff-path").Text(p.Path),
				app.If(p.NewFile, func() app.UI { return app.Span().Class("diff-new").Text("new file") }),
				app.Span().Class("diff-adds").Text("+"+strconv.Itoa(p.Added)),
				app.Span().Class("diff-dels").Text("−"+strconv.Itoa(p.Removed)),
			),
			app.Div().Class("diff-body").Body(
				app.If(open, func() app.UI {
					return app.Div().Class("diff").Body(
						app.Range(runs).Slice(func(j int) app.UI {
							return diffRun(runs[j])
						}),
					)
				}),
				app.If(open, func() app.UI {
					return it.renderMore(i, p, whole, fmt.Sprintf("Showing %d of %d lines.", shown, p.Lines))
				}),
			),
		)
	case shared.ToolContentTerminal:
		return app.P().Class("tool-part", "tool-terminal", "muted").DataSet("part", i).
			Text("Terminal " + p.TerminalID + " (herd shows no terminals; the agent's text output appears above)")
	default:
		out := app.Pre().Class("tool-output").Text(body)
		if chunks := state.TextChunks(body, toolChunkBytes); len(chunks) > 1 {
			out = app.Pre().Class("tool-output").Body(app.Range(chunks).Slice(func(j int) app.UI {
				return app.Span().Class("tool-chunk").Text(chunks[j])
			}))
		}
		return app.Div().Class("tool-part", "tool-text").DataSet("part", i).Body(
			out,
			it.renderMore(i, p, whole, fmt.Sprintf("Showing %s of %s.", byteWords(len(body)), byteWords(p.Size))),
		)
	}
}

// toolChunkBytes is the most text of a tool part one element holds: the
// page lays out only the pieces in view (content-visibility), so a whole
// 1 MB output opens without one long layout.
const toolChunkBytes = 16 << 10

// renderMore says how much of a truncated part shows and offers the rest;
// for a part the server itself cut, it says so.
func (it *messageItem) renderMore(i int, p shared.ToolContent, whole bool, shown string) app.UI {
	id := it.Msg.ID
	tools := it.View.tools
	return app.Div().Class("tool-more").Body(
		app.If(!whole, func() app.UI {
			b := app.Button().Class("text-button", "tool-show-all").Type("button")
			if tools.Busy(id, i) {
				b = b.Text("Loading…").Disabled(true).Aria("busy", "true")
			} else {
				b = b.Text("Show all").OnClick(it.onShowAll(i))
			}
			return app.P().Class("tool-truncated").Body(app.Span().Class("muted").Text(shown+" "), b)
		}),
		app.If(p.Cut, func() app.UI {
			return app.P().Class("tool-cut", "muted").Text("The agent sent more than herd keeps of one tool call; the rest was not kept.")
		}),
		app.If(tools.Err(id, i) != "", func() app.UI {
			return app.P().Class("banner", "banner-error").Role("alert").Text("Could not load the rest: " + tools.Err(id, i))
		}),
	)
}

// toolPart returns part i of the entry's message as it is now.
func (it *messageItem) toolPart(i int) (shared.ToolContent, bool) {
	content := metadataOf(it.Msg).Content
	if i >= len(content) {
		return shared.ToolContent{}, false
	}
	return content[i], true
}

// onToggleDiff expands or collapses diff part i. Like every handler here
// it reads the entry when it runs: go-app keeps the handler of an
// element's first render (it compares functions, not what they
// captured), so a value captured at render time would be stale.
func (it *messageItem) onToggleDiff(i int) app.EventHandler {
	return func(app.Context, app.Event) {
		v := it.View
		dispatch(v.ui(), func(app.Context) {
			p, ok := it.toolPart(i)
			if !ok {
				return
			}
			v.tools.SetExpanded(it.Msg.ID, i, !v.tools.Expanded(it.Msg.ID, i, p))
			v.tr.olderRev++
		})
	}
}

// onShowAll fetches the rest of part i and shows it whole.
func (it *messageItem) onShowAll(i int) app.EventHandler {
	return func(app.Context, app.Event) {
		v, msgID := it.View, it.Msg.ID
		p, ok := it.toolPart(i)
		if !ok || v.detail == nil || !v.tools.Start(msgID, i) {
			return
		}
		ctx, client, sessionID := v.ui(), v.client(), v.detail.ID()
		v.tr.olderRev++ // an older message's card shows the change too
		ctx.Async(func() {
			body, err := fetchToolPart(client, shared.ToolContentGetRequest{SessionID: sessionID, MessageID: msgID, Part: i}, p)
			dispatch(ctx, func(app.Context) {
				v.tools.Done(msgID, i, body, err)
				v.tr.olderRev++
			})
		})
	}
}

// errPartChanged is a fetch that found the part replaced meanwhile.
var errPartChanged = errors.New("the agent changed this output meanwhile; it shows as it is now")

// fetchToolPart reads the rest of part p after the bytes the wire
// carried, page by page (at most ToolStoredBytes / ToolPageBytes pages),
// and returns the whole body.
func fetchToolPart(c *wsclient.Client, req shared.ToolContentGetRequest, p shared.ToolContent) (string, error) {
	body := []byte(p.Body)
	for len(body) < p.Size {
		req.Offset = len(body)
		var page shared.ToolContentPage
		if err := c.Request(context.Background(), shared.ActionMessageToolContentGet, req, &page); err != nil {
			return "", err
		}
		if page.Size != p.Size || page.Body == "" {
			return "", errPartChanged
		}
		body = append(body, page.Body...)
	}
	return string(body), nil
}

// diffRun draws a run of diff lines of one kind: its line numbers and
// its lines side by side, two text nodes however long it is.
func diffRun(r state.DiffRun) app.UI {
	el := app.Div().Class("diff-run", diffRunClass[r.Kind]).DataSet("lines", r.Lines)
	if r.Kind == state.DiffHunk {
		return el.Body(app.Span().Class("diff-text").Text(r.Text))
	}
	return el.Body(
		app.Span().Class("diff-gutter").Aria("hidden", true).Text(r.Gutter),
		app.Span().Class("diff-text").Text(r.Text),
	)
}

var diffRunClass = [...]string{
	state.DiffContext: "diff-context", state.DiffAdded: "diff-added",
	state.DiffRemoved: "diff-removed", state.DiffHunk: "diff-hunk",
}

// locationText names a file a call touches, with its line when known.
func locationText(l shared.ToolLocation) string {
	if l.Line > 0 {
		return l.Path + ":" + strconv.Itoa(l.Line)
	}
	return l.Path
}

// toolKindWords names a tool kind for people.
func toolKindWords(kind string) string {
	switch kind {
	case "read":
		return "Read"
	case "edit":
		return "Edit"
	case "delete":
		return "Delete"
	case "move":
		return "Move"
	case "search":
		return "Search"
	case "execute":
		return "Run"
	case "think":
		return "Think"
	case "fetch":
		return "Fetch"
	case "switch_mode":
		return "Mode"
	}
	return "Tool"
}

// byteWords says a size in bytes for people.
func byteWords(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
