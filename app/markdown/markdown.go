package markdown

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/maxence-charriere/go-app/v10/pkg/app"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// DefaultMaxBytes is how much of a source Render shows unless told
// otherwise: enough for any message a person reads on screen, and a bound
// on what one message costs to parse and to lay out.
const DefaultMaxBytes = 64 << 10

// An Option changes how Render renders.
type Option func(*config)

type config struct {
	maxBytes int
}

// MaxBytes bounds how many bytes of the source Render parses and shows; the
// rest is replaced by a note saying how much was left out. A bound of zero or
// less keeps DefaultMaxBytes.
func MaxBytes(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxBytes = n
		}
	}
}

// Render returns src, Markdown, as a div of class "markdown" whose content is
// built element by element from the parsed document; see the package
// documentation for what is supported and why the result is safe to show.
func Render(src string, opts ...Option) app.UI {
	c := config{maxBytes: DefaultMaxBytes}
	for _, o := range opts {
		o(&c)
	}
	src = strings.ToValidUTF8(src, "\uFFFD")
	shown, left := cut(src, c.maxBytes)
	source := []byte(shown)
	doc := sharedParser().Parse(text.NewReader(source))

	b := newBuilder(source)
	body := b.blocks(doc, 0)
	if left > 0 {
		body = append(body, app.P().Class("markdown-truncated").
			Text(fmt.Sprintf("… %d more bytes not shown", left)))
	}
	return app.Div().Class("markdown").Body(body...)
}

// cut returns the longest prefix of s of at most max bytes that ends on a
// rune boundary, and how many bytes follow it.
func cut(s string, max int) (string, int) {
	if len(s) <= max {
		return s, 0
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i], len(s) - i
}

// sharedParser returns the one parser every Render shares (a goldmark parser
// keeps no state between documents): CommonMark with GFM tables,
// strikethrough, task list items and autolinks, and with nesting and table
// size bounded (bounds.go).
var sharedParser = sync.OnceValue(func() parser.Parser {
	return parser.NewParser(
		parser.WithBlockParsers(
			util.Prioritized(parser.NewSetextHeadingParser(), 100),
			util.Prioritized(parser.NewThematicBreakParser(), 200),
			util.Prioritized(nestingBound{parser.NewListParser()}, 300),
			util.Prioritized(parser.NewListItemParser(), 400),
			util.Prioritized(parser.NewCodeBlockParser(), 500),
			util.Prioritized(parser.NewATXHeadingParser(), 600),
			util.Prioritized(parser.NewFencedCodeBlockParser(), 700),
			util.Prioritized(nestingBound{parser.NewBlockquoteParser()}, 800),
			util.Prioritized(parser.NewHTMLBlockParser(), 900),
			util.Prioritized(parser.NewParagraphParser(), 1000),
		),
		parser.WithInlineParsers(append(parser.DefaultInlineParsers(),
			util.Prioritized(inlineBound{}, -1), // before all of them
			// The priorities goldmark's own GFM extenders use.
			util.Prioritized(extension.NewTaskCheckBoxParser(), 0),
			util.Prioritized(extension.NewStrikethroughParser(), 500),
			util.Prioritized(extension.NewLinkifyParser(), 999),
		)...),
		parser.WithParagraphTransformers(append(parser.DefaultParagraphTransformers(),
			util.Prioritized(tableBound{extension.NewTableParagraphTransformer()}, 200),
		)...),
		parser.WithASTTransformers(
			util.Prioritized(extension.NewTableASTTransformer(), 0),
		),
	)
})
