package markdown

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/maxence-charriere/go-app/v10/pkg/app"
	xhtml "golang.org/x/net/html"
)

// serverHTML renders ui the way herd's server does.
func serverHTML(ui app.UI) string { return app.HTMLString(ui) }

// compact renders md the way the server does and returns the markup inside
// the root div, with each start tag's attributes sorted (go-app writes them
// from a map, in any order) and go-app's indentation removed, so that a
// case can state the markup it expects as one string. go-app puts each of
// an element's children, when there are several, on a line of its own
// indented two spaces a level; that whitespace is exactly known, so it is
// cut exactly, and a text child's own spaces and line endings stay.
func compact(t *testing.T, md string, opts ...Option) string {
	t.Helper()
	return compactHTML(t, serverHTML(Render(md, opts...)))
}

// compactHTML is compact for markup already rendered.
func compactHTML(t *testing.T, markup string) string {
	t.Helper()
	z := xhtml.NewTokenizer(strings.NewReader(markup))
	var out strings.Builder
	depth := -1 // of the innermost open element; the root is 0
	for {
		switch z.Next() {
		case xhtml.ErrorToken:
			if !errors.Is(z.Err(), io.EOF) {
				t.Fatal(z.Err())
			}
			s := out.String()
			const open, end = `<div class="markdown">`, `</div>`
			if !strings.HasPrefix(s, open) || !strings.HasSuffix(s, end) {
				t.Fatalf("no markdown root in %q", s)
			}
			return strings.TrimSuffix(strings.TrimPrefix(s, open), end)
		case xhtml.TextToken:
			out.WriteString(unindent(string(z.Raw()), depth))
		case xhtml.StartTagToken, xhtml.SelfClosingTagToken:
			tok := z.Token()
			attrs := make([]string, 0, len(tok.Attr))
			for _, a := range tok.Attr {
				if a.Val == "" {
					attrs = append(attrs, a.Key)
				} else {
					attrs = append(attrs, a.Key+`="`+a.Val+`"`)
				}
			}
			slices.Sort(attrs)
			out.WriteString("<" + strings.Join(append([]string{tok.Data}, attrs...), " ") + ">")
			switch tok.Data {
			case "br", "hr", "input":
			default:
				depth++
			}
		case xhtml.EndTagToken:
			out.Write(z.Raw())
			depth--
		}
	}
}

// unindent removes from text, raw between two tags inside an element at
// depth d, the line ending and indentation go-app wrote around it.
func unindent(text string, d int) string {
	inner := "\n" + strings.Repeat("  ", d+1)
	outer := "\n" + strings.Repeat("  ", d)
	if text == outer { // before the end tag
		return ""
	}
	text, ok := strings.CutPrefix(text, inner)
	if !ok { // an only child: written as it is
		return text
	}
	if s, ok := strings.CutSuffix(text, inner); ok {
		return s
	}
	return strings.TrimSuffix(text, outer)
}
