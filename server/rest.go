package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"

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
	profiles, err := s.profileCatalog().ListProfiles(c.Request().Context())
	if err != nil {
		return s.writeError(c, err)
	}
	return c.JSON(http.StatusOK, shared.AgentProfileListResponse{AgentProfiles: profiles})
}

// profileCatalog lists and resolves agent profiles: the built-in ones
// and those stored in the database, with their availability on this
// machine checked on every call so a newly installed agent shows up.
type profileCatalog struct {
	store *store.Store
	// known are the built-in and configured profiles, with their full
	// definitions (requirements, environment).
	known []agent.Profile
	auth  *profileAuth
}

// profileAuth remembers, per profile, the auth methods of an agent whose
// latest start was refused for want of authentication.
type profileAuth struct {
	mu sync.Mutex
	// required holds the methods by profile id. Guarded by mu.
	required map[string][]shared.AuthMethod
}

// observe records what a start of the profile said (sessions.Config.Started).
func (a *profileAuth) observe(profileID string, err error) {
	var auth *agent.AuthRequiredError
	a.mu.Lock()
	defer a.mu.Unlock()
	if !errors.As(err, &auth) {
		delete(a.required, profileID)
		return
	}
	if a.required == nil {
		a.required = make(map[string][]shared.AuthMethod)
	}
	a.required[profileID] = auth.Methods
}

// methods returns the auth methods the profile's latest start asked for.
func (a *profileAuth) methods(profileID string) []shared.AuthMethod {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.required[profileID]
}

func (s *Server) profileCatalog() profileCatalog {
	return profileCatalog{store: s.store, known: s.profiles, auth: &s.auth}
}

// ListProfiles implements gateway.ProfileLister.
func (p profileCatalog) ListProfiles(ctx context.Context) ([]shared.AgentProfile, error) {
	profiles, err := p.store.ListAgentProfiles(ctx)
	if err != nil {
		return nil, err
	}
	for i := range profiles {
		missing := p.definition(profiles[i]).Missing()
		profiles[i].Available, profiles[i].Missing = missing == "", missing
		profiles[i].AuthRequired = p.auth.methods(profiles[i].ID)
	}
	return profiles, nil
}

// Profile resolves a profile id to how to start it.
func (p profileCatalog) Profile(ctx context.Context, id string) (agent.Profile, error) {
	profiles, err := p.store.ListAgentProfiles(ctx)
	if err != nil {
		return agent.Profile{}, err
	}
	for _, wire := range profiles {
		if wire.ID != id {
			continue
		}
		def := p.definition(wire)
		if missing := def.Missing(); missing != "" {
			return agent.Profile{}, shared.Errorf(shared.CodeUnavailable, "agent %q cannot start on this machine: it %s", wire.Name, missing)
		}
		return def, nil
	}
	return agent.Profile{}, shared.Errorf(shared.CodeNotFound, "agent profile %q not found", id)
}

// definition returns the known definition of a stored profile, or one
// made from its stored command.
func (p profileCatalog) definition(wire shared.AgentProfile) agent.Profile {
	for _, b := range p.known {
		if b.ID == wire.ID {
			return b
		}
	}
	return agent.Profile{ID: wire.ID, Name: wire.Name, Provider: wire.Provider, Command: wire.Command, Args: wire.Args}
}

// slogLevelFor keeps probes and asset requests out of the info log; a
// probe answering 503 while the server starts is expected, not an error.
func slogLevelFor(path string, status int) slog.Level {
	switch {
	case path == "/healthz" || path == "/readyz" || path == "/metrics" || strings.HasPrefix(path, "/web/"):
		if status >= 500 && path != "/readyz" {
			return slog.LevelError
		}
		return slog.LevelDebug
	case status >= 500:
		return slog.LevelError
	default:
		return slog.LevelInfo
	}
}
