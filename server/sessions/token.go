package sessions

import "crypto/rand"

// newToken returns a random identifier for pending requests and dispatch
// claims: 26 base32 characters, 130 random bits.
func newToken() string { return rand.Text() }
