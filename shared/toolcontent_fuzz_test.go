package shared_test

import (
	"errors"
	"testing"

	"github.com/herd-dev/herd/shared"
)

// FuzzToolContentGetRequest checks the decoding and validation of
// message.tool_content.get: never a panic, every failure bad_request, and
// an accepted request names a message and asks for a page in bounds.
func FuzzToolContentGetRequest(f *testing.F) {
	for _, seed := range []string{
		`{"session_id":"s-1","message_id":"m-1","part":0,"offset":0}`,
		`{"session_id":"s-1","message_id":"m-1","part":2,"offset":65536,"limit":65536}`,
		`{"session_id":"s-1","message_id":"m-1","part":-1}`,
		`{"session_id":"s-1","message_id":"m-1","offset":-5}`,
		`{"session_id":"s-1","message_id":"m-1","limit":65537}`,
		`{"session_id":"s-1","message_id":"m-1","part":"0"}`,
		`{"session_id":"s-1","message_id":"m-1","part":1.5}`,
		`{"session_id":"s-1","message_id":"m-1","offset":9223372036854775808}`,
		`{"message_id":"m-1"}`,
		`{"session_id":"","message_id":""}`,
		`null`,
		`[]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		req, err := shared.DecodePayload[shared.ToolContentGetRequest](raw)
		if err == nil {
			err = req.Validate()
		}
		if err != nil {
			var e *shared.Error
			if !errors.As(err, &e) || e.Code != shared.CodeBadRequest || e.Message == "" {
				t.Fatalf("%q: error %#v, want bad_request with a message", raw, err)
			}
			return
		}
		if req.SessionID == "" || req.MessageID == "" || req.Part < 0 || req.Offset < 0 || req.Limit < 0 || req.Limit > shared.ToolPageBytes {
			t.Fatalf("%q: accepted %+v", raw, req)
		}
	})
}
