package state

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
