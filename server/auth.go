package server

import (
	"crypto/subtle"
	"html/template"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/herd-dev/herd/shared"
)

// tokenCookie carries the access token for browsers, which cannot set an
// Authorization header on a WebSocket upgrade.
const tokenCookie = "herd_token"

// authorized reports whether the request carries the configured token.
// Without a configured token every request is authorized.
func (s *Server) authorized(r *http.Request) bool {
	if s.cfg.Token == "" {
		return true
	}
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		return tokenEqual(strings.TrimPrefix(h, "Bearer "), s.cfg.Token)
	}
	if ck, err := r.Cookie(tokenCookie); err == nil {
		return tokenEqual(ck.Value, s.cfg.Token)
	}
	return false
}

func tokenEqual(got, want string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// requireToken refuses unauthenticated API and WebSocket requests.
func (s *Server) requireToken(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !s.authorized(c.Request()) {
			return c.JSON(http.StatusUnauthorized, shared.Errorf(shared.CodeUnauthorized,
				"a token is required: send Authorization: Bearer <token> or log in at /login"))
		}
		return next(c)
	}
}

// redirectToLogin guards the web app's pages, which the server renders
// with data: without the token, a page request is sent to the login page.
// The app's static files (publicAsset) stay open; they hold no data, and
// browsers fetch the manifest and its icons without credentials.
func (s *Server) redirectToLogin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if s.authorized(r) || publicAsset(r.URL.Path) {
			return next(c)
		}
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			return c.Redirect(http.StatusSeeOther, "/login")
		}
		return c.JSON(http.StatusUnauthorized, shared.Errorf(shared.CodeUnauthorized, "log in at /login first"))
	}
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

// loginAttempts limits failed logins to slow down token guessing.
var loginAttempts = &failureWindow{limit: 10, window: time.Minute}

// failureWindow counts failures in a fixed time window.
type failureWindow struct {
	limit  int
	window time.Duration

	mu    sync.Mutex // guards start and count
	start time.Time
	count int
}

// blocked reports whether the limit is reached in the current window.
func (f *failureWindow) blocked(now time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if now.Sub(f.start) > f.window {
		f.start, f.count = now, 0
	}
	return f.count >= f.limit
}

func (f *failureWindow) fail(now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if now.Sub(f.start) > f.window {
		f.start, f.count = now, 0
	}
	f.count++
}

// login checks a token sent as JSON {"token": …} or as a form field and
// sets the token cookie. A form post is redirected to the app.
func (s *Server) login(c echo.Context) error {
	now := time.Now()
	if loginAttempts.blocked(now) {
		return c.JSON(http.StatusTooManyRequests, shared.Errorf(shared.CodeRateLimited, "too many failed logins; wait a minute"))
	}
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
	if !tokenEqual(body.Token, s.cfg.Token) {
		loginAttempts.fail(now)
		if isForm {
			return s.renderLogin(c, http.StatusUnauthorized, "That token is not right.")
		}
		return c.JSON(http.StatusUnauthorized, shared.Errorf(shared.CodeUnauthorized, "wrong token"))
	}
	c.SetCookie(&http.Cookie{
		Name: tokenCookie, Value: body.Token, Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: c.Request().TLS != nil,
		MaxAge: int((30 * 24 * time.Hour).Seconds()),
	})
	if isForm {
		return c.Redirect(http.StatusSeeOther, "/")
	}
	return c.JSON(http.StatusOK, shared.Empty{})
}

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
