package state

import (
	"encoding/json"
	"slices"

	"github.com/herd-dev/herd/shared"
)

// KV is the small persistent key-value store the outbox keeps unconfirmed
// prompts in: localStorage in the browser, a map in tests.
type KV interface {
	Get(key string) (string, bool)
	Set(key, value string)
	Delete(key string)
}

// MapKV is a KV in memory.
type MapKV map[string]string

// Get implements KV.
func (m MapKV) Get(k string) (string, bool) { v, ok := m[k]; return v, ok }

// Set implements KV.
func (m MapKV) Set(k, v string) { m[k] = v }

// Delete implements KV.
func (m MapKV) Delete(k string) { delete(m, k) }

// SendStatus is where an outgoing prompt is until the server confirms it.
type SendStatus string

// Send statuses. The values double as the data-status of the pending
// message in the transcript.
const (
	// SendSending: message.add is in flight.
	SendSending SendStatus = "sending"
	// SendUnconfirmed: the connection dropped or timed out before the
	// answer; the prompt is re-sent with the same id after reconnecting.
	SendUnconfirmed SendStatus = "unconfirmed"
	// SendUnknown: bounded reconciliation failed; whether the server has
	// the prompt is unknown until the person retries or discards it.
	SendUnknown SendStatus = "unknown"
	// SendFailed: the server refused the prompt (Err says why).
	SendFailed SendStatus = "failed"
)

// MaxSendAttempts bounds how often an unconfirmed prompt is sent before it
// is shown as of unknown outcome.
const MaxSendAttempts = 3

// Send is one prompt the server has not confirmed yet.
type Send struct {
	ClientMessageID string `json:"client_message_id"`
	Content         string `json:"content"`
	// Attachments go with the prompt and are kept with it, so a retry
	// after a reload sends them too.
	Attachments []shared.Attachment `json:"attachments,omitempty"`
	Status      SendStatus          `json:"-"`
	// Attempts counts the sends whose outcome is uncertain.
	Attempts int `json:"-"`
	// Err is the server's refusal, for SendFailed.
	Err string `json:"-"`
}

// Outbox holds one session's unconfirmed prompts. Every send gets a fresh
// client_message_id, kept with its text in the KV until the server
// confirms it, so a retry (manual, or after a reconnect, or after a page
// reload) reuses the id and message.add's idempotency keeps it from
// running twice. Like Store it belongs to the UI goroutine.
type Outbox struct {
	kv    KV
	key   string
	newID func() string
	sends []*Send
}

// NewOutbox returns the outbox of a session, restoring prompts a previous
// page left unconfirmed (as unconfirmed: the next Reconcile re-sends them).
func NewOutbox(kv KV, sessionID string, newID func() string) *Outbox {
	o := &Outbox{kv: kv, key: "herd.outbox." + sessionID, newID: newID}
	if raw, ok := kv.Get(o.key); ok {
		var saved []*Send
		if json.Unmarshal([]byte(raw), &saved) == nil {
			for _, s := range saved {
				if s.ClientMessageID != "" {
					s.Status = SendUnconfirmed
					o.sends = append(o.sends, s)
				}
			}
		}
	}
	return o
}

// Sends returns the unconfirmed prompts, oldest first, as copies.
func (o *Outbox) Sends() []Send {
	out := make([]Send, len(o.sends))
	for i, s := range o.sends {
		out[i] = *s
	}
	return out
}

// Add records a new prompt with a fresh client_message_id and returns it
// for sending.
func (o *Outbox) Add(content string, attachments ...shared.Attachment) Send {
	s := &Send{ClientMessageID: o.newID(), Content: content, Attachments: attachments, Status: SendSending}
	o.sends = append(o.sends, s)
	o.save()
	return *s
}

// Confirmed forgets a prompt the server answered for (any outcome,
// including duplicate), or one that appeared in the transcript.
func (o *Outbox) Confirmed(id string) {
	n := len(o.sends)
	o.sends = slices.DeleteFunc(o.sends, func(s *Send) bool { return s.ClientMessageID == id })
	if len(o.sends) != n {
		o.save()
	}
}

// Refused records the server's definitive refusal of a prompt; it stays
// (with its text) so the person can retry or discard it.
func (o *Outbox) Refused(id, reason string) {
	if s := o.find(id); s != nil {
		s.Status, s.Err = SendFailed, reason
	}
}

// Uncertain records a send whose answer was lost (timeout, dropped
// connection): the prompt is shown unconfirmed and re-sent by Reconcile;
// after MaxSendAttempts uncertain sends it is of unknown outcome.
// sent is false when the request never left (not connected); that does
// not count as an attempt.
func (o *Outbox) Uncertain(id string, sent bool) {
	s := o.find(id)
	if s == nil {
		return
	}
	if sent {
		s.Attempts++
	}
	s.Status = SendUnconfirmed
	if s.Attempts >= MaxSendAttempts {
		s.Status = SendUnknown
	}
}

// Reconcile returns the prompts to send again after a (re)connect, with
// their original ids, and marks them sending.
func (o *Outbox) Reconcile() []Send {
	var out []Send
	for _, s := range o.sends {
		if s.Status == SendUnconfirmed {
			s.Status = SendSending
			out = append(out, *s)
		}
	}
	return out
}

// Retry is the person's retry of a failed or unknown prompt: it is sent
// again with the same id and a fresh attempt budget.
func (o *Outbox) Retry(id string) (Send, bool) {
	s := o.find(id)
	if s == nil || s.Status == SendSending {
		return Send{}, false
	}
	s.Status, s.Err, s.Attempts = SendSending, "", 0
	return *s, true
}

// Discard forgets a prompt the person gave up on.
func (o *Outbox) Discard(id string) { o.Confirmed(id) }

func (o *Outbox) find(id string) *Send {
	for _, s := range o.sends {
		if s.ClientMessageID == id {
			return s
		}
	}
	return nil
}

// save writes the prompts' ids and texts to the KV.
func (o *Outbox) save() {
	if len(o.sends) == 0 {
		o.kv.Delete(o.key)
		return
	}
	raw, err := json.Marshal(o.sends)
	if err != nil {
		return
	}
	o.kv.Set(o.key, string(raw))
}

// Promptable reports whether a session in state st takes prompts.
func Promptable(st shared.SessionState) bool {
	switch st {
	case shared.SessionCreated, shared.SessionStarting, shared.SessionFailed, shared.SessionCancelled, "":
		return false
	}
	return true
}
