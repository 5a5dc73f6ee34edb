package ui

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/maxence-charriere/go-app/v10/pkg/app"
	"github.com/stretchr/testify/assert"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/shared"
)

// openView returns a session pane showing a loaded session in st with msgs.
func openView(st shared.SessionState, msgs ...shared.Message) *sessionView {
	v := &sessionView{shell: booted(), taskID: "t1", openID: "s1", answers: map[string]string{}}
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
