package ui

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/herd-dev/herd/shared"
)

// A streamed message that ended before its agent finished it says so; one
// that ended normally carries no note.
func TestCutOffMessagesSaySo(t *testing.T) {
	tests := []struct {
		status shared.MessageState
		note   string
	}{
		{shared.MessageComplete, ""},
		{shared.MessageStreaming, ""},
		{shared.MessageFailed, "Cut off"},
		{shared.MessageCancelled, "Stopped before"},
	}
	for _, tt := range tests {
		t.Run(string(tt.status), func(t *testing.T) {
			markup := paneHTML(openView(shared.SessionWaitingForInput,
				shared.Message{ID: "m1", Seq: 1, Type: shared.MessageAgent, Status: tt.status, Content: "0 1 2 "}))
			if tt.note == "" {
				assert.NotContains(t, markup, `class="message-note"`)
				return
			}
			assert.Contains(t, markup, `class="message-note"`)
			assert.Contains(t, markup, tt.note)
		})
	}
}
