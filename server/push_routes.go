package server

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// deviceScheme is the Authorization scheme of a push device's credential.
const deviceScheme = "HerdDevice "

// maxDecisionBytes bounds the body of a decision or a resubscription: a
// clarification's answer (64 KiB) and the ids, or a subscription.
const maxDecisionBytes = 80 << 10

// pushDecision answers POST /api/v1/push/decision: a notification's
// answer to one pending request, authenticated by the device's credential
// rather than the server token.
func (s *Server) pushDecision(c echo.Context) error {
	device, err := s.authenticateDevice(c)
	if err != nil {
		return s.writeError(c, err)
	}
	var req shared.PushDecisionRequest
	if err := decodeBody(c, &req); err != nil {
		return s.writeError(c, err)
	}
	out, err := s.attention.Decide(c.Request().Context(), s.sessions, device.PushDevice, req)
	if err != nil {
		return s.writeError(c, err)
	}
	return c.JSON(http.StatusOK, out)
}

// pushResubscribe answers POST /api/v1/push/resubscribe: the service
// worker's renewed subscription for the credential's device.
func (s *Server) pushResubscribe(c echo.Context) error {
	device, err := s.authenticateDevice(c)
	if err != nil {
		return s.writeError(c, err)
	}
	var req shared.PushResubscribeRequest
	if err := decodeBody(c, &req); err != nil {
		return s.writeError(c, err)
	}
	out, err := s.devices.Load().Resubscribe(c.Request().Context(), device, req)
	if err != nil {
		return s.writeError(c, err)
	}
	return c.JSON(http.StatusOK, out)
}

// authenticateDevice checks the request's device credential under the
// same per-client limit as wrong tokens: a blocked client's credential is
// not looked at, and a wrong one is charged to it.
func (s *Server) authenticateDevice(c echo.Context) (store.PushTarget, error) {
	r := c.Request()
	client := clientKey(r.RemoteAddr)
	if _, wait := s.authLimit.attempt(client, func() bool { return true }); wait > 0 {
		setRetryAfter(c, wait)
		return store.PushTarget{}, shared.Errorf(shared.CodeRateLimited, "%s", tooManyTries(wait))
	}
	credential, ok := strings.CutPrefix(r.Header.Get("Authorization"), deviceScheme)
	if !ok || credential == "" {
		return store.PushTarget{}, shared.Errorf(shared.CodeUnauthorized, "send the device's credential: Authorization: HerdDevice <credential>")
	}
	device, err := s.devices.Load().Authenticate(r.Context(), credential)
	if shared.ErrorCode(err) == shared.CodeUnauthorized {
		if _, wait := s.authLimit.attempt(client, func() bool { return false }); wait > 0 {
			setRetryAfter(c, wait)
			return store.PushTarget{}, shared.Errorf(shared.CodeRateLimited, "%s", tooManyTries(wait))
		}
	}
	return device, err
}

// decodeBody reads a bounded JSON body into v: a body too large is
// payload_too_large, one that is not the JSON of v bad_request.
func decodeBody(c echo.Context, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), c.Request().Body, maxDecisionBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return shared.Errorf(shared.CodePayloadTooLarge, "the body is larger than %d bytes", maxDecisionBytes)
	case err != nil:
		return shared.Errorf(shared.CodeBadRequest, "read the body: %v", err)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return shared.Errorf(shared.CodeBadRequest, "the body is not the expected JSON: %v", err)
	}
	return nil
}
