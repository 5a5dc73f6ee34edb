package gateway

import (
	"encoding/json"
	"time"

	"github.com/herd-dev/herd/shared"
)

// maxBookedMessages bounds the streaming messages the writer remembers per
// session; past it the session's record starts over, and its next updates
// go out whole.
const maxBookedMessages = 64

// messageFrame is a session notification about one message, with what the
// writer needs to send it: for a replaceable state, everything to encode
// the envelope then; for a semantic one, the message to record.
type messageFrame struct {
	session string
	// stream identifies the connection's subscription to the session; a
	// new subscription starts a new record.
	stream uint64
	action string
	seq    uint64
	ts     time.Time
	msg    shared.Message
}

// streamBook is the writer's record of what it sent a connection of each
// streaming message: the content's length in bytes. Only the writer
// goroutine uses it. A replaceable state of a message the connection
// already has a prefix of goes out as an append delta: append_from is
// that length and content only the bytes after it. Streaming text only
// grows, so a client holding exactly append_from bytes appends; any other
// client fetches the message (PROTOCOL.md, "Append deltas").
type streamBook struct {
	streams map[string]uint64         // session → the subscription recorded
	sent    map[string]map[string]int // session → message → bytes sent
}

func newStreamBook() *streamBook {
	return &streamBook{streams: make(map[string]uint64), sent: make(map[string]map[string]int)}
}

// frame returns the bytes to write for e, updating the record.
func (b *streamBook) frame(e entry) ([]byte, error) {
	m := e.msg
	if m == nil {
		return e.frame, nil
	}
	sent := b.session(m)
	if e.frame != nil {
		// A semantic frame: the message's first or final state, whole.
		if m.msg.Status == shared.MessageStreaming {
			sent[m.msg.ID] = len(m.msg.Content)
		} else {
			delete(sent, m.msg.ID)
		}
		return e.frame, nil
	}
	msg := m.msg
	if from, ok := sent[msg.ID]; ok && from > 0 && from <= len(msg.Content) {
		msg.Content = msg.Content[from:]
		msg.AppendFrom = &from
	}
	sent[m.msg.ID] = len(m.msg.Content)
	payload, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	return json.Marshal(shared.Envelope{
		Type: shared.TypeNotification, Action: m.action, Payload: payload, Seq: m.seq, TS: m.ts,
	})
}

// session returns the record of m's session for m's subscription.
func (b *streamBook) session(m *messageFrame) map[string]int {
	sent := b.sent[m.session]
	if sent == nil || b.streams[m.session] != m.stream || len(sent) >= maxBookedMessages {
		sent = make(map[string]int)
		b.sent[m.session] = sent
		b.streams[m.session] = m.stream
	}
	return sent
}
