package ui

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/app/wsclient"
	"github.com/herd-dev/herd/shared"
)

// permissionReq is a pending permission request of task taskID, opened at.
func permissionReq(pendingID, taskID string, at time.Time) shared.InboxRequest {
	return shared.InboxRequest{
		WorkspaceID: "w1", TaskID: taskID, SessionID: "s-" + taskID, MessageID: "m-" + pendingID,
		PendingID: pendingID, Kind: shared.InboxPermission, Title: "Edit notes.txt", ToolKind: "edit",
		Options: []shared.PermissionOption{
			{OptionID: "allow", Name: "Allow once", Kind: state.OptionAllowOnce},
			{OptionID: "reject", Name: "Reject", Kind: state.OptionRejectOnce},
		},
		CreatedAt: at,
	}
}

// questionReq is a pending clarification request of task taskID.
func questionReq(pendingID, taskID string, at time.Time) shared.InboxRequest {
	return shared.InboxRequest{
		WorkspaceID: "w1", TaskID: taskID, SessionID: "s-" + taskID, MessageID: "m-" + pendingID,
		PendingID: pendingID, Kind: shared.InboxClarification, Title: "Which branch should I use?", CreatedAt: at,
	}
}

// onInbox returns a booted shell showing the inbox, loaded with reqs.
func onInbox(tasks []shared.Task, reqs ...shared.InboxRequest) *shell {
	s := booted(tasks...)
	s.route = state.Route{Inbox: true}
	s.inbox.Load(shared.InboxListResponse{Requests: reqs}, s.inbox.Mark())
	s.syncAttention()
	return s
}

// inboxItems returns the start tags of the inbox's items, in order.
func inboxItems(markup string) []string {
	return regexp.MustCompile(`<li[^>]*class="inbox-item[^"]*"[^>]*>`).FindAllString(markup, -1)
}

// startTags returns the start tags of the <tag> elements in markup that
// hold every one of parts, whatever the order of their attributes (the
// server's encoder writes them in no fixed order).
func startTags(markup, tag string, parts ...string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<`+tag+`\b[^>]*>`).FindAllString(markup, -1) {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(m, p)
		}
		if all {
			out = append(out, m)
		}
	}
	return out
}

// bare matches a boolean attribute, written bare by the server.
var bare = func(name string) *regexp.Regexp { return regexp.MustCompile(`\s` + name + `[\s>]`) }

// itemMarkup returns the markup of the inbox item of pendingID.
func itemMarkup(t *testing.T, markup, pendingID string) string {
	t.Helper()
	at := strings.Index(markup, `data-pending-id="`+pendingID+`"`)
	require.GreaterOrEqual(t, at, 0, "no item of %s", pendingID)
	// From the item's own start tag, whatever the order of its attributes.
	start := strings.LastIndex(markup[:at], "<li")
	end := strings.Index(markup[start:], "</li>")
	require.Greater(t, end, 0)
	return markup[start : start+end]
}

func TestTopBarLinksToTheInboxWithTheCount(t *testing.T) {
	s := booted(newTask("a", "Fix login", 1, nil))
	toggle := elementWith(t, html(s), idInboxToggle)
	assert.Contains(t, toggle, `href="/inbox"`)
	assert.Regexp(t, `<span[^>]*id="inbox-count"[^>]*></span>`, html(s), "no count before the first listing")

	now := time.Now()
	s = onInbox([]shared.Task{newTask("a", "Fix login", 1, nil)},
		permissionReq("p1", "a", now), permissionReq("p2", "a", now), questionReq("q1", "a", now))
	markup := html(s)
	toggle = elementWith(t, markup, idInboxToggle)
	assert.Contains(t, toggle, "inbox-toggle-waiting")
	assert.Contains(t, toggle, `aria-current="page"`, "the inbox is the page shown")
	assert.Regexp(t, `Needs you</span>\s*<span[^>]*id="inbox-count"[^>]*>3</span>`, markup)
	assert.Equal(t, "(3) herd", s.attention.Title(now), "the title bar counts them too")
}

func TestInboxShowsEveryPendingRequestNewestFirstWithItsDecision(t *testing.T) {
	now := time.Now()
	s := onInbox([]shared.Task{newTask("a", "Fix login", 1, nil), newTask("b", "Update docs", 2, nil)},
		permissionReq("p-old", "a", now.Add(-90*time.Minute)),
		questionReq("q-new", "b", now.Add(-5*time.Minute)),
		permissionReq("p-mid", "a", now.Add(-time.Hour+time.Minute)),
	)
	markup := html(s)
	elementWith(t, markup, idInbox)
	assert.NotContains(t, markup, `id="new-task-form"`, "the inbox takes the main pane")

	items := inboxItems(markup)
	require.Len(t, items, 3)
	for i, id := range []string{"q-new", "p-mid", "p-old"} {
		assert.Contains(t, items[i], `data-pending-id="`+id+`"`, "item %d", i)
	}

	perm := itemMarkup(t, markup, "p-mid")
	assert.Contains(t, perm, ">Fix login</a>", "the task's title from its row")
	assert.Contains(t, perm, "59 min ago")
	assert.Contains(t, perm, `<span class="inbox-kind">edit</span>`)
	assert.Contains(t, perm, "Edit notes.txt")
	assert.Regexp(t, `<button[^>]*>Allow once</button>`, perm)
	require.Len(t, startTags(perm, "button", `class="permission-option option-allow"`, `data-option-id="allow"`), 1)
	require.Len(t, startTags(perm, "button", `class="permission-option option-reject"`, `data-option-id="reject"`), 1)
	assert.Len(t, startTags(perm, "a", `class="inbox-open"`, `href="/tasks/a/sessions/s-a"`), 1, "a link to open the session")
	assert.Contains(t, perm, "1 more from this task")

	question := itemMarkup(t, markup, "q-new")
	assert.Contains(t, question, ">Update docs</a>")
	assert.Contains(t, question, "5 min ago")
	assert.Contains(t, question, "Which branch should I use?")
	assert.Regexp(t, `<textarea[^>]*id="inbox-answer-q-new"`, question)
	assert.Regexp(t, `<label[^>]*for="inbox-answer-q-new"`, question)
	send := startTags(question, "button", "inbox-send")
	require.Len(t, send, 1)
	assert.Regexp(t, bare("disabled"), send[0], "nothing typed, nothing to send")
	assert.NotContains(t, question, "permission-option")
}

func TestInboxSaysWhileLoadingThenThatNothingNeedsYou(t *testing.T) {
	s := booted()
	s.route = state.Route{Inbox: true}
	assert.Contains(t, html(s), "Loading what needs you…")
	assert.NotContains(t, html(s), `id="inbox-empty"`)

	s.inbox.Load(shared.InboxListResponse{}, s.inbox.Mark())
	assert.Contains(t, elementWith(t, html(s), idInboxEmpty), `role="status"`)
	assert.Contains(t, html(s), "Nothing needs you.")
}

func TestInboxShowsAFailedListingWithARetry(t *testing.T) {
	s := booted()
	s.route = state.Route{Inbox: true}
	s.inbox.LoadFailed(`unknown action "inbox.list"`)
	markup := html(s)
	assert.Contains(t, elementWith(t, markup, "inbox-load-error"), `role="alert"`)
	assert.Contains(t, markup, "Could not load what needs you: unknown action &#34;inbox.list&#34;")
	elementWith(t, markup, "inbox-reload")
	assert.NotContains(t, markup, "Loading what needs you…", "it is not loading any more")
}

func TestInboxDisablesAnAnswerInFlightAndOffersARetryAfterARefusal(t *testing.T) {
	now := time.Now()
	s := onInbox([]shared.Task{newTask("a", "Fix login", 1, nil)}, permissionReq("p1", "a", now), questionReq("q1", "a", now))
	require.True(t, s.inbox.BeginAnswer("p1", state.Answer{OptionID: "allow"}))
	s.inbox.SetDraft("q1", "main")
	markup := html(s)

	perm := itemMarkup(t, markup, "p1")
	assert.Regexp(t, bare("aria-busy"), perm)
	choices := startTags(perm, "button", "permission-option")
	require.Len(t, choices, 2)
	for _, c := range choices {
		assert.Regexp(t, bare("disabled"), c, "the choices are disabled while the answer is in flight")
	}
	send := startTags(itemMarkup(t, markup, "q1"), "button", "inbox-send")
	require.Len(t, send, 1)
	assert.NotRegexp(t, bare("disabled"), send[0], "a typed answer may be sent")

	s.inbox.AnswerFailed("p1", describeAnswer(shared.Errorf(shared.CodeNotFound, "not waiting")))
	perm = itemMarkup(t, html(s), "p1")
	for _, c := range startTags(perm, "button", "permission-option") {
		assert.NotRegexp(t, bare("disabled"), c, "the choices are back")
	}
	assert.Contains(t, perm, `role="alert"`)
	assert.Contains(t, perm, "Could not answer: the agent is no longer waiting on it")
	assert.Len(t, startTags(perm, "button", `class="text-button inbox-retry"`), 1)
	assert.Contains(t, perm, ">Retry</button>")
}

func TestInboxRendersAgentAndTaskTextOnlyAsText(t *testing.T) {
	evil := `"><img src=x onerror=alert(1)>`
	r := permissionReq("p1", "a", time.Now())
	r.Title, r.ToolKind = evil, evil
	r.Options[0].Name = evil
	markup := html(onInbox([]shared.Task{newTask("a", evil, 1, nil)}, r))
	assert.NotContains(t, markup, "<img src=x")
	assert.Contains(t, markup, "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;")
}

func TestInboxOnAPhoneFillsTheMainPaneWithLargeTargets(t *testing.T) {
	s := onInbox([]shared.Task{newTask("a", "Fix login", 1, nil)}, permissionReq("p1", "a", time.Now()))
	s.phone = true
	markup := html(s)
	assert.Regexp(t, `<main[^>]*>\s*<section[^>]*id="inbox"`, markup, "the inbox is the main pane's content")
	elementWith(t, markup, idInboxToggle)

	// Every control of the inbox is at least 44px tall in the phone
	// layout, whatever the pointer.
	css := stylesheet(t)
	block := regexp.MustCompile(`(?s)((?:\.layout-phone [^{,]+,\s*)*\.layout-phone [^{,]+)\{([^}]*)\}`)
	targets := map[string]bool{}
	for _, m := range block.FindAllStringSubmatch(css, -1) {
		if !regexp.MustCompile(`min-height:\s*44px`).MatchString(m[2]) {
			continue
		}
		for _, sel := range strings.Split(m[1], ",") {
			targets[strings.TrimSpace(sel)] = true
		}
	}
	for _, sel := range []string{".inbox-toggle", ".inbox .permission-option", ".inbox .text-button", ".inbox-send", ".inbox-open", ".attention-switch"} {
		assert.True(t, targets[".layout-phone "+sel], "no 44px target rule for %s on a phone", sel)
	}
	assertStyled(t, css, "inbox", "inbox-item", "inbox-toggle", "inbox-count", "inbox-answer", "inbox-error", "attention-switch")
}

func TestTheAttentionSwitchShowsTheKeptChoice(t *testing.T) {
	s := onInbox(nil)
	assert.Regexp(t, bare("checked"), elementWith(t, html(s), idAttention), "on by default")
	s.attention.SetEnabled(false)
	assert.NotRegexp(t, bare("checked"), elementWith(t, html(s), idAttention))
}

// inboxServer is the herd server reduced to the inbox: it answers
// inbox.list with its requests and records every request it gets; the
// first `refuse` answers are refused as internal errors.
type inboxServer struct {
	requests []shared.InboxRequest
	mu       sync.Mutex
	ops      []string // guarded by mu
	refuse   int      // guarded by mu
}

func (s *inboxServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	ctx := r.Context()
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			return
		}
		req, err := shared.DecodeRequest(data)
		if err != nil {
			return
		}
		var answer any = shared.Empty{}
		op := req.Action
		switch req.Action {
		case shared.ActionInboxList:
			answer = shared.InboxListResponse{Requests: s.requests}
		case shared.ActionPermissionRespond:
			p, _ := shared.DecodePayload[shared.PermissionRespondRequest](req.Payload)
			op += " " + p.SessionID + " " + p.PendingID + " " + p.OptionID
		case shared.ActionClarificationRespond:
			p, _ := shared.DecodePayload[shared.ClarificationRespondRequest](req.Payload)
			op += " " + p.SessionID + " " + p.PendingID + " " + p.Answer
		}
		s.mu.Lock()
		s.ops = append(s.ops, op)
		refused := req.Action != shared.ActionPing && req.Action != shared.ActionInboxList && s.refuse > 0
		if refused {
			s.refuse--
		}
		s.mu.Unlock()
		env, err := shared.NewResponse(req.ID, req.Action, answer, time.Now())
		if refused {
			env = shared.NewErrorEnvelope(req.ID, req.Action, shared.Errorf(shared.CodeInternal, "the agent could not take it"), time.Now())
		}
		if err != nil {
			return
		}
		frame, _ := json.Marshal(env)
		if c.Write(ctx, websocket.MessageText, frame) != nil {
			return
		}
	}
}

// seen returns the recorded requests, pings left out.
func (s *inboxServer) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, op := range s.ops {
		if op != shared.ActionPing {
			out = append(out, op)
		}
	}
	return out
}

// shellOn returns a booted shell whose link is a real client of srv, with
// go-app's test engine to run its dispatches.
func shellOn(t *testing.T, srv *inboxServer, tasks ...shared.Task) (*shell, app.TestEngine) {
	t.Helper()
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	client := wsclient.New(wsclient.Options{URL: "ws" + strings.TrimPrefix(hs.URL, "http")})
	client.Start()
	t.Cleanup(client.Close)
	require.Eventually(t, func() bool { return client.Request(context.Background(), shared.ActionPing, nil, nil) == nil },
		5*time.Second, time.Millisecond)
	eng := app.NewTestEngine()
	var g grabber
	require.NoError(t, eng.Load(&g))
	eng.ConsumeAll()
	s := booted(tasks...)
	s.link = &link{ui: g.ctx, shell: s, client: client}
	return s, eng
}

// The inbox is answered from its listing alone: the person allows a
// permission (a refused first try, then its retry) and answers a question,
// and the server sees those answers and no session subscription.
func TestTheInboxAnswersRequestsWithoutOpeningTheirSessions(t *testing.T) {
	now := time.Now()
	srv := &inboxServer{requests: []shared.InboxRequest{permissionReq("p1", "t1", now), questionReq("q1", "t2", now)}, refuse: 1}
	s, eng := shellOn(t, srv, newTask("t1", "Fix login", 1, nil), newTask("t2", "Update docs", 2, nil))

	s.link.loadInbox(context.Background(), "w1")
	eng.ConsumeAll()
	require.Equal(t, []string{"q1", "p1"}, pendingIDsOf(s.inbox.Requests()))
	assert.Equal(t, 2, s.attention.Pending())

	until := func(what string, done func() bool) {
		t.Helper()
		require.Eventually(t, func() bool { eng.ConsumeAll(); return done() }, 5*time.Second, time.Millisecond, what)
	}
	s.answerInbox("p1", state.Answer{OptionID: "allow"})
	assert.Equal(t, state.AnswerSending, s.inbox.Answer("p1").State)
	until("the refusal arrives", func() bool { return s.inbox.Answer("p1").State == state.AnswerFailed })
	assert.Contains(t, s.inbox.Answer("p1").Err, "the agent could not take it")
	assert.Equal(t, 2, s.inbox.Len(), "a refused answer leaves the request")

	s.answerInbox("p1", s.inbox.Answer("p1"))
	until("the retry is taken", func() bool { return s.inbox.Len() == 1 })
	s.inbox.SetDraft("q1", "main")
	s.answerInbox("q1", state.Answer{Text: s.inbox.Draft("q1")})
	until("the answer is taken", func() bool { return s.inbox.Len() == 0 })
	assert.Zero(t, s.attention.Pending())

	assert.Equal(t, []string{
		shared.ActionInboxList,
		shared.ActionPermissionRespond + " s-t1 p1 allow",
		shared.ActionPermissionRespond + " s-t1 p1 allow",
		shared.ActionClarificationRespond + " s-t2 q1 main",
	}, srv.seen())
}

// The workspace feed's events reach the inbox, and a request that opens
// while the tab is hidden starts the title's flash.
func TestFeedEventsOpenAndCloseInboxRequests(t *testing.T) {
	s, eng := shellOn(t, &inboxServer{}, newTask("t1", "Fix login", 1, nil))
	s.attention.SetHidden(true)
	notify := func(action string, payload any) {
		env, err := shared.NewNotification(action, payload, time.Now())
		require.NoError(t, err)
		s.link.notify(env)
		eng.ConsumeAll()
	}
	notify(shared.NotifyInboxRequestOpened, permissionReq("p1", "t1", time.Now()))
	assert.Equal(t, 1, s.inbox.Len())
	_, flashing := s.attention.NextFlip(time.Now())
	assert.True(t, flashing, "a request opened in a hidden tab flashes the title")
	assert.Equal(t, 1, s.attention.Pending())

	notify(shared.NotifyInboxRequestClosed, shared.InboxRequestClosed{WorkspaceID: "w1", TaskID: "t1", SessionID: "s-t1", PendingID: "p1", Status: shared.MessageResolved})
	assert.Zero(t, s.inbox.Len())
	_, flashing = s.attention.NextFlip(time.Now())
	assert.False(t, flashing, "nothing waits any more")
	notify(shared.NotifyInboxRequestOpened, permissionReq("p1", "t1", time.Now()))
	assert.Zero(t, s.inbox.Len(), "a late open of a closed request stays closed")
}

// pendingIDsOf returns the pending ids of reqs in order.
func pendingIDsOf(reqs []shared.InboxRequest) []string {
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = r.PendingID
	}
	return out
}
