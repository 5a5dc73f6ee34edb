package sessions

import (
	"crypto/rand"
	"encoding/hex"
)

// newToken returns a random identifier for pending requests and dispatch
// claims.
func newToken() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
