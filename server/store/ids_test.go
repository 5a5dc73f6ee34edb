package store

import (
	"regexp"
	"testing"
)

var uuidV7 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// Ids made back to back, as fast as the process can, are UUIDv7s that
// each sort after the one before as text: the store orders rows by id.
// Many fall within one millisecond, and within one 4096th of it.
func TestIDsAreUUIDv7sThatSortInCreationOrder(t *testing.T) {
	ids := make([]string, 100000)
	for i := range ids {
		ids[i] = NewID()
	}
	for i, id := range ids {
		if !uuidV7.MatchString(id) {
			t.Fatalf("%q is not a UUIDv7", id)
		}
		if i > 0 && id <= ids[i-1] {
			t.Fatalf("id %d %s does not sort after the one before, %s", i, id, ids[i-1])
		}
	}
}
