package state

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/herd-dev/herd/shared"
)

func TestAnOpenRequestHeadsTheSessionNotItsActivity(t *testing.T) {
	running := shared.Session{State: shared.SessionRunning, ForegroundActivity: shared.ActivityGenerating}
	question := shared.Message{ID: "q", Type: shared.MessageClarificationRequest, Status: shared.MessagePending}
	permission := shared.Message{ID: "p", Type: shared.MessagePermissionRequest, Status: shared.MessagePending}
	answered := shared.Message{ID: "a", Type: shared.MessagePermissionRequest, Status: shared.MessageResolved}
	agent := shared.Message{ID: "m", Type: shared.MessageAgent, Status: shared.MessagePending}

	open := OpenRequests([]shared.Message{answered, question, agent, permission})
	assert.Equal(t, []shared.Message{question, permission}, open, "only waiting requests, in transcript order")

	assert.Equal(t, IndicatorPermission, Headline(running, open), "a permission outranks a question")
	assert.Equal(t, "Needs your permission", HeadlineLabel(Headline(running, open)))
	assert.Equal(t, "Asked you a question", HeadlineLabel(Headline(running, open[:1])))
	assert.Equal(t, IndicatorGenerating, Headline(running, OpenRequests([]shared.Message{answered})))
}
