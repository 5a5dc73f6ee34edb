package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/herd-dev/herd/shared"
)

// tokenCookie carries the access token for browsers, which cannot set an
// Authorization header on a WebSocket upgrade.
const tokenCookie = "herd_token"

// access is the verdict on the token a request presents.
type access struct {
	// granted: the token is right, or the server has none.
	granted bool
	// wrongCookie: the token came in a cookie and was wrong, so the
	// cookie is cleared rather than sent again with every request.
	wrongCookie bool
	// wait, when positive, is how long the client is blocked for having
	// failed too often; its token was not looked at.
	wait time.Duration
}

// authenticate judges the request's token under the per-client limit on
// failed attempts. The Bearer header wins over the cookie.
func (s *Server) authenticate(r *http.Request) access {
	if s.cfg.Token == "" {
		return access{granted: true}
	}
	token, fromCookie := "", false
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		token = strings.TrimPrefix(h, "Bearer ")
	} else if ck, err := r.Cookie(tokenCookie); err == nil {
		token, fromCookie = ck.Value, true
	} else {
		return access{} // no token, no try spent
	}
	right, wait := s.checkToken(r, token)
	return access{granted: right, wrongCookie: fromCookie && !right && wait == 0, wait: wait}
}

// checkToken compares a presented token with the configured one, charging
// a wrong one to the request's client. The comparison is of digests in
// constant time, so that not even the token's length shows in its timing.
func (s *Server) checkToken(r *http.Request, token string) (right bool, wait time.Duration) {
	return s.authLimit.attempt(clientKey(r.RemoteAddr), func() bool {
		got := sha256.Sum256([]byte(token))
		return subtle.ConstantTimeCompare(got[:], s.tokenDigest[:]) == 1
	})
}

// requireToken refuses API, WebSocket and metrics requests without the
// right token.
func (s *Server) requireToken(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		a := s.authenticate(c.Request())
		switch {
		case a.granted:
			return next(c)
		case a.wait > 0:
			return rateLimited(c, a.wait)
		}
		if a.wrongCookie {
			clearTokenCookie(c)
		}
		return c.JSON(http.StatusUnauthorized, shared.Errorf(shared.CodeUnauthorized,
			"a token is required: send Authorization: Bearer <token> or log in at /login"))
	}
}

// redirectToLogin guards the web app's pages, which the server renders
// with data: without the token, a page request is sent to the login page.
// The app's static files (publicAsset) stay open, unchecked so that a
// stale cookie does not spend a try per file; they hold no data, and
// browsers fetch the manifest and its icons without credentials.
func (s *Server) redirectToLogin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if publicAsset(r.URL.Path) {
			return next(c)
		}
		a := s.authenticate(r)
		page := r.Method == http.MethodGet || r.Method == http.MethodHead
		switch {
		case a.granted:
			return next(c)
		case a.wait > 0 && page:
			return s.rateLimitedPage(c, a.wait)
		case a.wait > 0:
			return rateLimited(c, a.wait)
		}
		if a.wrongCookie {
			clearTokenCookie(c)
		}
		if page {
			return c.Redirect(http.StatusSeeOther, "/login")
		}
		return c.JSON(http.StatusUnauthorized, shared.Errorf(shared.CodeUnauthorized, "log in at /login first"))
	}
}

// rateLimited answers 429 rate_limited to a client blocked for wait.
func rateLimited(c echo.Context, wait time.Duration) error {
	setRetryAfter(c, wait)
	return c.JSON(http.StatusTooManyRequests, shared.Errorf(shared.CodeRateLimited, "%s", tooManyTries(wait)))
}

// rateLimitedPage answers a browser blocked for wait with the login page
// saying how long to wait.
func (s *Server) rateLimitedPage(c echo.Context, wait time.Duration) error {
	setRetryAfter(c, wait)
	return s.renderLogin(c, http.StatusTooManyRequests, tooManyTries(wait))
}

// setRetryAfter tells a blocked client when its next try is allowed, in
// whole seconds rounded up.
func setRetryAfter(c echo.Context, wait time.Duration) {
	c.Response().Header().Set(echo.HeaderRetryAfter, strconv.Itoa(retrySeconds(wait)))
}

func retrySeconds(wait time.Duration) int {
	return max(1, int(math.Ceil(wait.Seconds())))
}

func tooManyTries(wait time.Duration) string {
	return fmt.Sprintf("Too many wrong tokens from your address: try again in %d s.", retrySeconds(wait))
}

// publicAsset reports whether a path is one of the web app's static files.
func publicAsset(path string) bool {
	switch path {
	case "/app.js", "/app.css", "/wasm_exec.js", "/app-worker.js", "/manifest.webmanifest",
		"/manifest.json", "/goapp.js", "/goapp.wasm", "/app.wasm":
		return true
	}
	return strings.HasPrefix(path, "/web/")
}

// login checks a token sent as JSON {"token": …} or as a form field and
// sets the token cookie. A form post is redirected to the app.
func (s *Server) login(c echo.Context) error {
	var body struct {
		Token string `json:"token" form:"token"`
	}
	if err := c.Bind(&body); err != nil {
		return c.JSON(http.StatusBadRequest, shared.Errorf(shared.CodeBadRequest, "send {\"token\": \"…\"}"))
	}
	isForm := strings.HasPrefix(c.Request().Header.Get("Content-Type"), "application/x-www-form-urlencoded")
	if s.cfg.Token == "" {
		// Nothing to log in to: every request is authorized already.
		if isForm {
			return c.Redirect(http.StatusSeeOther, "/")
		}
		return c.JSON(http.StatusOK, shared.Empty{})
	}
	right, wait := s.checkToken(c.Request(), body.Token)
	switch {
	case wait > 0 && isForm:
		return s.rateLimitedPage(c, wait)
	case wait > 0:
		return rateLimited(c, wait)
	case !right && isForm:
		return s.renderLogin(c, http.StatusUnauthorized, "That token is not right.")
	case !right:
		return c.JSON(http.StatusUnauthorized, shared.Errorf(shared.CodeUnauthorized, "wrong token"))
	}
	setTokenCookie(c, body.Token, int((30 * 24 * time.Hour).Seconds()))
	if isForm {
		return c.Redirect(http.StatusSeeOther, "/")
	}
	return c.JSON(http.StatusOK, shared.Empty{})
}

// setTokenCookie sets the token cookie, kept from scripts (HttpOnly), from
// other sites' requests (SameSite=Strict) and, over TLS, from plain HTTP.
// A negative maxAge deletes it.
func setTokenCookie(c echo.Context, value string, maxAge int) {
	c.SetCookie(&http.Cookie{
		Name: tokenCookie, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: c.Request().TLS != nil,
	})
}

// clearTokenCookie deletes a wrong token cookie, so that a browser holding
// a stale token (after the token changed) spends one try, not one per
// request, and is not locked out before it reaches the login page.
func clearTokenCookie(c echo.Context) { setTokenCookie(c, "", -1) }

func (s *Server) loginPage(c echo.Context) error {
	return s.renderLogin(c, http.StatusOK, "")
}

func (s *Server) renderLogin(c echo.Context, status int, problem string) error {
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	c.Response().WriteHeader(status)
	return loginTemplate.Execute(c.Response(), map[string]string{"Problem": problem})
}

var loginTemplate = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>herd · log in</title>
<style>
body{font:16px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;display:grid;place-items:center;min-height:100vh;margin:0;background:#f6f7f9;color:#1d2330}
form{background:#fff;padding:2rem;border-radius:12px;box-shadow:0 2px 12px #0001;display:grid;gap:.75rem;width:min(22rem,90vw)}
input,button{font:inherit;padding:.6rem .75rem;border-radius:8px;border:1px solid #c9ced8}
button{background:#2b59c3;color:#fff;border:none;cursor:pointer}
.problem{color:#b42318}
@media (prefers-color-scheme:dark){body{background:#12151c;color:#e6e9ef}form{background:#1b2029}input{background:#12151c;color:inherit;border-color:#353c4a}}
</style></head><body>
<form method="post" action="/api/v1/login">
<h1 style="margin:0;font-size:1.25rem">herd</h1>
<label for="token">Access token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
{{if .Problem}}<p class="problem" role="alert">{{.Problem}}</p>{{end}}
<button type="submit">Log in</button>
</form></body></html>`))
