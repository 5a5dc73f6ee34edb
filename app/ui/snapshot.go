package ui

import (
	"context"
	"encoding/json"
	"time"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/shared"
)

// SnapshotFunc loads the first screen (what boot answers) so the server can
// render the page with its task rows already in it.
type SnapshotFunc func(context.Context) (shared.BootResponse, error)

// idBootSnapshot is the hidden element that carries the server's snapshot
// to the browser. It holds the JSON as an HTML-escaped text node: go-app
// encodes attribute values with Go quoting rather than HTML escaping, so
// data must never travel in an attribute.
const idBootSnapshot = "herd-boot"

// snapshotTimeout bounds loading the snapshot for one page render; past it
// the page is rendered without rows and the browser loads them live.
const snapshotTimeout = 2 * time.Second

// OnPreRender runs only on the server: it loads the first screen so the
// page arrives with its task rows, and embeds the same data for the
// browser's first render. A failure only costs the head start.
func (s *shell) OnPreRender(ctx app.Context) {
	s.route = routeOf(ctx.Page().URL())
	if s.snapshot == nil {
		return
	}
	loadCtx, cancel := context.WithTimeout(ctx, snapshotTimeout)
	defer cancel()
	resp, err := s.snapshot(loadCtx)
	if err != nil {
		return
	}
	raw, err := json.Marshal(resp)
	if err != nil {
		return
	}
	s.applyBoot(resp, s.store.Mark(), nil)
	s.snapshotJSON = string(raw)
}

// hydrate starts the browser's store from the snapshot the server
// rendered into the page, so the first client render shows the same rows
// instead of an empty list while the WebSocket connects. It runs in OnInit,
// before go-app replaces the server's markup. The live boot that follows
// reconciles: newer data wins and tasks it no longer lists are dropped.
func (s *shell) hydrate() {
	el := app.Window().GetElementByID(idBootSnapshot)
	if !el.Truthy() {
		return
	}
	var resp shared.BootResponse
	if err := json.Unmarshal([]byte(el.Get("textContent").String()), &resp); err != nil {
		return
	}
	s.applyBoot(resp, s.store.Mark(), nil)
	s.bootWorkspaceID = resp.WorkspaceID
}

// applyBoot puts a boot response, requested when the store was at sent,
// into the store.
func (s *shell) applyBoot(resp shared.BootResponse, sent state.Mark, listed map[string]struct{}) {
	s.store.SetWorkspaces(resp.Workspaces)
	s.store.SetAgentProfiles(resp.AgentProfiles)
	s.store.SelectWorkspace(resp.WorkspaceID)
	s.inbox.SetWorkspace(resp.WorkspaceID)
	s.applyListed(resp.Tasks, sent, listed)
}

// applyListed stores the tasks of a boot or task.list answer requested
// when the store was at sent, and notes their ids in listed (when not nil)
// for Retain.
func (s *shell) applyListed(tasks []shared.Task, sent state.Mark, listed map[string]struct{}) {
	for _, t := range tasks {
		if listed != nil {
			listed[t.ID] = struct{}{}
		}
		s.store.Apply(state.ResponseWrite(t, sent))
	}
}

// renderSnapshot embeds the server's snapshot for hydrate; empty in the
// browser, which never renders one.
func (s *shell) renderSnapshot() app.UI {
	return app.If(s.snapshotJSON != "", func() app.UI {
		return app.Div().ID(idBootSnapshot).Hidden(true).Text(s.snapshotJSON)
	})
}
