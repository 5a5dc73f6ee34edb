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

// maxInlineBytes is the largest block (paragraph, heading, table cell)
// whose links and emphasis are parsed. goldmark's link and delimiter
// parsing takes time that grows as the square of a block's length on some
// inputs (unclosed links, mismatched emphasis: seconds for one 64 KiB
// paragraph), so beyond this their characters are plain text, and the
// cost of a whole source is bounded by its length times this.
const maxInlineBytes = 4 << 10

// inlineBound runs before every parser of links, images and emphasis
// (strikethrough included) and, in a block longer than maxInlineBytes,
// takes their trigger character as plain text so that they never see it.
type inlineBound struct{}

// blockSize caches whether the block being parsed is over maxInlineBytes.
var blockSize = parser.NewContextKey()

type sized struct {
	block ast.Node
	over  bool
}

// Trigger implements parser.InlineParser.
func (inlineBound) Trigger() []byte { return []byte{'[', ']', '!', '*', '_', '~'} }

// Parse implements parser.InlineParser.
func (inlineBound) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	if !overInlineBound(parent, pc) {
		return nil
	}
	_, seg := block.Position()
	block.Advance(1)
	return ast.NewTextSegment(text.NewSegment(seg.Start, seg.Start+1))
}

func overInlineBound(parent ast.Node, pc parser.Context) bool {
	if s, ok := pc.Get(blockSize).(sized); ok && s.block == parent {
		return s.over
	}
	n := 0
	if parent.Type() == ast.TypeBlock {
		lines := parent.Lines()
		for i := range lines.Len() {
			seg := lines.At(i)
			n += seg.Len()
		}
	}
	over := n > maxInlineBytes
	pc.Set(blockSize, sized{parent, over})
	return over
}
