package state

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestDraftsAreKeptPerTask(t *testing.T) {
	kv := MapKV{}
	d := NewDrafts(kv)
	d.Set("a", "half a thought")
	d.Set("b", "another")
	assert.Equal(t, "half a thought", NewDrafts(kv).Get("a"), "a reload reads the same storage")
	assert.Equal(t, "another", d.Get("b"))

	d.Set("a", "")
	assert.Empty(t, d.Get("a"))
	assert.Len(t, kv, 1, "an empty draft is deleted, not kept")
}

func TestALongDraftIsCutOnARuneBoundary(t *testing.T) {
	d := NewDrafts(MapKV{})
	d.Set("a", "x"+strings.Repeat("é", MaxDraftBytes))
	got := d.Get("a")
	assert.LessOrEqual(t, len(got), MaxDraftBytes)
	assert.True(t, utf8.ValidString(got))
}
