package state

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

var inboxT0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// inboxReq returns a permission request of workspace w1, task taskID,
// opened i minutes after inboxT0.
func inboxReq(pendingID, taskID string, i int) shared.InboxRequest {
	return shared.InboxRequest{
		WorkspaceID: "w1", TaskID: taskID, SessionID: "s-" + taskID, MessageID: "m-" + pendingID,
		PendingID: pendingID, Kind: shared.InboxPermission, Title: "Edit " + pendingID,
		Options:   []shared.PermissionOption{{OptionID: "allow", Name: "Allow once", Kind: OptionAllowOnce}},
		CreatedAt: inboxT0.Add(time.Duration(i) * time.Minute),
	}
}

func closed(pendingID string) shared.InboxRequestClosed {
	return shared.InboxRequestClosed{WorkspaceID: "w1", PendingID: pendingID, Status: shared.MessageResolved}
}

func newInbox() *Inbox {
	b := NewInbox()
	b.SetWorkspace("w1")
	return b
}

// pendingIDs returns the pending ids of reqs in order.
func pendingIDs(reqs []shared.InboxRequest) []string {
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = r.PendingID
	}
	return out
}

func TestInboxListingShowsRequestsNewestFirstWithTheirCount(t *testing.T) {
	b := newInbox()
	assert.False(t, b.Loaded())
	b.Load(shared.InboxListResponse{Requests: []shared.InboxRequest{
		inboxReq("old", "t1", 1), inboxReq("new", "t2", 3), inboxReq("mid", "t1", 2),
	}}, b.Mark())

	assert.True(t, b.Loaded())
	assert.Equal(t, []string{"new", "mid", "old"}, pendingIDs(b.Requests()))
	assert.Equal(t, 3, b.Len())
	assert.Equal(t, []string{"mid", "old"}, pendingIDs(b.ForTask("t1")), "the requests of one task")
	assert.Empty(t, b.ForTask("t3"))
}

func TestInboxListingReplacesWhatItHeld(t *testing.T) {
	b := newInbox()
	b.Load(shared.InboxListResponse{Requests: []shared.InboxRequest{inboxReq("a", "t1", 1), inboxReq("b", "t1", 2)}}, b.Mark())
	// After a reconnect: "a" was answered while the tab was offline.
	b.Load(shared.InboxListResponse{Requests: []shared.InboxRequest{inboxReq("b", "t1", 2), inboxReq("c", "t2", 3)}}, b.Mark())
	assert.Equal(t, []string{"c", "b"}, pendingIDs(b.Requests()))
}

func TestInboxLiveEventsOpenAndCloseRequests(t *testing.T) {
	b := newInbox()
	assert.True(t, b.Open(inboxReq("a", "t1", 1)), "a new request")
	assert.True(t, b.Open(inboxReq("b", "t2", 2)))
	assert.False(t, b.Open(inboxReq("a", "t1", 1)), "the same request again is not new")
	assert.Equal(t, []string{"b", "a"}, pendingIDs(b.Requests()))

	b.Close(closed("a"))
	assert.Equal(t, []string{"b"}, pendingIDs(b.Requests()))
	assert.Equal(t, 1, b.Len())
}

func TestInboxCloseThatArrivesBeforeItsOpenKeepsTheRequestOut(t *testing.T) {
	b := newInbox()
	b.Close(closed("a"))
	assert.False(t, b.Open(inboxReq("a", "t1", 1)))
	assert.Zero(t, b.Len())
}

func TestInboxListingDoesNotResurrectARequestClosedAfterItWasAsked(t *testing.T) {
	b := newInbox()
	b.Open(inboxReq("a", "t1", 1))
	mark := b.Mark()
	// The server read the list with "a" in it; then "a" was answered and
	// its close overtook the list's answer.
	b.Close(closed("a"))
	b.Load(shared.InboxListResponse{Requests: []shared.InboxRequest{inboxReq("a", "t1", 1), inboxReq("b", "t2", 2)}}, mark)
	assert.Equal(t, []string{"b"}, pendingIDs(b.Requests()))
}

func TestInboxListingKeepsARequestOpenedAfterItWasAsked(t *testing.T) {
	b := newInbox()
	b.Open(inboxReq("before", "t1", 1))
	mark := b.Mark()
	b.Open(inboxReq("during", "t2", 2))
	// The list was read before "during" opened; "before" was answered
	// while the connection was down, so the list no longer has it.
	b.Load(shared.InboxListResponse{Requests: []shared.InboxRequest{inboxReq("other", "t3", 0)}}, mark)
	assert.Equal(t, []string{"during", "other"}, pendingIDs(b.Requests()))
}

func TestInboxIgnoresAnotherWorkspaceAndForgetsItsOwnOnASwitch(t *testing.T) {
	b := newInbox()
	elsewhere := inboxReq("x", "t9", 1)
	elsewhere.WorkspaceID = "w2"
	assert.False(t, b.Open(elsewhere))
	b.Load(shared.InboxListResponse{Requests: []shared.InboxRequest{elsewhere, inboxReq("a", "t1", 1)}}, b.Mark())
	assert.Equal(t, []string{"a"}, pendingIDs(b.Requests()))
	other := closed("a")
	other.WorkspaceID = "w2"
	b.Close(other)
	assert.Equal(t, 1, b.Len(), "a close of another workspace closes nothing here")

	b.SetWorkspace("w1")
	assert.Equal(t, 1, b.Len(), "the same workspace again keeps the inbox")
	b.SetWorkspace("w2")
	assert.Zero(t, b.Len())
	assert.False(t, b.Loaded(), "the new workspace's listing has not arrived")
	assert.True(t, b.Open(elsewhere))
}

func TestInboxAnswerInFlightIsOneAtATimeAndARefusalKeepsTheRequest(t *testing.T) {
	b := newInbox()
	b.Open(inboxReq("a", "t1", 1))
	require.True(t, b.BeginAnswer("a", Answer{OptionID: "allow"}))
	assert.Equal(t, AnswerSending, b.Answer("a").State, "its choices are disabled")
	assert.False(t, b.BeginAnswer("a", Answer{OptionID: "reject"}), "a second answer waits for the first")
	assert.False(t, b.BeginAnswer("missing", Answer{OptionID: "allow"}))

	// A listing in between keeps the answer in flight.
	b.Load(shared.InboxListResponse{Requests: []shared.InboxRequest{inboxReq("a", "t1", 1)}}, b.Mark())
	assert.Equal(t, AnswerSending, b.Answer("a").State)

	b.AnswerFailed("a", "the connection dropped")
	got := b.Answer("a")
	assert.Equal(t, Answer{State: AnswerFailed, OptionID: "allow", Err: "the connection dropped"}, got,
		"the error is shown with the answer kept for its retry")
	assert.Equal(t, 1, b.Len(), "the request stays until it is closed")

	require.True(t, b.BeginAnswer("a", got), "a retry")
	assert.Equal(t, Answer{State: AnswerSending, OptionID: "allow"}, b.Answer("a"), "the retry clears the error")
	b.Answered("a")
	assert.Zero(t, b.Len())
	assert.False(t, b.Open(inboxReq("a", "t1", 1)), "an answered request does not come back")
}

func TestInboxKeepsAClarificationDraftAcrossAListing(t *testing.T) {
	b := newInbox()
	q := inboxReq("q", "t1", 1)
	q.Kind, q.Options = shared.InboxClarification, nil
	b.Open(q)
	b.SetDraft("q", "use main")
	b.Load(shared.InboxListResponse{Requests: []shared.InboxRequest{q}}, b.Mark())
	assert.Equal(t, "use main", b.Draft("q"))
	b.SetDraft("missing", "x")
	assert.Empty(t, b.Draft("missing"))
}

func TestInboxRemembersClosedIdsForABoundedWhile(t *testing.T) {
	b := newInbox()
	for i := range MaxClosedRemembered + 1 {
		b.Close(closed(fmt.Sprint("p", i)))
	}
	forgotten, _ := b.Dropped()
	assert.Equal(t, 1, forgotten)
	assert.True(t, b.Open(inboxReq("p0", "t1", 1)), "the oldest close is forgotten")
	assert.False(t, b.Open(inboxReq("p1", "t1", 1)), "the newer ones are still remembered")
}

func TestInboxHoldsTheNewestRequestsWithinTheListBound(t *testing.T) {
	b := newInbox()
	for i := range shared.MaxInboxRequests + 2 {
		b.Open(inboxReq(fmt.Sprintf("p%03d", i), "t1", i))
	}
	assert.Equal(t, shared.MaxInboxRequests, b.Len())
	assert.True(t, b.Truncated())
	_, evicted := b.Dropped()
	assert.Equal(t, 2, evicted)
	_, held := b.Request("p001")
	assert.False(t, held, "the oldest are evicted")
	_, held = b.Request("p002")
	assert.True(t, held)
}

func TestInboxListingSaysWhenItIsTruncatedOrFailed(t *testing.T) {
	b := newInbox()
	b.LoadFailed("unknown action")
	assert.Equal(t, "unknown action", b.LoadError())
	assert.False(t, b.Loaded())
	b.Load(shared.InboxListResponse{Requests: []shared.InboxRequest{inboxReq("a", "t1", 1)}, Truncated: true}, b.Mark())
	assert.True(t, b.Truncated())
	assert.Empty(t, b.LoadError(), "a listing clears the failure")
}

func TestAgoSaysHowLongBeforeNow(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Minute, "just now"},
		{59 * time.Second, "just now"},
		{time.Minute, "1 min ago"},
		{59 * time.Minute, "59 min ago"},
		{time.Hour, "1 h ago"},
		{23*time.Hour + 59*time.Minute, "23 h ago"},
		{50 * time.Hour, "2 d ago"},
	} {
		assert.Equal(t, tt.want, Ago(inboxT0, inboxT0.Add(-tt.d)), "%v", tt.d)
	}
}
