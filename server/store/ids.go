package store

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// newID returns a fresh UUIDv7 (RFC 9562) in its canonical text form. The
// first 48 bits are the Unix time in milliseconds and the next 12 bits the
// fraction of that millisecond (the RFC's method 3), so ids created one after
// another sort in creation order as text; the remaining 62 bits are random.
func newID() string {
	return formatUUIDv7(time.Now())
}

// formatUUIDv7 builds a UUIDv7 for the instant t.
func formatUUIDv7(t time.Time) string {
	var b [16]byte
	// crypto/rand.Read never fails: on an unusable entropy source the
	// runtime aborts the program instead of returning an error.
	_, _ = rand.Read(b[8:])

	ms := uint64(t.UnixMilli())
	b[0] = byte(ms >> 40)
	b[1] = byte(ms >> 32)
	b[2] = byte(ms >> 24)
	b[3] = byte(ms >> 16)
	b[4] = byte(ms >> 8)
	b[5] = byte(ms)

	// 12 bits of sub-millisecond precision, scaled from nanoseconds.
	frac := uint64(t.Nanosecond()%int(time.Millisecond)) << 12 / uint64(time.Millisecond)
	b[6] = 0x70 | byte(frac>>8) // version 7
	b[7] = byte(frac)
	b[8] = 0x80 | b[8]&0x3f // RFC 9562 variant

	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:36], b[10:16])
	return string(s[:])
}

// NewID returns a fresh id for a row a caller names before inserting it,
// so that a retried insert is idempotent (see NewMessage.ID).
func NewID() string { return newID() }
