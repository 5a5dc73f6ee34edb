package ui

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// palette reads the custom properties of the stylesheet's block that
// starts with header ("  :root {" inside the dark media query, or the
// first ":root {").
func palette(t *testing.T, css, header string) map[string]string {
	t.Helper()
	start := strings.Index(css, header)
	require.GreaterOrEqual(t, start, 0, "no %q block", header)
	block := css[start : start+strings.Index(css[start:], "}")]
	vars := make(map[string]string)
	for _, m := range regexp.MustCompile(`--([a-z0-9-]+):\s*(#[0-9a-fA-F]{6})`).FindAllStringSubmatch(block, -1) {
		vars[m[1]] = m[2]
	}
	return vars
}

// luminance is a colour's relative luminance (WCAG 2).
func luminance(t *testing.T, hex string) float64 {
	t.Helper()
	c := func(i int) float64 {
		v, err := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		require.NoError(t, err)
		s := float64(v) / 255
		if s <= 0.03928 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	return 0.2126*c(0) + 0.7152*c(1) + 0.0722*c(2)
}

func contrast(t *testing.T, a, b string) float64 {
	la, lb := luminance(t, a), luminance(t, b)
	return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)
}

// Status colours are text too (badges, labels, the row's git totals): each
// keeps WCAG AA's 4.5:1 for small text on every surface it sits on, in the
// light and the dark scheme.
func TestStatusColoursKeepTheirContrastAsText(t *testing.T) {
	css := stylesheet(t)
	schemes := map[string]map[string]string{
		"light": palette(t, css, ":root {"),
		"dark":  palette(t, css, "@media (prefers-color-scheme: dark) {\n  :root {"),
	}
	texts := []string{"text", "muted", "ok", "danger", "permission", "question", "generating", "background-work", "adds", "dels"}
	surfaces := []string{"bg", "surface", "surface-2", "selected"}
	for name, vars := range schemes {
		for _, fg := range texts {
			for _, bg := range surfaces {
				require.Contains(t, vars, fg, "%s scheme", name)
				require.Contains(t, vars, bg, "%s scheme", name)
				ratio := contrast(t, vars[fg], vars[bg])
				assert.GreaterOrEqual(t, ratio, 4.5, "%s: --%s %s on --%s %s is %.2f:1", name, fg, vars[fg], bg, vars[bg], ratio)
			}
		}
	}
}

// An unclosed rule swallows every rule after it, silently: the braces of
// the stylesheet balance, never going below zero.
func TestStylesheetBracesBalance(t *testing.T) {
	depth := 0
	for i, r := range stylesheet(t) {
		switch r {
		case '{':
			depth++
		case '}':
			depth--
			require.GreaterOrEqual(t, depth, 0, "a closing brace without its rule at byte %d", i)
		}
	}
	require.Zero(t, depth, "an unclosed rule")
}
