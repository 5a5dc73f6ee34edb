package markdown

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzRender(f *testing.F) {
	for _, seed := range []string{
		"# Title\n\nSome *text* with `code` and a [link](https://example.com).",
		"- [x] done\n- [ ] todo\n  1. nested\n\n> quote\n\n---\n",
		"```go\nfunc main() {}\n```\n\n    indented\n",
		"| a | b |\n|:--|--:|\n| 1 | 2 |\n| 3 |",
		"<script>alert(1)</script>\n\na <img src=x onerror=alert(1)> b",
		"[x](javascript:alert(1)) ![y](data:image/png;base64,AAAA) <javascript:x>",
		`[x](http://example.com/"onmouseover="alert(1)) <http://a"onmouseover=x//>`,
		"www.example.com a@example.com https://example.com/'x'",
		strings.Repeat("> ", 100) + "deep",
		strings.Repeat("*a **", 100) + "deep",
		"\xff\xfe *\xc3* `\x00`",
		"```unterminated\ncode",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, md string) {
		markup := serverHTML(Render(md))
		if !utf8.ValidString(markup) {
			t.Fatalf("invalid UTF-8 out of %q", md)
		}
		// Attributes as a browser's tokenizer reads them: "on…=" inside a
		// quoted URL is no attribute, outside one it would be.
		checkSafe(t, markup)
	})
}
