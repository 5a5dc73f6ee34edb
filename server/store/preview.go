package store

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"gorm.io/gorm"
)

// previewSourceChars bounds every text a summary's preview derives from,
// as SummarySources reads it: the session excerpts (sessions.last_agent_line
// and last_prompt_line, at most this many bytes when the store writes
// them, characters when migration 7 filled them) and the start of a
// pending request's content. A preview holds at most
// shared.MaxPreviewBytes bytes, so this leaves room for the white space
// and markup the projector drops.
const previewSourceChars = 512

// previewExcerpt is what a session keeps of a message for its task's
// preview: the message's first line that holds more than white space,
// without the white space around it, cut to at most previewSourceChars
// bytes on a character boundary. Lines end at "\n" or "\r". It is "" for
// a message of white space only. The projector makes the preview of it
// (projector.Derive); keeping only one bounded line here means that a
// projection never reads a transcript, and that a long message costs its
// session row no more than a short one.
func previewExcerpt(content string) string {
	for line := range strings.FieldsFuncSeq(content, func(r rune) bool { return r == '\n' || r == '\r' }) {
		line = strings.TrimFunc(line, unicode.IsSpace)
		if line == "" {
			continue
		}
		if len(line) > previewSourceChars {
			cut := previewSourceChars
			for cut > 0 && !utf8.RuneStart(line[cut]) {
				cut--
			}
			line = line[:cut]
		}
		return line
	}
	return ""
}

// The session columns that keep the excerpts: of the newest agent message
// that became complete, and of the newest prompt sent to the agent.
const (
	agentLineColumn  = "last_agent_line"
	promptLineColumn = "last_prompt_line"
)

// recordLine sets column (agentLineColumn or promptLineColumn) of a
// session to the excerpt of content, unless content has none: a message
// of white space only keeps the line the session had. The session's
// updated_at stays: it dates state changes, and the summary's
// last_activity_at with it.
func recordLine(tx *gorm.DB, column, sessionID, content string) error {
	line := previewExcerpt(content)
	if line == "" {
		return nil
	}
	return tx.Model(&sessionRow{}).Where("id = ?", sessionID).UpdateColumn(column, line).Error
}
