package markdown

import (
	"bufio"
	"bytes"
	"strings"

	"github.com/maxence-charriere/go-app/v10/pkg/app"
	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
)

// linkRel is the rel of every link: a message's links open in a new tab
// that gets no handle on herd's window, no referrer and no endorsement.
const linkRel = "noopener noreferrer nofollow"

// A builder turns one parsed document into go-app elements. Every string
// that reaches the page from the source does so as a text node, except in
// attribute values of two kinds: URLs that passed safeURL (through href)
// and language names that passed languageToken; all other attribute values
// are fixed strings.
type builder struct {
	src []byte
	// hrefBudget is how many bytes of URLs the links may still carry. A
	// reference definition can be used any number of times, so without it
	// a long URL defined once and used on every line would make markup
	// that grows as the square of the source; past the budget a link is
	// its text.
	hrefBudget int
	// inLink is set while a link's label is built: links inside it (an
	// image, an autolink) are their text.
	inLink bool
	// unescaper, out and w resolve backslash escapes and entity references
	// in text the way goldmark's own HTML renderer does (see text).
	unescaper gmhtml.Writer
	out       bytes.Buffer
	w         *bufio.Writer
}

func newBuilder(src []byte) *builder {
	b := &builder{src: src, hrefBudget: 4*len(src) + 1024, unescaper: gmhtml.NewWriter()}
	b.w = bufio.NewWriter(&b.out)
	return b
}

// A run collects the children of one element, merging adjacent text into
// one text node.
type run struct {
	ui   []app.UI
	text strings.Builder
}

func (r *run) addText(s string) { r.text.WriteString(s) }

func (r *run) add(ui app.UI) {
	r.flush()
	r.ui = append(r.ui, ui)
}

func (r *run) flush() {
	if r.text.Len() > 0 {
		r.ui = append(r.ui, app.Text(r.text.String()))
		r.text.Reset()
	}
}

func (r *run) done() []app.UI {
	r.flush()
	return r.ui
}

// blocks returns the rendered children of n, which is at depth d.
func (b *builder) blocks(n ast.Node, d int) []app.UI {
	var r run
	b.children(&r, n, d)
	return r.done()
}

// children renders the children of n, which is at depth d, into r.
func (b *builder) children(r *run, n ast.Node, d int) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		b.node(r, c, d+1)
	}
}

// node renders n, at depth d, into r. Beyond maxDepth a node is shown as
// its plain text.
func (b *builder) node(r *run, n ast.Node, d int) {
	if d > maxDepth {
		r.addText(b.plainText(n))
		return
	}
	switch n := n.(type) {
	case *ast.Text:
		r.addText(b.text(n))
		switch {
		case n.HardLineBreak():
			r.add(app.Br())
		case n.SoftLineBreak():
			r.addText("\n")
		}
	case *ast.String:
		r.addText(b.stringValue(n))
	case *ast.RawHTML:
		r.addText(b.rawHTML(n))
	case *ast.CodeSpan:
		r.add(app.Code().Text(b.codeSpan(n)))
	case *ast.Emphasis:
		if n.Level == 2 {
			r.add(app.Strong().Body(b.blocks(n, d)...))
		} else {
			r.add(app.Em().Body(b.blocks(n, d)...))
		}
	case *east.Strikethrough:
		r.add(app.Del().Body(b.blocks(n, d)...))
	case *ast.Link:
		b.link(r, n, "", util.URLEscape(n.Destination, true), d)
	case *ast.Image:
		// A link to the image: a message makes the browser load nothing.
		b.link(r, n, "md-image", util.URLEscape(n.Destination, true), d)
	case *ast.AutoLink:
		b.autoLink(r, n)
	case *east.TaskCheckBox:
		box := app.Input().Type("checkbox").Disabled(true)
		if n.IsChecked {
			// Only when checked: the server writes Checked(false) as
			// checked="false", which a browser reads as checked.
			box = box.Checked(true)
		}
		r.add(box)
		r.addText(" ") // between the box and its label, as goldmark writes it

	case *ast.Paragraph:
		r.add(app.P().Body(b.blocks(n, d)...))
	case *ast.TextBlock:
		// A tight list item's text: no paragraph around it.
		b.children(r, n, d)
		if n.NextSibling() != nil {
			r.addText("\n")
		}
	case *ast.Heading:
		r.add(heading(n.Level, b.blocks(n, d)))
	case *ast.ThematicBreak:
		r.add(app.Hr())
	case *ast.CodeBlock:
		r.add(app.Pre().Body(app.Code().Text(b.lines(n))))
	case *ast.FencedCodeBlock:
		code := app.Code()
		if lang := n.Language(b.src); languageToken(lang) {
			code = code.Class("language-"+string(lang)).DataSet("lang", string(lang))
		}
		r.add(app.Pre().Body(code.Text(b.lines(n))))
	case *ast.HTMLBlock:
		r.add(app.P().Class("md-raw").Text(b.htmlBlock(n)))
	case *ast.Blockquote:
		r.add(app.Blockquote().Body(b.blocks(n, d)...))
	case *ast.List:
		r.add(b.list(n, d))
	case *east.Table:
		r.add(b.table(n, d))
	case *ast.LinkReferenceDefinition:
		// Shown through the links that use it.
	default:
		// A kind this package does not know: its content, unstyled.
		b.children(r, n, d)
	}
}

// heading returns the element of a level-l heading. Levels are shifted by
// two, # to h3 and ## to h4, and ### and deeper are h5 and h6, so that a
// message's title stays below the page's own h1 and h2.
func heading(l int, body []app.UI) app.UI {
	switch {
	case l <= 1:
		return app.H3().Body(body...)
	case l == 2:
		return app.H4().Body(body...)
	case l == 3:
		return app.H5().Body(body...)
	default:
		return app.H6().Body(body...)
	}
}

// href returns dest as a link's href if safeURL accepts it and it fits
// in what is left of hrefBudget.
func (b *builder) href(dest []byte) (string, bool) {
	if len(dest) > b.hrefBudget {
		return "", false
	}
	href, ok := safeURL(string(dest))
	if !ok || len(href) > b.hrefBudget {
		return "", false
	}
	b.hrefBudget -= len(href)
	return href, true
}

// link renders n, a link or an image, as a link to dest (URL-escaped)
// labelled with n's content, or with its URL when that is empty. When dest
// is not safe, or n is inside another link (an anchor cannot hold one, as
// in a badge image that links somewhere), it renders n's content alone.
func (b *builder) link(r *run, n ast.Node, class string, dest []byte, d int) {
	href, ok := "", !b.inLink
	if ok {
		href, ok = b.href(dest)
	}
	if !ok {
		b.children(r, n, d)
		return
	}
	b.inLink = true
	label := b.blocks(n, d)
	b.inLink = false
	if len(label) == 0 { // an empty link would be invisible
		label = []app.UI{app.Text(href)}
	}
	a := app.A().Href("%s", href).Target("_blank").Rel(linkRel)
	if class != "" {
		a = a.Class(class)
	}
	r.add(a.Body(label...))
}

// autoLink renders <https://…>, <a@b.example> and GFM's bare URLs and
// addresses; the label is the text as written.
func (b *builder) autoLink(r *run, n *ast.AutoLink) {
	dest := n.URL(b.src)
	if n.AutoLinkType == ast.AutoLinkEmail && !bytes.HasPrefix(bytes.ToLower(dest), []byte("mailto:")) {
		dest = append([]byte("mailto:"), dest...)
	}
	label := string(n.Label(b.src))
	href, ok := "", !b.inLink
	if ok {
		href, ok = b.href(util.URLEscape(dest, false))
	}
	if !ok {
		r.addText(label)
		return
	}
	r.add(app.A().Href("%s", href).Target("_blank").Rel(linkRel).Text(label))
}

// list renders a list, ordered from its start, and marks task items.
func (b *builder) list(n *ast.List, d int) app.UI {
	items := make([]app.UI, 0, n.ChildCount())
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if d+1 > maxDepth {
			items = append(items, app.Li().Text(b.plainText(c)))
			continue
		}
		li := app.Li()
		if isTask(c) {
			li = li.Class("task")
		}
		items = append(items, li.Body(b.blocks(c, d+1)...))
	}
	if !n.IsOrdered() {
		return app.Ul().Body(items...)
	}
	ol := app.Ol()
	if n.Start != 1 {
		ol = ol.Start(n.Start)
	}
	return ol.Body(items...)
}

// isTask reports whether list item li begins with a task check box.
func isTask(li ast.Node) bool {
	if first := li.FirstChild(); first != nil {
		_, ok := first.FirstChild().(*east.TaskCheckBox)
		return ok
	}
	return false
}

// table renders a GFM table inside a div that scrolls sideways on narrow
// screens.
func (b *builder) table(n *east.Table, d int) app.UI {
	var head, rows []app.UI
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c.(type) {
		case *east.TableHeader:
			head = append(head, app.Tr().Body(b.cells(c, true, d+1)...))
		case *east.TableRow:
			rows = append(rows, app.Tr().Body(b.cells(c, false, d+1)...))
		}
	}
	parts := []app.UI{app.THead().Body(head...)}
	if len(rows) > 0 {
		parts = append(parts, app.TBody().Body(rows...))
	}
	return app.Div().Class("md-table").Body(app.Table().Body(parts...))
}

// cells renders the cells of table row n, at depth d.
func (b *builder) cells(n ast.Node, header bool, d int) []app.UI {
	cells := make([]app.UI, 0, n.ChildCount())
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		var body []app.UI
		if d+1 > maxDepth {
			body = []app.UI{app.Text(b.plainText(c))}
		} else {
			body = b.blocks(c, d+1)
		}
		align := ""
		if cell, ok := c.(*east.TableCell); ok {
			align = alignment(cell.Alignment)
		}
		if header {
			th := app.Th().Body(body...)
			if align != "" {
				th = th.Style("text-align", align)
			}
			cells = append(cells, th)
		} else {
			td := app.Td().Body(body...)
			if align != "" {
				td = td.Style("text-align", align)
			}
			cells = append(cells, td)
		}
	}
	return cells
}

// alignment returns the CSS text-align of a column's alignment, or "".
func alignment(a east.Alignment) string {
	switch a {
	case east.AlignLeft:
		return "left"
	case east.AlignRight:
		return "right"
	case east.AlignCenter:
		return "center"
	default:
		return ""
	}
}
