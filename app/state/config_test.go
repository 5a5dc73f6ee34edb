package state

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

// claudeLikeConfig is the shape of Claude's options: mode first, then
// model, effort and two of its own.
func claudeLikeConfig(model string) *shared.SessionConfig {
	return &shared.SessionConfig{Options: []shared.ConfigOption{
		{ID: "mode", Name: "Mode", Category: shared.ConfigCategoryMode, Type: shared.ConfigSelect, CurrentValue: "default",
			Values: []shared.ConfigValue{{Value: "default", Name: "Manual"}, {Value: "plan", Name: "Plan"}}},
		{ID: "fast", Name: "Fast mode", Category: "model_config", Type: shared.ConfigSelect, CurrentValue: "off",
			Values: []shared.ConfigValue{{Value: "on", Name: "On"}, {Value: "off", Name: "Off"}}},
		{ID: "model", Name: "Model", Category: shared.ConfigCategoryModel, Type: shared.ConfigSelect, CurrentValue: model,
			Values: []shared.ConfigValue{{Value: "opus", Name: "Opus 5.5"}, {Value: "sonnet", Name: "Sonnet 5.5"}}},
		{ID: "verbose", Name: "Verbose", Type: shared.ConfigBoolean, CurrentValue: "false"},
		{ID: "effort", Name: "Effort", Category: shared.ConfigCategoryThoughtLevel, Type: shared.ConfigSelect, CurrentValue: "high",
			Values: []shared.ConfigValue{{Value: "high", Name: "High"}}},
	}}
}

func TestConfigControlsPutModelModeAndEffortFirst(t *testing.T) {
	controls := ConfigControls(claudeLikeConfig("opus"), map[string]string{"model": "sonnet"})
	var ids []string
	for _, c := range controls {
		ids = append(ids, c.Option.ID)
	}
	assert.Equal(t, []string{"model", "mode", "effort", "fast", "verbose"}, ids, "the agent's own options keep its order")
	assert.Equal(t, "sonnet", controls[0].Value, "a change on its way shows what was chosen")
	assert.True(t, controls[0].Busy)
	assert.Equal(t, "default", controls[1].Value)
	assert.False(t, controls[1].Busy)
	assert.Nil(t, ConfigControls(nil, nil))
}

func TestChoicesKeepACurrentValueTheAgentDoesNotList(t *testing.T) {
	o := claudeLikeConfig("claude-opus-5-5[1m]").Options[2]
	choices := Choices(o)
	require.Len(t, choices, 3)
	assert.Equal(t, "claude-opus-5-5[1m]", choices[0].Value)
	assert.Equal(t, "claude-opus-5-5[1m]", ValueName(o, o.CurrentValue))
	listed := claudeLikeConfig("sonnet").Options[2]
	assert.Len(t, Choices(listed), 2)
	assert.Equal(t, "Sonnet 5.5", ValueName(listed, "sonnet"))
}

func TestSessionConfigFollowsItsEventsAndNotOlderRecords(t *testing.T) {
	d := NewSessionDetail("s1")
	held := shared.Session{ID: "s1", State: shared.SessionWaitingForInput, StateRevision: 3, Config: claudeLikeConfig("opus")}
	d.SetSession(held)
	assert.Equal(t, "opus", d.Session().Config.Options[2].CurrentValue, "before the snapshot the record's configuration shows")
	d.Load(shared.SessionSnapshot{Session: held})
	d.Push(note(shared.NotifySessionConfigUpdated, 1, shared.SessionConfigEvent{SessionID: "s1", Config: *claudeLikeConfig("sonnet")}))
	assert.Equal(t, "sonnet", d.Session().Config.Options[2].CurrentValue)
	// A session.list read before the change carries the old model at the
	// same revision: the configuration stays.
	d.SetSession(held)
	assert.Equal(t, "sonnet", d.Session().Config.Options[2].CurrentValue)
	// A reconnect keeps showing it until the next snapshot says otherwise.
	d.Reset()
	assert.Equal(t, "sonnet", d.Session().Config.Options[2].CurrentValue)
	d.Load(shared.SessionSnapshot{Session: shared.Session{ID: "s1", StateRevision: 3, Config: claudeLikeConfig("opus")}})
	assert.Equal(t, "opus", d.Session().Config.Options[2].CurrentValue, "the snapshot is the configuration at subscription")
}

func TestAnOlderRecordKeepsTheTitleAndUsageTheStreamBrought(t *testing.T) {
	d := NewSessionDetail("s1")
	held := shared.Session{ID: "s1", State: shared.SessionWaitingForInput, StateRevision: 3, Title: "old title"}
	d.Load(shared.SessionSnapshot{Session: held})
	d.Push(note(shared.NotifySessionInfoUpdated, 1, shared.SessionInfoEvent{SessionID: "s1", Title: "new title",
		Usage: &shared.SessionUsage{Used: 10, Size: 100}}))
	require.Equal(t, "new title", d.Session().Title)
	d.SetSession(held) // a session.list read before the event
	assert.Equal(t, "new title", d.Session().Title)
	require.NotNil(t, d.Session().Usage)
	assert.Equal(t, 10, d.Session().Usage.Used)
}
