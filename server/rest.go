package server

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// The REST mirror serves the read actions over plain HTTP for scripts; its
// bodies are the WebSocket response payloads.

func (s *Server) apiWorkspaces(c echo.Context) error {
	ws, err := s.store.ListWorkspaces(c.Request().Context())
	if err != nil {
		return s.writeError(c, err)
	}
	return c.JSON(http.StatusOK, shared.WorkspaceListResponse{Workspaces: ws})
}

func (s *Server) apiTasks(c echo.Context) error {
	ctx := c.Request().Context()
	q := shared.TaskListRequest{
		WorkspaceID:     c.Param("id"),
		Cursor:          c.QueryParam("cursor"),
		IncludeArchived: c.QueryParam("include_archived") == "true",
	}
	if l := c.QueryParam("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > shared.MaxTaskPage {
			return s.writeError(c, shared.Errorf(shared.CodeBadRequest, "limit must be an integer between 1 and %d", shared.MaxTaskPage))
		}
		q.Limit = n
	}
	if _, err := s.store.GetWorkspace(ctx, q.WorkspaceID); err != nil {
		return s.writeError(c, err)
	}
	page, err := s.store.ListTasks(ctx, q)
	if err != nil {
		return s.writeError(c, err)
	}
	return c.JSON(http.StatusOK, page)
}

func (s *Server) apiTask(c echo.Context) error {
	task, err := s.store.GetTask(c.Request().Context(), c.Param("id"))
	if err != nil {
		return s.writeError(c, err)
	}
	return c.JSON(http.StatusOK, task)
}

func (s *Server) apiAgentProfiles(c echo.Context) error {
	profiles, err := profileCatalog{store: s.store}.ListProfiles(c.Request().Context())
	if err != nil {
		return s.writeError(c, err)
	}
	return c.JSON(http.StatusOK, shared.AgentProfileListResponse{AgentProfiles: profiles})
}

// profileCatalog lists stored agent profiles with their availability on
// this machine, checked on every call so a newly installed agent shows up.
type profileCatalog struct{ store *store.Store }

// ListProfiles implements gateway.ProfileLister.
func (p profileCatalog) ListProfiles(ctx context.Context) ([]shared.AgentProfile, error) {
	profiles, err := p.store.ListAgentProfiles(ctx)
	if err != nil {
		return nil, err
	}
	builtin := make(map[string]agent.Profile)
	for _, b := range agent.Builtin() {
		builtin[b.ID] = b
	}
	for i := range profiles {
		def, ok := builtin[profiles[i].ID]
		if !ok {
			def = agent.Profile{Command: profiles[i].Command}
		}
		profiles[i].Available = def.Available()
	}
	return profiles, nil
}

// slogLevelFor keeps probes and asset requests out of the info log.
func slogLevelFor(path string, status int) slog.Level {
	switch {
	case status >= 500:
		return slog.LevelError
	case path == "/healthz" || path == "/readyz" || path == "/metrics" || strings.HasPrefix(path, "/web/"):
		return slog.LevelDebug
	default:
		return slog.LevelInfo
	}
}
