package markdown

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/maxence-charriere/go-app/v10/pkg/app"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
	xhtml "golang.org/x/net/html"
)

// allowedAttrs is every attribute Render may write, by element; anything
// else in its output is an injection.
var allowedAttrs = map[string][]string{
	"div": {"class"}, "p": {"class"}, "a": {"class", "href", "target", "rel"},
	"code": {"class", "data-lang"}, "ol": {"start"}, "li": {"class"},
	"input": {"type", "checked", "disabled"}, "th": {"style"}, "td": {"style"},
}

// checkSafe fails unless markup, as a browser tokenizes it, has no script
// element, no event handler attribute, only the attributes Render writes,
// and only links to http, https and mailto URLs.
func checkSafe(t testing.TB, markup string) {
	t.Helper()
	if strings.Contains(strings.ToLower(markup), "<script") {
		t.Fatalf("script element in %q", markup)
	}
	z := xhtml.NewTokenizer(strings.NewReader(markup))
	for {
		switch z.Next() {
		case xhtml.ErrorToken:
			if !errors.Is(z.Err(), io.EOF) {
				t.Fatalf("tokenize: %v", z.Err())
			}
			return
		case xhtml.StartTagToken, xhtml.SelfClosingTagToken:
			tok := z.Token()
			for _, a := range tok.Attr {
				if strings.HasPrefix(a.Key, "on") {
					t.Fatalf("event handler %q on %s in %q", a.Key, tok.Data, markup)
				}
				if !contains(allowedAttrs[tok.Data], a.Key) {
					t.Fatalf("attribute %q on %s in %q", a.Key, tok.Data, markup)
				}
				if a.Key == "href" && !strings.HasPrefix(a.Val, "http://") &&
					!strings.HasPrefix(a.Val, "https://") && !strings.HasPrefix(a.Val, "mailto:") {
					t.Fatalf("href %q in %q", a.Val, markup)
				}
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// maxNesting returns how deep elements nest in markup.
func maxNesting(t *testing.T, markup string) int {
	t.Helper()
	z := xhtml.NewTokenizer(strings.NewReader(markup))
	d, deepest := 0, 0
	for {
		switch z.Next() {
		case xhtml.ErrorToken:
			require.ErrorIs(t, z.Err(), io.EOF)
			return deepest
		case xhtml.StartTagToken:
			if name, _ := z.TagName(); !contains([]string{"br", "hr", "input"}, string(name)) {
				d++
				deepest = max(deepest, d)
			}
		case xhtml.EndTagToken:
			d--
		}
	}
}

func TestHostileLinksRenderAsText(t *testing.T) {
	cases := []struct{ name, md, want string }{
		{"javascript link", "[x](javascript:alert(1))", "<p>x</p>"},
		{"javascript link in mixed case", "[x](JaVaScRiPt:alert(1))", "<p>x</p>"},
		{"javascript link behind an entity", "[x](&#106;avascript:alert(1))", "<p>x</p>"},
		{"javascript link behind a backslash escape", `[x](javascript\:alert(1))`, "<p>x</p>"},
		{"javascript autolink", "<javascript:alert(1)>", "<p>javascript:alert(1)</p>"},
		{"vbscript link", "[x](vbscript:msgbox(1))", "<p>x</p>"},
		{"data URL", "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)", "<p>x</p>"},
		{"data image", "![pic](data:image/png;base64,iVBORw0KGgo=)", "<p>pic</p>"},
		{"file URL", "[x](file:///etc/passwd)", "<p>x</p>"},
		{"protocol-relative URL", "[x](//evil.example/)", "<p>x</p>"},
		{"http without host", "[x](http:evil)", "<p>x</p>"},
		{"reference to a javascript link", "[x][r]\n\n[r]: javascript:alert(1)", "<p>x</p>"},
		{"image with a javascript URL", "![x](javascript:alert(1))", "<p>x</p>"},
		{"apostrophe that would end a single-quoted attribute", "<http://example.com/'onmouseover='alert(1)>",
			"<p>http://example.com/&#39;onmouseover=&#39;alert(1)</p>"},
		{"backtick in a bare URL is percent-encoded", "http://example.com/`x`",
			`<p><a href="http://example.com/%60x%60"` + ln + ">http://example.com/`x`</a></p>"},
		{"quote in a destination is percent-encoded", `[x](http://example.com/"onmouseover="alert(1))`,
			`<p><a href="http://example.com/%22onmouseover=%22alert(1)"` + ln + `>x</a></p>`},
		{"quote in a host is refused", `<http://a"onmouseover=alert(1)//>`,
			"<p>http://a&#34;onmouseover=alert(1)//</p>"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, compact(t, c.md))
			checkSafe(t, serverHTML(Render(c.md)))
		})
	}
}

func TestLinkWithAttributeBreakingURLInjectsNoAttribute(t *testing.T) {
	// url.Parse accepts these and String gives them back unchanged, quotes
	// and all; go-app would write href="http://a\"onmouseover=..." and a
	// browser would read an onmouseover attribute. Goldmark percent-encodes
	// most such bytes before a URL gets here; this is the check that does
	// not depend on it.
	for _, dest := range []string{
		`http://a"onmouseover=alert(1)/`,
		`http://example.com/?q="onmouseover=alert(1)`,
		`http://example.com/?q=<x>`,
		"http://example.com/?q=a`b",
		`http://example.com/?q=a\b`,
		`mailto:a@example.com?subject="onmouseover=alert(1)`,
	} {
		t.Run(dest, func(t *testing.T) {
			link := ast.NewLink()
			link.AppendChild(link, ast.NewString([]byte("label")))
			b := newBuilder(nil)
			var r run
			b.link(&r, link, "", []byte(dest), 1)
			markup := serverHTML(app.Div().Class("markdown").Body(r.done()...))

			checkSafe(t, markup)
			assert.NotContains(t, markup, "<a")
			assert.Contains(t, markup, "label")
		})
	}
}

func TestSafeURL(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"https://example.com/a?b=c#d", "https://example.com/a?b=c#d", true},
		{"HTTP://Example.com", "http://Example.com", true},
		{"http://[::1]:8080/", "http://[::1]:8080/", true},
		{"mailto:a@example.com", "mailto:a@example.com", true},
		{"http://example.com/%C3%A9", "http://example.com/%C3%A9", true},
		{"ftp://example.com/", "", false},
		{"/relative", "", false},
		{"#fragment", "", false},
		{"https://", "", false},
		{"mailto:", "", false},
		{"http://example.com/a b", "http://example.com/a%20b", true},
		{"http://example.com/é", "http://example.com/%C3%A9", true},
		{"http://example.com/\x7f", "", false},
		{"http://example.com/'", "", false},
	}
	for _, c := range cases {
		got, ok := safeURL(c.in)
		assert.Equal(t, c.ok, ok, c.in)
		assert.Equal(t, c.want, got, c.in)
	}
}

func TestRawHTMLIsText(t *testing.T) {
	for _, md := range []string{
		"<script>alert(1)</script>",
		"a <script>alert(1)</script> b",
		"<img src=x onerror=alert(1)>",
		"x <a href=\"javascript:alert(1)\" onclick=\"alert(1)\">y</a>",
		"<style>body{display:none}</style>",
		"<iframe src=\"https://evil.example\"></iframe>",
		"<svg onload=alert(1)>",
		"- <script>\n- </script>",
		"| <script> |\n|---|\n| <b onclick=x> |",
	} {
		t.Run(md, func(t *testing.T) {
			markup := serverHTML(Render(md))
			checkSafe(t, markup)
			assert.Contains(t, markup, "&lt;")
		})
	}
}

func TestDeepNestingIsFlattenedToText(t *testing.T) {
	cases := []struct{ name, md, elem string }{
		{"10,000 nested quotes", strings.Repeat(">", 10000) + " deep", "<blockquote>"},
		{"10,000 nested quotes over lines", strings.Repeat("> ", 10000) + "deep\n" + strings.Repeat("lazy\n", 1000), "<blockquote>"},
		{"10,000 nested lists", strings.Repeat("- ", 10000) + "deep", "<ul>"},
		{"10,000 nested ordered lists", strings.Repeat("1. ", 10000) + "deep", "<ol>"},
		{"quotes and lists alternating", strings.Repeat("> - ", 5000) + "deep", "<blockquote>"},
		// Inline nesting within one block of at most maxInlineBytes.
		{"800 nested emphases", strings.Repeat("*a **", 400) + "deep" + strings.Repeat("** b*", 400), "<em>"},
		{"4,000 emphasis delimiters", strings.Repeat("*", 2000) + "deep" + strings.Repeat("*", 2000), "<strong>"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			markup := serverHTML(Render(c.md))
			checkSafe(t, markup)
			// The root, then at most maxDepth levels of content, one of
			// which may be two elements (pre > code, table parts).
			assert.LessOrEqual(t, maxNesting(t, markup), 1+maxDepth+1)
			assert.Greater(t, strings.Count(markup, c.elem), 10, "shallow levels still render as markup")
			assert.Contains(t, markup, "deep", "the text beyond the bound is shown")
		})
	}
}

func TestParserOpensNoContainerBeyondTheBound(t *testing.T) {
	// The builder would flatten them anyway; the bound is on goldmark's
	// work, which grows with open blocks times lines.
	for _, md := range []string{
		strings.Repeat(">", 10000),
		strings.Repeat("- ", 10000) + "x",
		strings.Repeat("> 1. ", 5000) + "x\n" + strings.Repeat("lazy\n", 100),
	} {
		doc := sharedParser().Parse(text.NewReader([]byte(md)))
		deepest := 0
		for n := ast.Node(doc); n != nil; n = next(n) {
			deepest = max(deepest, depth(n, 1<<30))
		}
		assert.LessOrEqual(t, deepest, maxDepth+3, md[:20])
	}
}

// next returns the node after n in document order.
func next(n ast.Node) ast.Node {
	if c := n.FirstChild(); c != nil {
		return c
	}
	for ; n != nil; n = n.Parent() {
		if s := n.NextSibling(); s != nil {
			return s
		}
	}
	return nil
}

func TestFlattenedContentKeepsItsText(t *testing.T) {
	// A list whose deepest item holds a quote, code and a link: beyond the
	// bound it is their text, in order, and no markup.
	md := strings.Repeat("> ", maxDepth-1) + "- a *b* `c`\n" + strings.Repeat("> ", maxDepth-1) + "  [d](http://x.example) <e@x.example>"
	got := compact(t, md)
	assert.Contains(t, got, "<li>a b c\nd e@x.example</li>")
}

func TestInvalidUTF8IsReplaced(t *testing.T) {
	md := "ok \xff\xfe *em \xc3* `\xe2\x82` [\x80](http://x.example/\xff)"
	markup := serverHTML(Render(md))
	assert.True(t, utf8.ValidString(markup))
	assert.Equal(t, "<p>ok \uFFFD <em>em \uFFFD</em> <code>\uFFFD</code> "+
		`<a href="http://x.example/%EF%BF%BD"`+ln+">\uFFFD</a></p>", compact(t, md))
}

func TestLongSourceIsCutWithANote(t *testing.T) {
	line := "A paragraph of an agent's long message, with *emphasis* and `code`.\n\n"
	md := strings.Repeat(line, (1<<20)/len(line)+1) // just over 1 MB
	got := compact(t, md)
	left := len(md) - DefaultMaxBytes
	assert.True(t, strings.HasSuffix(got, fmt.Sprintf(`<p class="markdown-truncated">… %d more bytes not shown</p>`, left)), got[len(got)-200:])
	assert.Equal(t, strings.Count(md[:DefaultMaxBytes], "*emphasis*"), strings.Count(got, "<em>emphasis</em>"),
		"everything up to the bound is rendered")
}

func TestMaxBytes(t *testing.T) {
	cases := []struct {
		name string
		md   string
		max  int
		want string
	}{
		{"shorter than the bound", "abc", 3, "<p>abc</p>"},
		{"longer than the bound", "abcdef", 4, `<p>abcd</p><p class="markdown-truncated">… 2 more bytes not shown</p>`},
		{"cut on a rune boundary", "ééé", 3, `<p>é</p><p class="markdown-truncated">… 4 more bytes not shown</p>`},
		{"cut inside a fence leaves a code block", "```\nabc\ndef\n```", 9, "<pre><code>abc\nd\n</code></pre>" + `<p class="markdown-truncated">… 6 more bytes not shown</p>`},
		{"zero keeps the default", "abc", 0, "<p>abc</p>"},
		{"negative keeps the default", "abc", -1, "<p>abc</p>"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, compact(t, c.md, MaxBytes(c.max)))
		})
	}
}

func TestLongBlockShowsLinksAndEmphasisAsText(t *testing.T) {
	// goldmark's link and emphasis parsing is quadratic in a block's
	// length on inputs like these; past maxInlineBytes a block is text.
	filler := strings.Repeat("x", maxInlineBytes)
	for _, md := range []string{
		"[a](b) *c* ~~d~~ " + filler,
		"# [a](b) *c* ~~d~~ " + filler,
		"| h |\n|---|\n| [a](b) *c* ~~d~~ " + filler + " |",
	} {
		got := compact(t, md)
		assert.Contains(t, got, "[a](b) *c* ~~d~~ xxx", md[:10])
	}
	// Bare URLs, autolinks and code spans cost linear time and stay.
	got := compact(t, "https://example.com <https://example.org> `code` "+filler)
	assert.Contains(t, got, `<a href="https://example.com"`)
	assert.Contains(t, got, `<a href="https://example.org"`)
	assert.Contains(t, got, "<code>code</code>")
}

func TestBlockWithinTheInlineBoundKeepsItsMarkup(t *testing.T) {
	md := "[a](https://example.com) *b* ~~c~~ "
	md += strings.Repeat("x", maxInlineBytes-len(md))
	got := compact(t, md)
	assert.True(t, strings.HasPrefix(got, `<p><a href="https://example.com"`+ln+`>a</a> <em>b</em> <del>c</del> xxx`), got[:100])
}

func TestReferenceUsedOnEveryLineDoesNotMultiplyItsURL(t *testing.T) {
	// An 8 KB URL defined once and used 2,000 times: 16 MB of hrefs if
	// every use carried it, from 18 KB of source.
	md := "[x]: https://example.com/" + strings.Repeat("a", 8<<10) + "\n" + strings.Repeat("[x]\n\n", 2000)
	markup := serverHTML(Render(md))
	assert.Less(t, len(markup), 8*len(md), "markup stays linear in the source")
	assert.Positive(t, strings.Count(markup, "<a "), "the first uses are links")
	assert.Equal(t, 2000, strings.Count(compact(t, md), ">x</"), "every use shows its text")
}

func TestHugeTableStaysAParagraph(t *testing.T) {
	// 1,000 columns over 1,000 one-byte rows: a million cells once
	// goldmark pads each row, from 6 KB of source.
	md := strings.Repeat("|a", 1000) + "\n" + strings.Repeat("|-", 1000) + "\n" + strings.Repeat("x\n", 1000)
	markup := serverHTML(Render(md))
	assert.Zero(t, strings.Count(markup, "<td"), "cells rendered")
	assert.True(t, strings.HasPrefix(compact(t, md), "<p>|a|a|a"), "the source is shown as a paragraph")
}

func TestLargeTableStillRenders(t *testing.T) {
	// 10 columns over 200 rows, 2,000 cells: a long table, but one the
	// source pays for cell by cell.
	row := strings.Repeat("| c ", 10) + "|\n"
	md := strings.Repeat("| h ", 10) + "|\n" + strings.Repeat("|---", 10) + "|\n" + strings.Repeat(row, 200)
	markup := serverHTML(Render(md))
	assert.Equal(t, 10, strings.Count(markup, "<th>"))
	assert.Equal(t, 2000, strings.Count(markup, "<td>"))
}
