package shared_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/herd-dev/herd/shared"
)

// FuzzDecodeRequest checks DecodeRequest's contract on arbitrary frames: it
// never panics, accepts only a single JSON object that is a well-formed
// request, and rejects everything else with bad_request and an id safe to
// echo.
func FuzzDecodeRequest(f *testing.F) {
	for _, tc := range decodeRequestCases {
		f.Add([]byte(tc.frame))
	}
	for _, seed := range []string{
		`{"id":"c-1","type":"request","action":"task.list","payload":{"workspace_id":"w-1","limit":10},"seq":0,"ts":"2026-11-29T12:00:00Z"}`,
		`{"id":"\u00e9\ud83d\ude00","type":"request","action":"ping","payload":null}`,
		`{"id":"\ud800","type":"request","action":"ping"}`,
		`{"ID":"c-1","TYPE":"request","ACTION":"ping"}`,
		`{"id":"c-1","id":"c-2","type":"request","action":"ping"}`,
		`{"id":"c-1","type":"request","action":"ping","payload":[1,{"a":"b"}]}`,
		`{"id":"<c&1>","type":"request","action":"ping","payload":{"html":"<b>&amp;</b>","line":" "}}`,
		`{"id":"c-1","type":"request","action":"ping","seq":18446744073709551616}`,
		`{"id":"c-1","type":"request","action":"ping","ts":"yesterday"}`,
		`{"id":"c-1","type":"request","action":"ping","payload":`,
		`{"id":"c-1","type":"request","action":"ping"}` + "\x00",
		`{"id":"c-1","type":"request","action":"ping","payload":{"a\u0000":"\\u0000"}}`,
		"\xef\xbb\xbf" + `{"id":"c-1","type":"request","action":"ping"}`,
		`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[`,
	} {
		f.Add([]byte(seed))
	}

	f.Fuzz(func(t *testing.T, frame []byte) {
		env, err := shared.DecodeRequest(frame)
		if err != nil {
			var e *shared.Error
			if !errors.As(err, &e) || e.Code != shared.CodeBadRequest || e.Message == "" {
				t.Fatalf("DecodeRequest(%q) error = %#v, want a *shared.Error with code bad_request and a message", frame, err)
			}
			if len(env.ID) > shared.MaxIDBytes {
				t.Fatalf("DecodeRequest(%q) rejected with an id of %d bytes, too long to echo", frame, len(env.ID))
			}
			return
		}

		if n := len(env.ID); n < 1 || n > shared.MaxIDBytes {
			t.Fatalf("DecodeRequest(%q) accepted an id of %d bytes", frame, n)
		}
		if !utf8.ValidString(env.ID) {
			t.Fatalf("DecodeRequest(%q) accepted an id that is not UTF-8: %q", frame, env.ID)
		}
		if env.Type != shared.TypeRequest {
			t.Fatalf("DecodeRequest(%q) accepted type %q", frame, env.Type)
		}
		if env.Action == "" {
			t.Fatalf("DecodeRequest(%q) accepted an empty action", frame)
		}
		if !json.Valid(frame) {
			t.Fatalf("DecodeRequest(%q) accepted a frame that is not a single JSON value", frame)
		}
		var decoded any
		if err := json.Unmarshal(frame, &decoded); err != nil || holdsNUL(decoded) {
			t.Fatalf("DecodeRequest(%q) accepted a frame with a NUL character in a string (%v)", frame, err)
		}

		// An accepted request re-encodes to a frame that decodes the same.
		// HTML escaping would rewrite '<', '>' and '&' inside the payload.
		var again bytes.Buffer
		enc := json.NewEncoder(&again)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(env); err != nil {
			t.Fatalf("re-encode %+v: %v", env, err)
		}
		env2, err := shared.DecodeRequest(again.Bytes())
		if err != nil {
			t.Fatalf("DecodeRequest(%q) rejected the re-encoded form of %q: %v", again.Bytes(), frame, err)
		}
		if env2.ID != env.ID || env2.Action != env.Action || env2.Seq != env.Seq || !env2.TS.Equal(env.TS) ||
			!bytes.Equal(compact(t, env2.Payload), compact(t, env.Payload)) {
			t.Fatalf("round trip changed the envelope: %+v became %+v", env, env2)
		}
	})
}

// FuzzDecodePayload checks that DecodePayload never panics and reports every
// failure as bad_request, here with the richest request payload.
func FuzzDecodePayload(f *testing.F) {
	for _, seed := range []string{
		``,
		`null`,
		`{}`,
		`{"workspace_id":"w-1","title":"Fix login","description":"d","repositories":[{"path":"/src/app","base_branch":"main"}],"agent_profile_id":"claude","prompt":"go"}`,
		`{"repositories":null}`,
		`{"repositories":[{"path":7}]}`,
		`{"repositories":{"path":"/src"}}`,
		`{"title":["a"]}`,
		`{"title":"\ud800"}`,
		`{"title":"x","extra":{"deep":[[[[1]]]]}}`,
		`[]`,
		`"task"`,
		`{"title":`,
		"\u00a0null",
	} {
		f.Add([]byte(seed))
	}

	f.Fuzz(func(t *testing.T, raw []byte) {
		_, err := shared.DecodePayload[shared.TaskCreateRequest](raw)
		if err == nil {
			return
		}
		var e *shared.Error
		if !errors.As(err, &e) || e.Code != shared.CodeBadRequest || e.Message == "" {
			t.Fatalf("DecodePayload(%q) error = %#v, want a *shared.Error with code bad_request and a message", raw, err)
		}
	})
}

// holdsNUL reports whether a decoded JSON value has a NUL character in
// any string, key or value.
func holdsNUL(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.IndexByte(v, 0) >= 0
	case []any:
		for _, e := range v {
			if holdsNUL(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range v {
			if strings.IndexByte(k, 0) >= 0 || holdsNUL(e) {
				return true
			}
		}
	}
	return false
}

// compact returns raw without insignificant whitespace; nil stays nil.
func compact(tb testing.TB, raw json.RawMessage) []byte {
	tb.Helper()
	if raw == nil {
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		tb.Fatalf("compact %q: %v", raw, err)
	}
	return buf.Bytes()
}

// FuzzDecodeSessionFacts checks the client's decoding of the session fact
// notifications (session.info.updated, session.commands.updated) and of a
// task summary's cost: never a panic, every failure bad_request, and what
// decodes re-encodes to the same value.
func FuzzDecodeSessionFacts(f *testing.F) {
	for _, seed := range []string{
		`{"session_id":"s","task_id":"t","title":"Fix login","usage":{"used":84000,"size":200000,"cost":{"amount":0.42,"currency":"USD"}}}`,
		`{"session_id":"s","usage":{"used":1,"size":0}}`,
		`{"session_id":"s","usage":{"used":"1"}}`,
		`{"session_id":"s","usage":{"cost":{"amount":1e400}}}`,
		`{"session_id":"s","commands":[{"name":"debug","description":"Debug","hint":"[issue]"},{"name":"compact"}]}`,
		`{"session_id":"s","commands":null}`,
		`{"session_id":"s","commands":[{"name":7}]}`,
		`{"revision":3,"cost":[{"amount":0.5,"currency":"EUR"},{"amount":1,"currency":"USD"}]}`,
		`{"cost":{"amount":1}}`,
		`{"title":"\ud800"}`,
		`null`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		roundTrip(t, raw, shared.DecodePayload[shared.SessionInfoEvent])
		roundTrip(t, raw, shared.DecodePayload[shared.SessionCommandsEvent])
		roundTrip(t, raw, shared.DecodePayload[shared.TaskStatusSummary])
	})
}

// roundTrip decodes raw with decode and checks the contract of
// FuzzDecodeSessionFacts.
func roundTrip[T any](t *testing.T, raw []byte, decode func(json.RawMessage) (T, error)) {
	t.Helper()
	v, err := decode(raw)
	if err != nil {
		var e *shared.Error
		if !errors.As(err, &e) || e.Code != shared.CodeBadRequest || e.Message == "" {
			t.Fatalf("decode %q: error %#v, want bad_request with a message", raw, err)
		}
		return
	}
	again, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("re-encode %+v: %v", v, err)
	}
	v2, err := decode(again)
	if err != nil {
		t.Fatalf("decode of re-encoded %q: %v", again, err)
	}
	if third, _ := json.Marshal(v2); !bytes.Equal(third, again) {
		t.Fatalf("round trip changed %q into %q", again, third)
	}
}
