package store

import (
	"regexp"
	"testing"
	"time"
)

var uuidV7 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestNewIDIsAUniqueUUIDv7(t *testing.T) {
	seen := map[string]bool{}
	for range 10000 {
		id := newID()
		if !uuidV7.MatchString(id) {
			t.Fatalf("%q is not a UUIDv7", id)
		}
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id] = true
	}
}

func TestIDsSortInCreationOrder(t *testing.T) {
	base := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	steps := []time.Duration{0, 300 * time.Microsecond, time.Millisecond, time.Second, 24 * time.Hour}
	prev := ""
	for _, d := range steps {
		id := formatUUIDv7(base.Add(d))
		if id <= prev {
			t.Fatalf("id %s at +%v does not sort after %s", id, d, prev)
		}
		prev = id
	}
	if got, want := formatUUIDv7(base)[:13], "01a2272d-2600"; got != want {
		t.Fatalf("timestamp prefix %s, want %s", got, want)
	}
}
