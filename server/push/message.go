package push

import (
	"crypto/sha256"
	"encoding/base64"
	"time"

	"github.com/herd-dev/herd/shared"
)

// Urgency is a push's Urgency header (RFC 8030 section 5.3): how readily
// the push service wakes a device on battery for it.
type Urgency string

// The urgencies of RFC 8030.
const (
	UrgencyVeryLow Urgency = "very-low"
	UrgencyLow     Urgency = "low"
	UrgencyNormal  Urgency = "normal"
	UrgencyHigh    Urgency = "high"
)

// Message is one push to send: the JSON the service worker receives and
// the headers that tell the push service how to keep it.
type Message struct {
	// Payload is encoded as JSON, at most shared.MaxPushPayloadBytes, its
	// SentAt stamped when each request is made.
	Payload shared.PushMessage
	// TTL is how long the push service keeps the message for a device
	// that is offline, counted from Send; herd stops retrying once it has
	// passed.
	TTL time.Duration
	// Urgency is the Urgency header; empty sends none (normal).
	Urgency Urgency
	// Topic makes the push service replace an undelivered message of the
	// same topic; empty sends none.
	Topic string
}

// kindHeaders are the TTL and Urgency the protocol gives each kind.
var kindHeaders = map[shared.PushKind]struct {
	ttl     time.Duration
	urgency Urgency
}{
	shared.PushPermission:    {12 * time.Hour, UrgencyHigh},
	shared.PushClarification: {12 * time.Hour, UrgencyHigh},
	shared.PushClose:         {12 * time.Hour, UrgencyNormal},
	shared.PushError:         {time.Hour, UrgencyNormal},
	shared.PushTurn:          {10 * time.Minute, UrgencyLow},
	shared.PushPullRequest:   {time.Hour, UrgencyNormal},
	shared.PushTest:          {10 * time.Minute, UrgencyNormal},
}

// defaultTTL is the TTL of a kind the table does not know.
const defaultTTL = 10 * time.Minute

// NewMessage returns a Message of p with the TTL and Urgency the protocol
// gives its kind and the Topic of its task (none without a task).
func NewMessage(p shared.PushMessage) Message {
	h, ok := kindHeaders[p.Kind]
	if !ok {
		h.ttl, h.urgency = defaultTTL, UrgencyNormal
	}
	m := Message{Payload: p, TTL: h.ttl, Urgency: h.urgency}
	if p.TaskID != "" {
		m.Topic = Topic(p.TaskID)
	}
	return m
}

// Topic returns the Topic header of a task's pushes: the unpadded
// base64url of the first 16 bytes of the SHA-256 of its id, 22
// characters, so that any id fits the header's 32 URL-safe characters
// and names the task without showing it to the push service.
func Topic(taskID string) string {
	sum := sha256.Sum256([]byte(taskID))
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}
