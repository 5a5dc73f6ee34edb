package state

import (
	"slices"

	"github.com/herd-dev/herd/shared"
)

// partial reports whether an update carries only appended bytes of its
// content or of a tool content part (append_from), to be completed from
// the copy the client holds.
func partial(m shared.Message) bool {
	if m.AppendFrom != nil {
		return true
	}
	if m.Metadata != nil {
		for _, p := range m.Metadata.Content {
			if p.AppendFrom != nil {
				return true
			}
		}
	}
	return false
}

// completed returns the partial update m made whole from base, the copy
// held (had says there is one): each delta's first append_from bytes come
// from base. It reports false when base lacks them; the client must then
// fetch the message rather than guess.
func completed(base shared.Message, had bool, m shared.Message) (shared.Message, bool) {
	if !had {
		return m, false
	}
	if m.AppendFrom != nil {
		from := *m.AppendFrom
		if from < 0 || from > len(base.Content) {
			return m, false
		}
		m.Content = base.Content[:from] + m.Content
		m.AppendFrom = nil
	}
	if m.Metadata == nil || !partial(shared.Message{Metadata: m.Metadata}) {
		return m, true
	}
	var held []shared.ToolContent
	if base.Metadata != nil {
		held = base.Metadata.Content
	}
	meta := *m.Metadata
	meta.Content = slices.Clone(meta.Content)
	for i, p := range meta.Content {
		if p.AppendFrom == nil {
			continue
		}
		from := *p.AppendFrom
		if i >= len(held) || from < 0 || from > len(held[i].Body) {
			return m, false
		}
		meta.Content[i].Body = held[i].Body[:from] + p.Body
		meta.Content[i].AppendFrom = nil
	}
	m.Metadata = &meta
	return m, true
}
