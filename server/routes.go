package server

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/herd-dev/herd/shared"
)

// routes builds the HTTP router: every route in one readable list.
func (s *Server) routes() *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		if !c.Response().Committed {
			_ = s.writeError(c, err)
		}
	}
	e.Use(middleware.Recover())
	e.Use(s.accessLog())
	e.Use(middleware.SecureWithConfig(middleware.SecureConfig{
		ContentTypeNosniff: "nosniff",
		XFrameOptions:      "DENY",
		ReferrerPolicy:     "same-origin",
	}))
	e.Use(middleware.GzipWithConfig(middleware.GzipConfig{Skipper: skipGzip}))

	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	// Metrics tell how busy the server is and which actions fail, so they
	// are guarded like the API unless a scraper that cannot send the token
	// needs them open.
	metrics := echo.WrapHandler(promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{}))
	if s.cfg.MetricsPublic {
		e.GET("/metrics", metrics)
	} else {
		e.GET("/metrics", metrics, s.requireToken)
	}
	e.GET("/ws", s.websocket, s.requireToken)
	e.GET("/login", s.loginPage)
	e.POST("/api/v1/login", s.login)
	// GitHub cannot send herd's token: the delivery's signature is its
	// authentication.
	e.Any("/api/v1/github/webhook", s.githubWebhook)

	// A notification's service worker sends its device's credential, not
	// the token: the device routes check it themselves.
	e.POST("/api/v1/push/decision", s.pushDecision, s.requireReady)
	e.POST("/api/v1/push/resubscribe", s.pushResubscribe, s.requireReady)

	api := e.Group("/api/v1", s.requireToken, s.requireReady)
	api.GET("/workspaces", s.apiWorkspaces)
	api.GET("/workspaces/:id/tasks", s.apiTasks)
	api.GET("/tasks/:id", s.apiTask)
	api.GET("/agent-profiles", s.apiAgentProfiles)

	if s.opts.UI != nil {
		e.Any("/*", echo.WrapHandler(s.opts.UI), s.redirectToLogin)
	}
	return e
}

// skipGzip keeps compression away from hijacked WebSockets, from
// /metrics (promhttp compresses by itself) and from the pre-compressed
// app.wasm.
func skipGzip(c echo.Context) bool {
	p := c.Request().URL.Path
	return p == "/ws" || p == "/metrics" || strings.HasPrefix(p, "/web/app.wasm")
}

func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok", "version": s.opts.Version})
}

// readiness is the body of /readyz.
type readiness struct {
	Ready bool `json:"ready"`
	// Reason says why the server is not ready; empty when it is.
	Reason string `json:"reason,omitempty"`
}

// readyz is 200 only after start-up work has finished, until shutdown, and
// while the database takes work; otherwise 503 with the reason.
func (s *Server) readyz(c echo.Context) error {
	if !s.ready.Load() {
		return c.JSON(http.StatusServiceUnavailable, readiness{Reason: "starting or shutting down"})
	}
	if err, fresh := s.dbCheck.check(c.Request().Context()); err != nil {
		if fresh {
			s.log.Warn("readiness: database check failed", "err", err)
		}
		return c.JSON(http.StatusServiceUnavailable, readiness{Reason: "database unavailable"})
	}
	return c.JSON(http.StatusOK, readiness{Ready: true})
}

// githubWebhook hands a delivery to the webhook once the server is ready;
// without a secret the endpoint does not exist.
func (s *Server) githubWebhook(c echo.Context) error {
	if s.cfg.GitHubWebhookSecret == "" {
		return shared.Errorf(shared.CodeNotFound, "GitHub webhooks are disabled: set HERD_GITHUB_WEBHOOK_SECRET (--github-webhook-secret) to receive them")
	}
	wh := s.webhook.Load()
	if wh == nil || !s.ready.Load() {
		return shared.Errorf(shared.CodeUnavailable, "server is starting; GitHub redelivers failed deliveries")
	}
	wh.ServeHTTP(c.Response(), c.Request())
	return nil
}

func (s *Server) websocket(c echo.Context) error {
	gw := s.gateway.Load()
	if gw == nil || !s.ready.Load() {
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"code": "unavailable", "message": "server is starting; retry shortly"})
	}
	gw.ServeHTTP(c.Response(), c.Request())
	return nil
}

// requireReady answers 503 while start-up work is running.
func (s *Server) requireReady(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !s.ready.Load() {
			return c.JSON(http.StatusServiceUnavailable, map[string]string{"code": "unavailable", "message": "server is starting; retry shortly"})
		}
		return next(c)
	}
}

// accessLog logs each HTTP request once, at debug level for probes.
func (s *Server) accessLog() echo.MiddlewareFunc {
	return middleware.RequestLoggerWithConfig(middleware.RequestLoggerConfig{
		LogStatus: true, LogURIPath: true, LogMethod: true, LogLatency: true, LogRemoteIP: true,
		LogValuesFunc: func(c echo.Context, v middleware.RequestLoggerValues) error {
			level := slogLevelFor(v.URIPath, v.Status)
			s.log.Log(c.Request().Context(), level, "http",
				"method", v.Method, "path", v.URIPath, "status", v.Status,
				"latency_ms", v.Latency.Milliseconds(), "remote", v.RemoteIP)
			return nil
		},
	})
}
