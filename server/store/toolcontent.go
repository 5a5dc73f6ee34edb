package store

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"gorm.io/gorm"

	"github.com/herd-dev/herd/shared"
)

// toolContentRow is a row of tool_contents: one part's body.
type toolContentRow struct {
	MessageID string `gorm:"column:message_id;primaryKey"`
	Position  int    `gorm:"column:position;primaryKey"`
	Size      int    `gorm:"column:size"`
	Body      []byte `gorm:"column:body"`
}

// TableName implements gorm's schema.Tabler.
func (toolContentRow) TableName() string { return "tool_contents" }

// replaceToolBodies makes bodies the parts of messageID's content.
func replaceToolBodies(tx *gorm.DB, messageID string, bodies []string) error {
	if err := tx.Where("message_id = ?", messageID).Delete(&toolContentRow{}).Error; err != nil {
		return fmt.Errorf("replace tool content of message %s: %w", messageID, err)
	}
	for i, b := range bodies {
		row := toolContentRow{MessageID: messageID, Position: i, Size: len(b), Body: []byte(b)}
		if err := tx.Create(&row).Error; err != nil {
			return fmt.Errorf("store tool content of message %s: %w", messageID, err)
		}
	}
	return nil
}

// ToolContentPage returns the bytes of part r.Part of a tool call
// message's content from r.Offset on, at most r.Limit (ToolPageBytes when
// 0), cut back to a character boundary. The database cuts the page, so a
// large body is never read whole. Unknown messages and parts are
// not_found, an offset past the end bad_request.
func (s *Store) ToolContentPage(ctx context.Context, r shared.ToolContentGetRequest) (shared.ToolContentPage, error) {
	if err := r.Validate(); err != nil {
		return shared.ToolContentPage{}, err
	}
	limit := r.Limit
	if limit == 0 {
		limit = shared.ToolPageBytes
	}
	var msg messageRow
	err := s.read.WithContext(ctx).Select("id", "type").Where("id = ? AND session_id = ?", r.MessageID, r.SessionID).Take(&msg).Error
	if errors.Is(err, gorm.ErrRecordNotFound) || (err == nil && msg.Type != string(shared.MessageToolCall)) {
		return shared.ToolContentPage{}, shared.Errorf(shared.CodeNotFound, "tool call %q not found in session %q", r.MessageID, r.SessionID)
	}
	if err != nil {
		return shared.ToolContentPage{}, fmt.Errorf("load message %s: %w", r.MessageID, err)
	}
	// Three bytes more than the page, so a character the limit splits
	// can be recognised and left to the next page.
	page := "substr(body, ?, ?)"
	if s.dialect == dialectPostgres {
		page = "substring(body from ? for ?)"
	}
	var row toolContentRow
	err = s.read.WithContext(ctx).Model(&toolContentRow{}).Select("size, "+page+" AS body", r.Offset+1, limit+utf8.UTFMax-1).
		Where("message_id = ? AND position = ?", r.MessageID, r.Part).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return shared.ToolContentPage{}, shared.Errorf(shared.CodeNotFound, "tool call %q has no content part %d", r.MessageID, r.Part)
	}
	if err != nil {
		return shared.ToolContentPage{}, fmt.Errorf("load tool content of message %s: %w", r.MessageID, err)
	}
	if r.Offset > row.Size {
		return shared.ToolContentPage{}, shared.Errorf(shared.CodeBadRequest, "offset %d is past the end of part %d (%d bytes)", r.Offset, r.Part, row.Size)
	}
	if len(row.Body) > 0 && !utf8.RuneStart(row.Body[0]) {
		return shared.ToolContentPage{}, shared.Errorf(shared.CodeBadRequest, "offset %d is inside a character; start where a page ended", r.Offset)
	}
	return shared.ToolContentPage{
		MessageID: r.MessageID, Part: r.Part, Offset: r.Offset, Body: string(cutPage(row.Body, limit)), Size: row.Size,
	}, nil
}

// cutPage returns the first limit bytes of b, less a character the limit
// splits. b starts on a character boundary (every page ends on one).
func cutPage(b []byte, limit int) []byte {
	if len(b) <= limit {
		return b
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	if cut == 0 {
		// One character longer than the page: send it whole.
		_, n := utf8.DecodeRune(b)
		return b[:n]
	}
	return b[:cut]
}
