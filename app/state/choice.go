package state

import (
	"strings"

	"github.com/herd-dev/herd/shared"
)

// Permission option kinds, as ACP names them.
const (
	OptionAllowOnce    = "allow_once"
	OptionAllowAlways  = "allow_always"
	OptionRejectOnce   = "reject_once"
	OptionRejectAlways = "reject_always"
)

// OptionTone groups a permission option's kind for its colour: "allow" or
// "reject"; an unknown kind is "neutral", so nothing an agent invents is
// dressed as a safe choice.
func OptionTone(kind string) string {
	switch kind {
	case OptionAllowOnce, OptionAllowAlways:
		return "allow"
	case OptionRejectOnce, OptionRejectAlways:
		return "reject"
	}
	return "neutral"
}

// OptionLabel is what a button of the option says: the agent's own label,
// or, when it gave none, words for its kind (its id as the last resort).
func OptionLabel(o shared.PermissionOption) string {
	if strings.TrimSpace(o.Name) != "" {
		return o.Name
	}
	switch o.Kind {
	case OptionAllowOnce:
		return "Allow once"
	case OptionAllowAlways:
		return "Allow always"
	case OptionRejectOnce:
		return "Reject once"
	case OptionRejectAlways:
		return "Reject always"
	}
	return o.OptionID
}

// Choice says how a permission request ended, for the transcript: the
// option chosen ("You chose: Allow always") with its kind, or, for a
// request the agent withdrew or herd cancelled, that nothing was chosen.
// Kind is empty when no option was chosen or the chosen id is not among
// the request's options.
type Choice struct {
	Words string
	Kind  string
}

// ChosenOption derives the Choice of a permission request message.
func ChosenOption(m shared.Message) Choice {
	var meta shared.MessageMetadata
	if m.Metadata != nil {
		meta = *m.Metadata
	}
	if meta.SelectedOptionID != "" {
		for _, o := range meta.Options {
			if o.OptionID == meta.SelectedOptionID {
				return Choice{Words: "You chose: " + OptionLabel(o), Kind: o.Kind}
			}
		}
		return Choice{Words: "You chose: " + meta.SelectedOptionID}
	}
	switch m.Status {
	case shared.MessagePending:
		return Choice{Words: "Waiting for your answer, below."}
	case shared.MessageCancelled:
		return Choice{Words: "Cancelled before you answered."}
	}
	return Choice{Words: "Not answered."}
}
