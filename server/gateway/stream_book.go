package gateway

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/herd-dev/herd/shared"
)

// maxBookedMessages bounds the streaming messages the writer remembers per
// session; past it the session's record starts over, and its next updates
// go out whole.
const maxBookedMessages = 64

// messageFrame is a session notification about one message, with what the
// writer needs to send it: for a replaceable state, everything to encode
// the envelope then; for a semantic one, the message to record and, when
// the connection already holds a prefix of it, to send as a delta instead.
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
// streaming message: the content it sent last (a reference to the string
// the hub already holds, not a copy). Only the writer goroutine uses it.
// A session.message.updated of a message the connection holds a prefix of
// goes out as an append delta: append_from is that prefix's length and
// content only the bytes after it. That holds for intermediate states and
// for the final one, so each byte of a streamed message crosses the wire
// once. A client holding exactly append_from bytes appends; any other
// client fetches the message (PROTOCOL.md, "Append deltas").
type streamBook struct {
	streams map[string]uint64            // session → the subscription recorded
	sent    map[string]map[string]string // session → message → content sent
}

func newStreamBook() *streamBook {
	return &streamBook{streams: make(map[string]uint64), sent: make(map[string]map[string]string)}
}

// frame returns the bytes to write for e, updating the record.
func (b *streamBook) frame(e entry) ([]byte, error) {
	m := e.msg
	if m == nil {
		return e.frame, nil
	}
	sent := b.session(m)
	held, ok := sent[m.msg.ID]
	if m.msg.Status == shared.MessageStreaming {
		sent[m.msg.ID] = m.msg.Content
	} else {
		// The final state ends the record: nothing follows it.
		delete(sent, m.msg.ID)
	}
	msg := m.msg
	// Streaming text only grows, so an intermediate state extends what
	// was sent; a semantic state is checked, because the final content
	// may differ from the streamed text (a stream cut off and stored as
	// far as it got is still a prefix, but nothing promises it).
	extends := ok && held != "" && len(held) <= len(msg.Content) &&
		(e.frame == nil || strings.HasPrefix(msg.Content, held))
	if extends && m.action == shared.NotifySessionMessageUpdated {
		from := len(held)
		msg.Content = msg.Content[from:]
		msg.AppendFrom = &from
	} else if e.frame != nil {
		return e.frame, nil // a semantic frame goes whole, as encoded
	}
	payload, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	return json.Marshal(shared.Envelope{
		Type: shared.TypeNotification, Action: m.action, Payload: payload, Seq: m.seq, TS: m.ts,
	})
}

// session returns the record of m's session for m's subscription.
func (b *streamBook) session(m *messageFrame) map[string]string {
	sent := b.sent[m.session]
	if sent == nil || b.streams[m.session] != m.stream || len(sent) >= maxBookedMessages {
		sent = make(map[string]string)
		b.sent[m.session] = sent
		b.streams[m.session] = m.stream
	}
	return sent
}
