package state

import "github.com/herd-dev/herd/shared"

// OpenRequests returns the permission and clarification requests of a
// transcript that still wait for the person, oldest first: the agent's
// turn is blocked on the first of them.
func OpenRequests(msgs []shared.Message) []shared.Message {
	var open []shared.Message
	for _, m := range msgs {
		if m.Status == shared.MessagePending &&
			(m.Type == shared.MessagePermissionRequest || m.Type == shared.MessageClarificationRequest) {
			open = append(open, m)
		}
	}
	return open
}

// Headline is what a session's header says it is doing. An open request
// comes first: the agent is blocked on the person, so the header never
// says it is generating while it waits for them. Otherwise it is the
// session's indicator.
func Headline(s shared.Session, open []shared.Message) Indicator {
	for _, m := range open {
		if m.Type == shared.MessagePermissionRequest {
			return IndicatorPermission
		}
	}
	if len(open) > 0 {
		return IndicatorClarification
	}
	return SessionIndicator(s)
}

// HeadlineLabel says a headline to the person the session waits on.
func HeadlineLabel(i Indicator) string {
	switch i {
	case IndicatorPermission:
		return "Needs your permission"
	case IndicatorClarification:
		return "Asked you a question"
	}
	return i.Label()
}
