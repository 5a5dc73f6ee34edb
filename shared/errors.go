package shared

import (
	"errors"
	"fmt"
)

// Code is a protocol error code, carried in an error envelope's payload.
type Code string

// Error codes.
const (
	CodeBadRequest       Code = "bad_request"
	CodeUnknownAction    Code = "unknown_action"
	CodeUnauthorized     Code = "unauthorized"
	CodeForbidden        Code = "forbidden"
	CodeNotFound         Code = "not_found"
	CodeConflict         Code = "conflict"
	CodeNotPromptable    Code = "not_promptable"
	CodePromptInProgress Code = "prompt_in_progress"
	CodePayloadTooLarge  Code = "payload_too_large"
	CodeRateLimited      Code = "rate_limited"
	CodeUnavailable      Code = "unavailable"
	CodeInternal         Code = "internal"
)

// Error is a coded error a person can act on. It is both the payload of an
// error envelope and a Go error, so the server returns it from deep inside
// and the client receives the same type.
type Error struct {
	// Code is the machine-readable error class.
	Code Code `json:"code"`
	// Message says what went wrong in words a person can act on.
	Message string `json:"message"`
	// Details carries optional structured context (such as the offending field).
	Details map[string]any `json:"details,omitempty"`
}

// Error implements error.
func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Errorf builds an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, or
// CodeInternal when there is none.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}
