package markdown

import (
	"bytes"
	"html"
	"strings"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// text returns the characters of a text node: backslash escapes and entity
// references resolved, except in raw text.
func (b *builder) text(n *ast.Text) string {
	v := n.Value(b.src)
	if n.IsRaw() {
		return string(v)
	}
	return b.unescape(v)
}

// unescape resolves backslash escapes and entity references in v. It lets
// goldmark's HTML writer do it, which follows CommonMark to the letter (in
// one pass, so that `\&amp;` stays "&amp;"), and undoes the writer's HTML
// escaping, which is exact: the writer escapes every &, <, > and ".
func (b *builder) unescape(v []byte) string {
	if bytes.IndexAny(v, "\\&\x00") < 0 {
		return string(v)
	}
	b.out.Reset()
	b.unescaper.Write(b.w, v)
	_ = b.w.Flush() // into a bytes.Buffer: cannot fail
	return html.UnescapeString(b.out.String())
}

// stringValue returns the characters of a String node.
func (b *builder) stringValue(n *ast.String) string {
	if n.IsCode() || n.IsRaw() {
		return string(n.Value)
	}
	return b.unescape(n.Value)
}

// rawHTML returns inline HTML as the text it was written as.
func (b *builder) rawHTML(n *ast.RawHTML) string {
	var s strings.Builder
	for i := range n.Segments.Len() {
		seg := n.Segments.At(i)
		s.Write(seg.Value(b.src))
	}
	return s.String()
}

// codeSpan returns a code span's characters; a line ending inside one is a
// space (CommonMark 6.1).
func (b *builder) codeSpan(n *ast.CodeSpan) string {
	var s strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		t, ok := c.(*ast.Text)
		if !ok {
			continue
		}
		v := t.Segment.Value(b.src)
		if bytes.HasSuffix(v, []byte("\n")) {
			s.Write(v[:len(v)-1])
			s.WriteByte(' ')
		} else {
			s.Write(v)
		}
	}
	return s.String()
}

// lines returns the lines of a code block as they were written.
func (b *builder) lines(n ast.Node) string {
	return joinLines(n.Lines(), b.src)
}

// htmlBlock returns an HTML block as the text it was written as, without
// its final line ending.
func (b *builder) htmlBlock(n *ast.HTMLBlock) string {
	s := joinLines(n.Lines(), b.src)
	if n.HasClosure() {
		s += string(n.ClosureLine.Value(b.src))
	}
	return strings.TrimSuffix(s, "\n")
}

func joinLines(lines *text.Segments, src []byte) string {
	var s strings.Builder
	for i := range lines.Len() {
		seg := lines.At(i)
		s.Write(seg.Value(src))
	}
	return s.String()
}

// plainText returns the text of n and everything below it, without markup,
// a line ending between blocks. It follows the tree's links instead of
// recursing, so a subtree of any depth costs no stack.
func (b *builder) plainText(n ast.Node) string {
	var s strings.Builder
	c := n
	for {
		if b.leafText(&s, c) && c.FirstChild() != nil {
			c = c.FirstChild()
			continue
		}
		// Leave c, and every ancestor whose last child was just left.
		for {
			if c.Type() == ast.TypeBlock && s.Len() > 0 && !strings.HasSuffix(s.String(), "\n") {
				s.WriteByte('\n')
			}
			if c == n {
				return strings.TrimSuffix(s.String(), "\n")
			}
			if next := c.NextSibling(); next != nil {
				c = next
				break
			}
			c = c.Parent()
		}
	}
}

// leafText writes the text n holds itself to s, and reports whether the
// walk should go on into n's children (false for nodes whose children
// leafText has already covered or that have none worth showing).
func (b *builder) leafText(s *strings.Builder, n ast.Node) bool {
	switch n := n.(type) {
	case *ast.Text:
		s.WriteString(b.text(n))
		if n.SoftLineBreak() || n.HardLineBreak() {
			s.WriteByte('\n')
		}
	case *ast.String:
		s.WriteString(b.stringValue(n))
	case *ast.RawHTML:
		s.WriteString(b.rawHTML(n))
	case *ast.CodeSpan:
		s.WriteString(b.codeSpan(n))
		return false
	case *ast.AutoLink:
		s.Write(n.Label(b.src))
	case *ast.CodeBlock, *ast.FencedCodeBlock:
		s.WriteString(strings.TrimSuffix(b.lines(n), "\n"))
	case *ast.HTMLBlock:
		s.WriteString(b.htmlBlock(n))
	case *east.TaskCheckBox:
		if n.IsChecked {
			s.WriteString("[x]")
		} else {
			s.WriteString("[ ]")
		}
	}
	return true
}
