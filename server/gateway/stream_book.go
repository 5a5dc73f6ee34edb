package gateway

import (
	"encoding/json"
	"slices"
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

// sentState is what the connection holds of a message: the content and
// the body of each tool content part it was sent last (references to the
// strings the hub already holds, not copies).
type sentState struct {
	content string
	parts   []string
}

// streamBook is the writer's record of what it sent a connection of each
// message that is not final yet. Only the writer goroutine uses it. A
// session.message.updated of a message the connection holds a prefix of
// goes out as an append delta: append_from is that prefix's length and
// content only the bytes after it; a tool call's content part whose body
// extends the one sent does the same with its own append_from. That holds
// for intermediate states and for the final one, so each byte of a
// streamed message crosses the wire once. A client holding exactly
// append_from bytes appends; any other client fetches the message
// (PROTOCOL.md, "Append deltas").
type streamBook struct {
	streams map[string]uint64               // session → the subscription recorded
	sent    map[string]map[string]sentState // session → message → what it holds
}

func newStreamBook() *streamBook {
	return &streamBook{streams: make(map[string]uint64), sent: make(map[string]map[string]sentState)}
}

// frame returns the bytes to write for e, updating the record.
func (b *streamBook) frame(e entry) ([]byte, error) {
	m := e.msg
	if m == nil {
		return e.frame, nil
	}
	sent := b.session(m)
	held, ok := sent[m.msg.ID]
	if isFinal(m.msg.Status) {
		delete(sent, m.msg.ID) // nothing follows a final state
	} else {
		sent[m.msg.ID] = sentState{content: m.msg.Content, parts: bodies(m.msg)}
	}
	msg := m.msg
	delta := false
	if ok && m.action == shared.NotifySessionMessageUpdated {
		// A prefix is checked, not assumed: a tool call's title is its
		// content and may change entirely, and a final text need not
		// extend the streamed one.
		if held.content != "" && strings.HasPrefix(msg.Content, held.content) {
			from := len(held.content)
			msg.Content = msg.Content[from:]
			msg.AppendFrom = &from
			delta = true
		}
		if partsDelta(&msg, held.parts) {
			delta = true
		}
	}
	if !delta && e.frame != nil {
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

// partsDelta cuts each tool content part of msg whose body extends the
// one held to the bytes after it, on a copy of the metadata (the message
// is shared by every connection). It reports whether any part was cut.
func partsDelta(msg *shared.Message, held []string) bool {
	if msg.Metadata == nil || len(held) == 0 {
		return false
	}
	var parts []shared.ToolContent
	for i, p := range msg.Metadata.Content {
		if i >= len(held) || held[i] == "" || !strings.HasPrefix(p.Body, held[i]) {
			continue
		}
		if parts == nil {
			parts = slices.Clone(msg.Metadata.Content)
		}
		from := len(held[i])
		parts[i].Body = p.Body[from:]
		parts[i].AppendFrom = &from
	}
	if parts == nil {
		return false
	}
	meta := *msg.Metadata
	meta.Content = parts
	msg.Metadata = &meta
	return true
}

// bodies returns the bodies of a message's tool content parts.
func bodies(m shared.Message) []string {
	if m.Metadata == nil || len(m.Metadata.Content) == 0 {
		return nil
	}
	out := make([]string, len(m.Metadata.Content))
	for i, p := range m.Metadata.Content {
		out[i] = p.Body
	}
	return out
}

// isFinal reports whether a message state is one nothing follows.
func isFinal(s shared.MessageState) bool {
	return s != shared.MessageStreaming && s != shared.MessagePending
}

// session returns the record of m's session for m's subscription.
func (b *streamBook) session(m *messageFrame) map[string]sentState {
	sent := b.sent[m.session]
	if sent == nil || b.streams[m.session] != m.stream || len(sent) >= maxBookedMessages {
		sent = make(map[string]sentState)
		b.sent[m.session] = sent
		b.streams[m.session] = m.stream
	}
	return sent
}
