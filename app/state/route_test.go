package state

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/herd-dev/herd/shared"
)

func TestRoutesRoundTripThroughTheirPaths(t *testing.T) {
	for _, r := range []Route{
		{},
		{TaskID: "t-1"},
		{TaskID: "t-1", SessionID: "s-2"},
		{TaskID: "a/b c?d#e", SessionID: "%x"},
		{Inbox: true},
	} {
		assert.Equal(t, r, ParseRoute(r.Path()), "path %q", r.Path())
	}
}

func TestPathsThatAreNotAddressesAreTheStartPage(t *testing.T) {
	for _, p := range []string{
		"/", "", "/tasks", "/tasks/", "/tasks//sessions/s", "/tasks/t/sessions/",
		"/tasks/t/other/s", "/tasks/t/sessions/s/more", "/tasks/%zz", "/elsewhere/t",
	} {
		assert.Equal(t, Route{}, ParseRoute(p), "path %q", p)
	}
	assert.Equal(t, Route{TaskID: "t"}, ParseRoute("/tasks/t/"), "a trailing slash is the same address")
	assert.Equal(t, Route{Inbox: true}, ParseRoute("/inbox/"), "a trailing slash is the same address")
	for _, p := range []string{"/inbox/x", "/inboxes", "/tasks/inbox/more"} {
		assert.NotEqual(t, Route{Inbox: true}, ParseRoute(p), "path %q", p)
	}
}

func TestReviewRoutesCarryTheirChoicesInTheQuery(t *testing.T) {
	for _, r := range []Route{
		{TaskID: "t-1", Review: true},
		{TaskID: "t-1", Review: true, SessionID: "s-2"},
		{TaskID: "t/1", Review: true, RepositoryID: "r 1", File: "src/a b&c=d.go"},
		{TaskID: "t-1", Review: true, Scope: shared.ReviewScopeTurn},
		{TaskID: "t-1", Review: true, Scope: shared.ReviewScopeTurn, TurnID: "m-9", File: "README.md", SessionID: "s-2"},
	} {
		p := r.Path()
		path, query, _ := strings.Cut(p, "?")
		assert.Equal(t, r, ParseAddress(path, query), "address %q", p)
	}
	assert.Equal(t, "/tasks/t-1/review", Route{TaskID: "t-1", Review: true}.Path(), "no choices, no query")
	assert.Equal(t, "/tasks/t-1/review?file=a%2Fb.go&scope=turn", Route{TaskID: "t-1", Review: true, Scope: shared.ReviewScopeTurn, File: "a/b.go"}.Path())
}

func TestAReviewQueryOnlyHoldsItsChoices(t *testing.T) {
	assert.Equal(t, Route{TaskID: "t", Review: true}, ParseAddress("/tasks/t/review/", "scope=task&turn=m-1&x=1"),
		"a turn without the turn scope, and unknown keys, are left out")
	assert.Equal(t, Route{TaskID: "t", Review: true, File: "a.go"}, ParseAddress("/tasks/t/review", "file=a.go&bad=%zz"),
		"a pair that does not unescape is left out, the rest kept")
	assert.Equal(t, Route{TaskID: "t"}, ParseAddress("/tasks/t", "file=a.go&session=s"), "only a review reads the query")
	assert.Equal(t, Route{TaskID: "t", Review: true}, ParseRoute("/tasks/t/review"))
	for _, p := range []string{"/tasks//review", "/tasks/t/review/x", "/tasks/t/reviews", "/tasks/%zz/review"} {
		assert.Equal(t, Route{}, ParseAddress(p, "file=a.go"), "path %q", p)
	}
}
