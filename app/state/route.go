package state

import (
	"net/url"
	"strings"

	"github.com/herd-dev/herd/shared"
)

// Route is what the page's address selects: a task, and optionally one of
// its sessions or its review, or the inbox. The zero Route is the start
// page (the new task form).
//
// The UI's addresses are /tasks/{task_id},
// /tasks/{task_id}/sessions/{session_id}, /tasks/{task_id}/review and
// /inbox; ids are opaque, so they travel path-escaped. The review's
// choices travel in its query: ?session= (where comments go), repo=,
// scope=turn and turn=, file=.
type Route struct {
	TaskID string
	// SessionID is the session shown; with Review, the session comments
	// go to (empty for the one review.get names).
	SessionID string
	// Inbox selects the inbox of every pending request; no task is
	// selected with it.
	Inbox bool
	// Review selects the task's review; the fields below it choose what
	// it shows: a repository (empty for the first), the scope (empty for
	// ReviewScopeTask) with its turn (empty for the newest), and a file
	// (empty for none chosen).
	Review       bool
	RepositoryID string
	Scope        shared.ReviewScope
	TurnID       string
	File         string
}

// InboxPath is the inbox's address.
const InboxPath = "/inbox"

// reviewSegment ends a review's path.
const reviewSegment = "review"

// ParseRoute reads a page path. A path that is not one of the UI's
// addresses, or whose ids do not unescape, is the start page.
func ParseRoute(path string) Route { return ParseAddress(path, "") }

// ParseAddress reads a page path and its raw query, which only a review
// reads; a query value that is not one of its choices is left out.
func ParseAddress(path, rawQuery string) Route {
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
	case len(parts) == 2 && parts[1] == reviewSegment:
		r.TaskID, r.Review = unescape(parts[0]), true
		r.readReviewQuery(rawQuery)
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

// readReviewQuery takes a review's choices from its query.
func (r *Route) readReviewQuery(rawQuery string) {
	// ParseQuery keeps the pairs it could read: a bad one is left out.
	q, _ := url.ParseQuery(rawQuery)
	r.SessionID, r.RepositoryID, r.File = q.Get("session"), q.Get("repo"), q.Get("file")
	if q.Get("scope") == string(shared.ReviewScopeTurn) {
		r.Scope, r.TurnID = shared.ReviewScopeTurn, q.Get("turn")
	}
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

// Path returns the route's page address: "/" for the start page; a
// review's choices follow in its query.
func (r Route) Path() string {
	if r.Inbox {
		return InboxPath
	}
	if r.TaskID == "" {
		return "/"
	}
	p := "/tasks/" + url.PathEscape(r.TaskID)
	if r.Review {
		p += "/" + reviewSegment
		q := url.Values{}
		for k, v := range map[string]string{"session": r.SessionID, "repo": r.RepositoryID, "file": r.File} {
			if v != "" {
				q.Set(k, v)
			}
		}
		if r.Scope == shared.ReviewScopeTurn {
			q.Set("scope", string(shared.ReviewScopeTurn))
			if r.TurnID != "" {
				q.Set("turn", r.TurnID)
			}
		}
		if len(q) > 0 {
			p += "?" + q.Encode()
		}
		return p
	}
	if r.SessionID != "" {
		p += "/sessions/" + url.PathEscape(r.SessionID)
	}
	return p
}
