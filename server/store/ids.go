package store

import "github.com/google/uuid"

// NewID returns a fresh id in the form the store gives its rows: for rows
// a caller names before inserting, so a retried insert is idempotent.
//
// Ids are UUIDv7 (RFC 9562) in canonical text form: the Unix time in
// milliseconds, then a 12-bit sequence that uuid.NewV7 steps on whenever
// the clock has not moved on since the last id (or went back), then 62
// random bits. So ids created one after another in a process sort in
// creation order as text, even within one millisecond.
func NewID() string {
	// NewV7 fails only when crypto/rand does, and crypto/rand never
	// returns an error: on an unusable entropy source the runtime aborts
	// the program instead.
	return uuid.Must(uuid.NewV7()).String()
}
