package state

import (
	"net/url"
	"strings"
)

// Route is what the page's address selects: a task, and optionally one of
// its sessions, or the inbox. The zero Route is the start page (the new
// task form).
//
// The UI's addresses are /tasks/{task_id},
// /tasks/{task_id}/sessions/{session_id} and /inbox; ids are opaque, so
// they travel path-escaped.
type Route struct {
	TaskID    string
	SessionID string
	// Inbox selects the inbox of every pending request; no task is
	// selected with it.
	Inbox bool
}

// InboxPath is the inbox's address.
const InboxPath = "/inbox"

// ParseRoute reads a page path. A path that is not one of the UI's
// addresses, or whose ids do not unescape, is the start page.
func ParseRoute(path string) Route {
	if strings.TrimSuffix(path, "/") == InboxPath {
		return Route{Inbox: true}
	}
	rest, ok := strings.CutPrefix(path, "/tasks/")
	if !ok {
		return Route{}
	}
	parts := strings.Split(strings.TrimSuffix(rest, "/"), "/")
	var r Route
	switch {
	case len(parts) == 1:
		r.TaskID = unescape(parts[0])
	case len(parts) == 3 && parts[1] == "sessions":
		r.TaskID, r.SessionID = unescape(parts[0]), unescape(parts[2])
		if r.SessionID == "" {
			return Route{}
		}
	default:
		return Route{}
	}
	if r.TaskID == "" {
		return Route{}
	}
	return r
}

// unescape returns the path-unescaped segment, or "" when it is not valid
// escaping.
func unescape(seg string) string {
	s, err := url.PathUnescape(seg)
	if err != nil {
		return ""
	}
	return s
}

// Path returns the route's page path: "/" for the start page.
func (r Route) Path() string {
	if r.Inbox {
		return InboxPath
	}
	if r.TaskID == "" {
		return "/"
	}
	p := "/tasks/" + url.PathEscape(r.TaskID)
	if r.SessionID != "" {
		p += "/sessions/" + url.PathEscape(r.SessionID)
	}
	return p
}
