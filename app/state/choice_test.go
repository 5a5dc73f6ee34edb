package state

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

// claudeOptions are the choices Claude's adapter offers for a Bash call,
// with its own labels.
var claudeOptions = []shared.PermissionOption{
	{OptionID: "allow_always", Name: "Always Allow", Kind: OptionAllowAlways},
	{OptionID: "allow", Name: "Allow", Kind: OptionAllowOnce},
	{OptionID: "reject", Name: "Reject", Kind: OptionRejectOnce},
}

func permissionMsg(status shared.MessageState, selected string, options ...shared.PermissionOption) shared.Message {
	return shared.Message{ID: "m", Type: shared.MessagePermissionRequest, Status: status,
		Metadata: &shared.MessageMetadata{Options: options, SelectedOptionID: selected}}
}

// The transcript says which of the agent's options was chosen, in the
// agent's words, and keeps its kind for the colour.
func TestChosenOptionSaysTheAgentsLabel(t *testing.T) {
	c := ChosenOption(permissionMsg(shared.MessageResolved, "allow_always", claudeOptions...))
	require.Equal(t, Choice{Words: "You chose: Always Allow", Kind: OptionAllowAlways}, c)
	require.Equal(t, "allow", OptionTone(c.Kind))
}

func TestChosenOptionWithoutAnAnswer(t *testing.T) {
	cases := []struct {
		name string
		msg  shared.Message
		want Choice
	}{
		{"still waiting", permissionMsg(shared.MessagePending, "", claudeOptions...), Choice{Words: "Waiting for your answer, below."}},
		{"cancelled", permissionMsg(shared.MessageCancelled, "", claudeOptions...), Choice{Words: "Cancelled before you answered."}},
		{"an id the request never offered", permissionMsg(shared.MessageResolved, "ghost", claudeOptions...), Choice{Words: "You chose: ghost"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { require.Equal(t, c.want, ChosenOption(c.msg)) })
	}
}

// Every ACP kind has words of its own when the agent gives no label, and
// an unknown kind is never coloured as an allow.
func TestOptionLabelsAndTonesByKind(t *testing.T) {
	cases := []struct {
		kind, label, tone string
	}{
		{OptionAllowOnce, "Allow once", "allow"},
		{OptionAllowAlways, "Allow always", "allow"},
		{OptionRejectOnce, "Reject once", "reject"},
		{OptionRejectAlways, "Reject always", "reject"},
		{"allow_forever_and_ever", "x", "neutral"},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			require.Equal(t, c.label, OptionLabel(shared.PermissionOption{OptionID: "x", Kind: c.kind}))
			require.Equal(t, c.tone, OptionTone(c.kind))
		})
	}
	require.Equal(t, "Yes, and don't ask again", OptionLabel(shared.PermissionOption{OptionID: "x", Name: "Yes, and don't ask again", Kind: OptionAllowAlways}))
}
