package markdown

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// maxDepth is how deep the document tree may nest below the root before
// its content renders as plain text: 32 levels, so 32 block quotes or 16
// lists (a list and its item are two levels), with the inline content inside
// counted too. It bounds the recursion of the builder and of go-app's own
// mount and encode, and (through nestingBound) goldmark's parsing work,
// which grows with the number of open blocks times the number of lines.
const maxDepth = 32

// maxTableCells is the most cells a table may have. goldmark pads every
// row to the header's width, so without a bound a wide header over many
// short lines makes a number of cells that grows as the square of the
// input; a paragraph that could become a larger table stays a paragraph.
const maxTableCells = 8192

// nestingBound wraps the parser of a container block (block quote, list)
// so that it opens none deeper than maxDepth: the line that would have
// opened one is read as text by the parsers after it, in the end a
// paragraph, which the builder flattens.
type nestingBound struct{ parser.BlockParser }

// Open implements parser.BlockParser.
func (p nestingBound) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	if depth(parent, maxDepth) >= maxDepth {
		return nil, parser.NoChildren
	}
	return p.BlockParser.Open(parent, reader, pc)
}

// depth returns how many levels n is below the document, counting no
// further than limit, so the cost of asking is bounded too.
func depth(n ast.Node, limit int) int {
	d := 0
	for ; n != nil && n.Kind() != ast.KindDocument && d < limit; n = n.Parent() {
		d++
	}
	return d
}

// tableBound wraps goldmark's table transformer and leaves alone a
// paragraph that could become a table of more than maxTableCells cells:
// a table has at most as many columns as its delimiter row has pipes plus
// one, and at most one row a line.
type tableBound struct{ parser.ParagraphTransformer }

// Transform implements parser.ParagraphTransformer.
func (t tableBound) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := node.Lines()
	columns := 0
	for i := range lines.Len() {
		line := lines.At(i)
		columns = max(columns, bytes.Count(reader.Value(line), []byte{'|'})+1)
	}
	if columns*lines.Len() > maxTableCells {
		return
	}
	t.ParagraphTransformer.Transform(node, reader, pc)
}
