package markdown

import (
	"os"
	"strings"
	"testing"
)

// BenchmarkRender measures Render with the server's encoding left out: a
// typical agent message (testdata/message.md: prose, code blocks, lists,
// a task list, a quote and a table), the same repeated to the 64 KiB bound,
// and the worst inputs known for goldmark, each at the bound.
func BenchmarkRender(b *testing.B) {
	msg, err := os.ReadFile("testdata/message.md")
	if err != nil {
		b.Fatal(err)
	}
	typical := string(msg)
	atBound := func(s string) string {
		return strings.Repeat(s, DefaultMaxBytes/len(s)+1)[:DefaultMaxBytes]
	}
	// Paragraphs just within maxInlineBytes, so the inline parsers run.
	paragraphs := func(s string) string {
		return atBound(strings.Repeat(s, (maxInlineBytes-2)/len(s)) + "\n\n")
	}
	cases := []struct{ name, md string }{
		{"message-4KB", typical},
		{"message-64KiB", atBound(typical + "\n\n")},
		{"unclosed-links-64KiB", paragraphs("[a](")},
		{"mismatched-emphasis-64KiB", paragraphs("*a_ ")},
		{"nested-quotes-64KiB", atBound(">")},
		{"nested-lists-64KiB", atBound("- ") + "\n" + atBound("a\n")[:DefaultMaxBytes/2]},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.md)))
			b.ReportAllocs()
			for b.Loop() {
				Render(c.md)
			}
		})
	}
}
