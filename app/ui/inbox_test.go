package ui

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/app/state"
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
