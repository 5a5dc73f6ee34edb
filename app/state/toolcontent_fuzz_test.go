package state

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/herd-dev/herd/shared"
)

// FuzzCompletedMessage feeds a held copy and an update, as decoded from
// the wire, to the completion of append deltas: it never panics, and a
// completed update holds no delta and starts with the held bytes it
// named.
func FuzzCompletedMessage(f *testing.F) {
	for _, seed := range [][2]string{
		{`{"id":"m","content":"Hel"}`, `{"id":"m","content":"lo","append_from":3}`},
		{`{"id":"m","content":"Hel"}`, `{"id":"m","content":"lo","append_from":-1}`},
		{`{"id":"m","content":"Hel"}`, `{"id":"m","content":"lo","append_from":9}`},
		{`{"id":"m","metadata":{"content":[{"type":"text","body":"a\n"}]}}`, `{"id":"m","metadata":{"content":[{"type":"text","body":"b\n","append_from":2}]}}`},
		{`{"id":"m","metadata":{"content":[{"type":"text","body":"a\n"}]}}`, `{"id":"m","metadata":{"content":[{"body":"b","append_from":-3}]}}`},
		{`{"id":"m"}`, `{"id":"m","metadata":{"content":[{},{"body":"x","append_from":0}]}}`},
	} {
		f.Add([]byte(seed[0]), []byte(seed[1]))
	}
	f.Fuzz(func(t *testing.T, baseRaw, updateRaw []byte) {
		var base, update shared.Message
		had := json.Unmarshal(baseRaw, &base) == nil
		if json.Unmarshal(updateRaw, &update) != nil || !partial(update) {
			return
		}
		m, ok := completed(base, had, update)
		if !ok {
			return
		}
		if partial(m) {
			t.Fatalf("completed %+v still holds a delta", m)
		}
		if from := update.AppendFrom; from != nil && !strings.HasPrefix(m.Content, base.Content[:*from]) {
			t.Fatalf("content %q does not start with the held %q", m.Content, base.Content[:*from])
		}
		if update.Metadata != nil && m.Metadata == update.Metadata {
			t.Fatal("the update's metadata was completed in place")
		}
	})
}
