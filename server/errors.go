package server

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/herd-dev/herd/shared"
)

// httpStatus maps a protocol error code to its HTTP status. It is the one
// place where codes meet HTTP.
func httpStatus(code shared.Code) int {
	switch code {
	case shared.CodeBadRequest:
		return http.StatusBadRequest
	case shared.CodeUnknownAction, shared.CodeNotFound:
		return http.StatusNotFound
	case shared.CodeUnauthorized:
		return http.StatusUnauthorized
	case shared.CodeForbidden:
		return http.StatusForbidden
	case shared.CodeConflict, shared.CodePromptInProgress, shared.CodeNotPromptable:
		return http.StatusConflict
	case shared.CodePayloadTooLarge:
		return http.StatusRequestEntityTooLarge
	case shared.CodeRateLimited:
		return http.StatusTooManyRequests
	case shared.CodeUnavailable:
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// writeError answers an API request with a coded JSON error. Errors without
// a protocol code are logged once here and hidden from the client.
func (s *Server) writeError(c echo.Context, err error) error {
	var pe *shared.Error
	if !errors.As(err, &pe) {
		var he *echo.HTTPError
		if errors.As(err, &he) {
			return c.JSON(he.Code, shared.Errorf(codeForStatus(he.Code), "%v", he.Message))
		}
		s.log.Error("api request failed", "path", c.Path(), "err", err)
		pe = shared.Errorf(shared.CodeInternal, "internal error; the server log has details")
	}
	return c.JSON(httpStatus(pe.Code), pe)
}

// codeForStatus maps echo's own HTTP errors (404 route, 405) to codes.
func codeForStatus(status int) shared.Code {
	switch status {
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		return shared.CodeNotFound
	case http.StatusUnauthorized:
		return shared.CodeUnauthorized
	case http.StatusRequestEntityTooLarge:
		return shared.CodePayloadTooLarge
	case http.StatusTooManyRequests:
		return shared.CodeRateLimited
	case http.StatusServiceUnavailable:
		return shared.CodeUnavailable
	case http.StatusBadRequest:
		return shared.CodeBadRequest
	default:
		return shared.CodeInternal
	}
}
