package shared

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"time"
	"unicode/utf8"
)

// MaxFrameBytes is the default largest frame the server accepts. A larger
// frame closes the connection with status 1009 (message too big).
const MaxFrameBytes = 1 << 20

// MaxIDBytes bounds the client-chosen request id.
const MaxIDBytes = 64

// Type says what an envelope is.
type Type string

// Envelope types.
const (
	TypeRequest      Type = "request"
	TypeResponse     Type = "response"
	TypeError        Type = "error"
	TypeNotification Type = "notification"
)

// Envelope is one WebSocket text frame.
type Envelope struct {
	// ID is chosen by the client on a request (1–64 bytes) and echoed on its
	// response or error. Notifications have none.
	ID string `json:"id,omitempty"`
	// Type is request, response, error or notification.
	Type Type `json:"type"`
	// Action names the request or notification, such as "task.create".
	Action string `json:"action"`
	// Payload is the action's body; absent means an empty object.
	Payload json.RawMessage `json:"payload,omitempty"`
	// Seq numbers session-scoped notifications per connection and session
	// (see docs/protocol.md, "Gap detection"); zero elsewhere.
	Seq uint64 `json:"seq,omitempty"`
	// TS is when the server sent the frame; zero on client requests.
	TS time.Time `json:"ts,omitzero"`
}

// DecodeRequest parses one client frame. It rejects frames that are not
// valid UTF-8, not a JSON object, not a request, that lack a valid id or
// action, or whose strings hold a NUL character (\u0000, which PostgreSQL
// cannot store, so no database behaves differently), returning an *Error
// with code bad_request. On error the returned
// envelope still carries whatever id could be read, so the error can be
// correlated.
func DecodeRequest(frame []byte) (Envelope, error) {
	if !utf8.Valid(frame) {
		return Envelope{}, Errorf(CodeBadRequest, "frame is not valid UTF-8")
	}
	var env Envelope
	dec := json.NewDecoder(bytes.NewReader(frame))
	if err := dec.Decode(&env); err != nil {
		// A field of the wrong JSON type does not stop decoding, so the id
		// may still have been read and can correlate the error.
		var typeErr *json.UnmarshalTypeError
		if !errors.As(err, &typeErr) || len(env.ID) > MaxIDBytes {
			env.ID = ""
		}
		return Envelope{ID: env.ID}, Errorf(CodeBadRequest, "frame is not a JSON envelope: %s", jsonProblem(err))
	}
	// Decoder.More reports false before a stray '}' or ']', so demand the
	// end of the input instead.
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Envelope{}, Errorf(CodeBadRequest, "frame holds more than one JSON value")
	}
	id := env.ID
	if len(id) > MaxIDBytes {
		id = ""
	}
	switch {
	case env.ID == "":
		return Envelope{Action: env.Action}, Errorf(CodeBadRequest, "request id is missing")
	case len(env.ID) > MaxIDBytes:
		return Envelope{Action: env.Action}, Errorf(CodeBadRequest, "request id is longer than %d bytes", MaxIDBytes)
	case env.Type != TypeRequest:
		return Envelope{ID: id, Action: env.Action}, Errorf(CodeBadRequest, "type must be %q, got %q", TypeRequest, env.Type)
	case env.Action == "":
		return Envelope{ID: id}, Errorf(CodeBadRequest, "action is missing")
	case hasNULEscape(frame):
		return Envelope{ID: id, Action: env.Action}, Errorf(CodeBadRequest, "strings must not contain the NUL character (\\u0000)")
	}
	return env, nil
}

// hasNULEscape reports whether a valid JSON text has a \u0000 escape in a
// string. A raw NUL cannot appear in valid JSON, and a backslash only
// inside strings, so each escape is read as a pair without tracking
// strings.
func hasNULEscape(frame []byte) bool {
	for i := 0; i < len(frame); i += 2 { // past the backslash and the escaped character
		j := bytes.IndexByte(frame[i:], '\\')
		if j < 0 {
			return false
		}
		i += j
		if i+6 <= len(frame) && frame[i+1] == 'u' && string(frame[i+2:i+6]) == "0000" {
			return true
		}
	}
	return false
}

// DecodePayload unmarshals a request payload into T. An absent or null
// payload yields T's zero value. Unknown fields are ignored; a field of the
// wrong JSON type is a bad_request naming the field.
func DecodePayload[T any](raw json.RawMessage) (T, error) {
	var v T
	trimmed := bytes.Trim(raw, " \t\r\n")
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return v, nil
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, Errorf(CodeBadRequest, "invalid payload: %s", jsonProblem(err))
	}
	return v, nil
}

// jsonProblem turns a decoding error into a short, user-facing description.
func jsonProblem(err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		if typeErr.Field != "" {
			return fmt.Sprintf("field %q must be %s, got %s", typeErr.Field, jsonKind(typeErr.Type), typeErr.Value)
		}
		return fmt.Sprintf("expected %s, got %s", jsonKind(typeErr.Type), typeErr.Value)
	}
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) {
		return fmt.Sprintf("malformed JSON at byte %d", syntaxErr.Offset)
	}
	return err.Error()
}

// jsonKind names the JSON kind a Go type decodes from, for error messages.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "a JSON object"
	case reflect.Slice, reflect.Array:
		return "a JSON array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	default:
		return t.String()
	}
}

// NewResponse builds the response envelope for a request.
func NewResponse(id, action string, payload any, now time.Time) (Envelope, error) {
	raw, err := json.Marshal(payload)
	if err != nil {
		return Envelope{}, fmt.Errorf("encode %s response: %w", action, err)
	}
	return Envelope{ID: id, Type: TypeResponse, Action: action, Payload: raw, TS: now.UTC()}, nil
}

// NewErrorEnvelope builds the error envelope answering a request.
func NewErrorEnvelope(id, action string, e *Error, now time.Time) Envelope {
	raw, err := json.Marshal(e)
	if err != nil {
		raw = []byte(`{"code":"internal","message":"error could not be encoded"}`)
	}
	return Envelope{ID: id, Type: TypeError, Action: action, Payload: raw, TS: now.UTC()}
}

// NewNotification builds a notification envelope.
func NewNotification(action string, payload any, now time.Time) (Envelope, error) {
	raw, err := json.Marshal(payload)
	if err != nil {
		return Envelope{}, fmt.Errorf("encode %s notification: %w", action, err)
	}
	return Envelope{Type: TypeNotification, Action: action, Payload: raw, TS: now.UTC()}, nil
}
