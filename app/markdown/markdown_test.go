package markdown

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

// ln is the attributes every link carries, after its href (sorted).
const ln = ` rel="noopener noreferrer nofollow" target="_blank"`

func TestRenderConstructs(t *testing.T) {
	cases := []struct {
		name, md, want string
	}{
		{"empty source renders an empty root", "", ""},
		{"paragraph", "hello", "<p>hello</p>"},
		{"paragraphs", "one\n\ntwo", "<p>one</p><p>two</p>"},
		{"soft break stays a line ending in the text", "a\nb", "<p>a\nb</p>"},
		{"hard break by two spaces", "a  \nb", "<p>a<br>b</p>"},
		{"hard break by backslash", "a\\\nb", "<p>a<br>b</p>"},

		{"heading 1 is h3", "# Title", "<h3>Title</h3>"},
		{"heading 2 is h4", "## Part", "<h4>Part</h4>"},
		{"heading 3 is h5", "### Sub", "<h5>Sub</h5>"},
		{"heading 4 is h6", "#### Four", "<h6>Four</h6>"},
		{"heading 6 is h6", "###### Six", "<h6>Six</h6>"},
		{"setext heading 1 is h3", "Title\n=====", "<h3>Title</h3>"},
		{"setext heading 2 is h4", "Part\n----", "<h4>Part</h4>"},
		{"heading with inline markup", "# A *b*", "<h3>A <em>b</em></h3>"},

		{"emphasis and strong", "*a* _b_ **c** __d__",
			"<p><em>a</em> <em>b</em> <strong>c</strong> <strong>d</strong></p>"},
		{"nested emphasis", "***a***", "<p><em><strong>a</strong></em></p>"},
		{"strikethrough", "~~gone~~ and ~one~", "<p><del>gone</del> and <del>one</del></p>"},
		{"code span", "run `go test`", "<p>run <code>go test</code></p>"},
		{"code span keeps markup literal", "`*a* <b> &amp;`", "<p><code>*a* &lt;b&gt; &amp;amp;</code></p>"},
		{"code span line ending is a space", "`a\nb`", "<p><code>a b</code></p>"},
		{"backslash escapes", `\*not em\* \# \[x\]`, "<p>*not em* # [x]</p>"},
		{"entity references", "&amp; &copy; &#35; &#x41; &bogus;", "<p>&amp; © # A &amp;bogus;</p>"},
		{"escaped entity stays literal", `\&amp;`, "<p>&amp;amp;</p>"},
		{"NUL becomes the replacement character", "a\x00b", "<p>a\uFFFDb</p>"},

		{"fenced code with language", "```go\nfunc main() {}\n```",
			`<pre><code class="language-go" data-lang="go">func main() {}` + "\n</code></pre>"},
		{"fenced code with info string after the language", "~~~ c++ {.x}\nint x;\n~~~",
			`<pre><code class="language-c++" data-lang="c++">int x;` + "\n</code></pre>"},
		{"fenced code without language", "```\n<b>\n```", "<pre><code>&lt;b&gt;\n</code></pre>"},
		{"fenced code language that is no token gets no class", "```a\"b\nx\n```", "<pre><code>x\n</code></pre>"},
		{"fenced code language too long gets no class", "```" + strings.Repeat("a", 33) + "\nx\n```", "<pre><code>x\n</code></pre>"},
		{"fenced code keeps indentation", "```\n  a\n\tb\n```", "<pre><code>  a\n\tb\n</code></pre>"},
		{"indented code", "    x := 1\n    y := 2", "<pre><code>x := 1\ny := 2\n</code></pre>"},

		{"block quote", "> quoted\n> still", "<blockquote><p>quoted\nstill</p></blockquote>"},
		{"nested block quote", "> a\n>> b", "<blockquote><p>a</p><blockquote><p>b</p></blockquote></blockquote>"},
		{"thematic break", "a\n\n---\n\nb", "<p>a</p><hr><p>b</p>"},

		{"bullet list", "- a\n- b", "<ul><li>a</li><li>b</li></ul>"},
		{"ordered list", "1. a\n2. b", "<ol><li>a</li><li>b</li></ol>"},
		{"ordered list with start", "3. c\n4. d", `<ol start="3"><li>c</li><li>d</li></ol>`},
		{"loose list has paragraphs", "- a\n\n- b", "<ul><li><p>a</p></li><li><p>b</p></li></ul>"},
		{"nested list", "- a\n  - b\n- c", "<ul><li>a\n<ul><li>b</li></ul></li><li>c</li></ul>"},
		{"task list", "- [x] done\n- [ ] todo",
			`<ul><li class="task"><input checked disabled type="checkbox"> done</li>` +
				`<li class="task"><input disabled type="checkbox"> todo</li></ul>`},

		{"table with alignments", "| a | b | c |\n|:--|:-:|--:|\n| 1 | 2 | 3 |",
			`<div class="md-table"><table><thead><tr>` +
				`<th style="text-align:left">a</th><th style="text-align:center">b</th><th style="text-align:right">c</th>` +
				`</tr></thead><tbody><tr>` +
				`<td style="text-align:left">1</td><td style="text-align:center">2</td><td style="text-align:right">3</td>` +
				`</tr></tbody></table></div>`},
		{"table cells hold inline markup", "| a |\n|---|\n| *b* |",
			`<div class="md-table"><table><thead><tr><th>a</th></tr></thead>` +
				`<tbody><tr><td><em>b</em></td></tr></tbody></table></div>`},

		{"link", "[herd](https://example.com/a?b=c#d)",
			`<p><a href="https://example.com/a?b=c#d"` + ln + `>herd</a></p>`},
		{"link with markup inside", "[*x*](http://example.com)",
			`<p><a href="http://example.com"` + ln + `><em>x</em></a></p>`},
		{"link without text is labelled with its URL", "[](https://example.com)",
			`<p><a href="https://example.com"` + ln + `>https://example.com</a></p>`},
		{"link title is dropped", `[x](http://example.com "the title")`,
			`<p><a href="http://example.com"` + ln + `>x</a></p>`},
		{"link destination is percent-encoded", "[x](<http://example.com/a b>)",
			`<p><a href="http://example.com/a%20b"` + ln + `>x</a></p>`},
		{"mailto link", "[mail](mailto:a@example.com)",
			`<p><a href="mailto:a@example.com"` + ln + `>mail</a></p>`},
		{"reference link", "[x][r]\n\n[r]: https://example.com/r",
			`<p><a href="https://example.com/r"` + ln + `>x</a></p>`},
		{"relative link is text", "[x](/tasks/1) [y](#top) [z](page.html)", "<p>x y z</p>"},
		{"autolink", "<https://example.com>",
			`<p><a href="https://example.com"` + ln + `>https://example.com</a></p>`},
		{"email autolink", "<a@example.com>",
			`<p><a href="mailto:a@example.com"` + ln + `>a@example.com</a></p>`},
		{"bare URL", "see https://example.com/x.",
			`<p>see <a href="https://example.com/x"` + ln + `>https://example.com/x</a>.</p>`},
		{"bare www name", "www.example.com",
			`<p><a href="http://www.example.com"` + ln + `>www.example.com</a></p>`},
		{"bare address", "mail a@example.com",
			`<p>mail <a href="mailto:a@example.com"` + ln + `>a@example.com</a></p>`},
		{"image is a link labelled with its alt text", "![a diagram](https://example.com/d.png)",
			`<p><a class="md-image" href="https://example.com/d.png"` + ln + `>a diagram</a></p>`},
		{"image without alt text is labelled with its URL", "![](https://example.com/d.png)",
			`<p><a class="md-image" href="https://example.com/d.png"` + ln + `>https://example.com/d.png</a></p>`},

		{"image inside a link is its alt text", "[![CI](https://example.com/badge.svg)](https://ci.example.com)",
			`<p><a href="https://ci.example.com"` + ln + `>CI</a></p>`},
		{"autolink inside a link is text", "[see <https://example.com>](https://example.org)",
			`<p><a href="https://example.org"` + ln + `>see https://example.com</a></p>`},
		{"inline HTML is text", "a <b>bold</b> c", "<p>a &lt;b&gt;bold&lt;/b&gt; c</p>"},
		{"HTML block is text", "<div>\n<p>x</p>\n</div>", `<p class="md-raw">&lt;div&gt;` + "\n" + `&lt;p&gt;x&lt;/p&gt;` + "\n" + `&lt;/div&gt;</p>`},
		{"HTML comment is text", "<!-- c -->", `<p class="md-raw">&lt;!-- c --&gt;</p>`},

		{"unterminated fence is a code block to the end", "text\n\n```python\ndef f():\n    return 1",
			`<p>text</p><pre><code class="language-python" data-lang="python">def f():` + "\n    return 1\n</code></pre>"},
		{"half a table is a table of the rows so far", "| a | b |\n|---|---|\n| 1 |",
			`<div class="md-table"><table><thead><tr><th>a</th><th>b</th></tr></thead>` +
				`<tbody><tr><td>1</td><td></td></tr></tbody></table></div>`},
		{"table header without delimiter row yet is a paragraph", "| a | b |", "<p>| a | b |</p>"},
		{"unclosed emphasis is text", "**bold so far", "<p>**bold so far</p>"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, compact(t, c.md))
		})
	}
}

func TestRenderIsSafeForConcurrentUse(t *testing.T) {
	const md = "# T\n\n- a *b*\n- [c](https://example.com)\n\n| x |\n|---|\n| 1 |\n"
	want := compact(t, md)
	var wg sync.WaitGroup
	got := make([]string, 8)
	for i := range got {
		wg.Go(func() { got[i] = serverHTML(Render(md)) })
	}
	wg.Wait()
	for _, g := range got {
		assert.Equal(t, want, compactHTML(t, g))
	}
}
