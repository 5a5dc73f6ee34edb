package shared_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/herd-dev/herd/shared"
)

func TestClipCutsOnACharacterBoundaryWithinTheLimit(t *testing.T) {
	if got := shared.Clip("short", 10); got != "short" {
		t.Fatalf("a text that fits = %q", got)
	}
	for limit := len(shared.Ellipsis); limit < 40; limit++ {
		got := shared.Clip(strings.Repeat("é€ ", 20), limit)
		if len(got) > limit || !utf8.ValidString(got) || !strings.HasSuffix(got, shared.Ellipsis) {
			t.Fatalf("limit %d: %q (%d bytes)", limit, got, len(got))
		}
		if strings.HasSuffix(strings.TrimSuffix(got, shared.Ellipsis), " ") {
			t.Fatalf("limit %d: %q keeps a trailing space", limit, got)
		}
	}
}
