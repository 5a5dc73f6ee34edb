package ui

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/maxence-charriere/go-app/v10/pkg/app"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/shared"
)

// openView returns a session pane showing a loaded session in st with msgs.
func openView(st shared.SessionState, msgs ...shared.Message) *sessionView {
	task := newTask("t1", "Fix login", 1, &shared.TaskStatusSummary{Revision: 1})
	s := booted(task)
	s.route = state.Route{TaskID: "t1"}
	tv := s.taskViewOf(task)
	v := &sessionView{tv: tv, taskID: "t1", openID: "s1", drafts: state.NewDrafts(state.MapKV{}), tools: state.NewToolFetches()}
	tv.view = v
	v.detail = state.NewSessionDetail("s1")
	v.detail.Load(shared.SessionSnapshot{Session: shared.Session{ID: "s1", State: st}, Messages: msgs})
	v.outbox = state.NewOutbox(state.MapKV{}, "s1", func() string { return "cm-1" })
	return v
}

func paneHTML(v *sessionView) string { return app.HTMLString(app.Div().Body(v.renderSessionPane())) }

func TestComposerFollowsTheSessionState(t *testing.T) {
	tests := []struct {
		state    shared.SessionState
		label    string
		disabled bool
	}{
		{shared.SessionWaitingForInput, "Send", false},
		{shared.SessionRunning, "Queue", false},
		{shared.SessionStarting, "Send", true},
		{shared.SessionFailed, "Send", true},
	}
	for _, tt := range tests {
		t.Run(string(tt.state), func(t *testing.T) {
			tag := elementWith(t, paneHTML(openView(tt.state)), idComposerSend)
			assert.Equal(t, tt.disabled, regexpDisabled.MatchString(tag), tag)
			assert.Contains(t, paneHTML(openView(tt.state)), ">"+tt.label+"</button>")
		})
	}
}

func TestTranscriptRendersTextOnlyAsText(t *testing.T) {
	evil := `"><img src=x onerror=alert(1)>`
	perm := shared.Message{ID: "m2", Seq: 2, Type: shared.MessagePermissionRequest, Status: shared.MessagePending,
		Content: evil, PendingID: "p1"}
	_ = json.Unmarshal([]byte(`{"options":[{"option_id":"allow","name":"Allow \"now\""}]}`), &perm.Metadata)
	v := openView(shared.SessionRunning,
		shared.Message{ID: "m1", Seq: 1, Type: shared.MessageUser, Status: shared.MessageComplete, Content: evil}, perm)
	markup := paneHTML(v)
	assert.NotContains(t, markup, "<img")
	assert.Contains(t, markup, `data-option-id="allow"`)
	assert.Contains(t, markup, `id="session-cancel"`)
	assert.Contains(t, markup, `data-state="RUNNING"`)
}

var regexpDisabled = regexp.MustCompile(`\bdisabled\b`)

func TestSessionHeaderUsesTheRowIndicatorsAndCountsSubagents(t *testing.T) {
	tests := []struct {
		name    string
		session shared.Session
		class   string
		label   string
		extra   string
	}{
		{"generating", shared.Session{ID: "s1", State: shared.SessionRunning, ForegroundActivity: shared.ActivityGenerating}, "state-generating", "Generating", ""},
		{"background with subagents", shared.Session{ID: "s1", State: shared.SessionRunning, ForegroundActivity: shared.ActivityBackground, ActiveSubagentCount: 2}, "state-background", "Working in the background", "2 subagents"},
		{"one subagent", shared.Session{ID: "s1", State: shared.SessionRunning, ForegroundActivity: shared.ActivityGenerating, ActiveSubagentCount: 1}, "state-generating", "Generating", "1 subagent<"},
		{"waiting", shared.Session{ID: "s1", State: shared.SessionWaitingForInput}, "state-waiting", "Waiting for input", ""},
		{"failed", shared.Session{ID: "s1", State: shared.SessionFailed}, "state-failed", "Failed", ""},
		{"context not restored", shared.Session{ID: "s1", State: shared.SessionWaitingForInput, ContextLost: "the agent offers neither session/resume nor session/load"},
			"state-waiting", "Waiting for input", ">Context not restored: the agent does not remember earlier turns<"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := openView(tt.session.State)
			v.detail.SetSession(tt.session)
			markup := paneHTML(v)
			assert.Contains(t, elementWith(t, markup, "session-state"), `role="status"`)
			icon := tagWithClass(t, markup, "state-icon")
			assert.Contains(t, icon, `class="state-icon `+tt.class+`"`)
			assert.Contains(t, icon, `title="`+tt.label+`"`)
			assert.Contains(t, markup, ">"+tt.label+"</span>", "the state is named in words")
			if tt.session.ContextLost != "" {
				assert.Contains(t, tagWithClass(t, markup, "context-lost"), `title="`+tt.session.ContextLost+`"`, "the reason is the chip's tooltip")
			}
			if tt.extra != "" {
				assert.Contains(t, markup, tt.extra)
			} else {
				assert.NotContains(t, markup, "subagent")
			}
		})
	}
}

func TestSessionListAnsweredAfterANewerActivityEventDoesNotOverwriteIt(t *testing.T) {
	v := openView(shared.SessionRunning)
	v.detail.SetSession(shared.Session{ID: "s1", State: shared.SessionRunning, ForegroundActivity: shared.ActivityGenerating, StateRevision: 7})
	v.sessions = []shared.Session{v.detail.Session()}
	raw, _ := json.Marshal(shared.SessionStateEvent{SessionID: "s1", State: shared.SessionRunning, ForegroundActivity: shared.ActivityBackground, ActiveSubagentCount: 1, StateRevision: 8})
	v.detail.Push(shared.Envelope{Type: shared.TypeNotification, Action: shared.NotifySessionActivityChanged, Seq: 1, Payload: raw})
	v.updateListed()

	v.setListed([]shared.Session{{ID: "s1", State: shared.SessionRunning, ForegroundActivity: shared.ActivityGenerating, StateRevision: 7}})
	assert.Equal(t, state.IndicatorBackground, state.SessionIndicator(v.detail.Session()))
	assert.Equal(t, int64(8), v.sessions[0].StateRevision, "the tab shows the newer copy")
	assert.Contains(t, paneHTML(v), "Session 1 · Working in the background")
}

// The agent picker names what an agent lacks: one that cannot start here
// is listed but cannot be chosen; one that asked to be authenticated says
// how.
func TestAgentPickerNamesWhatAnAgentLacks(t *testing.T) {
	v := openView(shared.SessionWaitingForInput)
	v.tv.Shell.store.SetAgentProfiles([]shared.AgentProfile{
		{ID: "mock", Name: "Mock agent", Available: true},
		{ID: "claude-code", Name: "Claude Code", Missing: "needs npx and node on PATH"},
		{ID: "codex", Name: "Codex", Available: true, AuthRequired: []shared.AuthMethod{
			{ID: "api-key", Name: "API Key", Vars: []string{"CODEX_API_KEY", "OPENAI_API_KEY"}}, {ID: "chat-gpt", Name: "ChatGPT"},
		}},
	})
	v.tv.Profiles = v.tv.Shell.store.AgentProfiles()
	markup := paneHTML(v)
	claude := regexp.MustCompile(`<option[^>]*value="claude-code"[^>]*>`).FindString(markup)
	assert.Regexp(t, regexpDisabled, claude, "an unavailable agent cannot be chosen")
	assert.Contains(t, claude, `title="needs npx and node on PATH"`)
	assert.Contains(t, markup, ">Claude Code (unavailable)<")
	codex := regexp.MustCompile(`<option[^>]*value="codex"[^>]*>([^<]*)<`).FindStringSubmatch(markup)
	require.Len(t, codex, 2, "the Codex option")
	assert.Equal(t, "Codex (needs authentication)", codex[1])
	assert.Contains(t, codex[0], `title="Sign in: API Key: set CODEX_API_KEY or OPENAI_API_KEY; ChatGPT"`, "attributes come in any order")
	assert.Contains(t, markup, ">Mock agent<")
}
