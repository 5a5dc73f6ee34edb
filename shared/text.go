package shared

import (
	"strings"
	"unicode/utf8"
)

// Ellipsis ends a text that Clip cut.
const Ellipsis = "…"

// Clip returns s when it fits in limit bytes, else its start cut on a
// character boundary, without trailing spaces, followed by Ellipsis, all
// within limit. limit must be at least len(Ellipsis).
func Clip(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	end := limit - len(Ellipsis)
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return strings.TrimRight(s[:end], " ") + Ellipsis
}
