package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"gorm.io/gorm"

	"github.com/herd-dev/herd/shared"
)

// The store keeps a session's agent facts (title, usage and cost, slash
// commands) bounded and clean whatever the agent sent, so no later reader
// has to distrust them: the limits are shared's Max* constants.

// SetSessionTitle stores the title an agent gave a session, cleaned by
// CleanTitle. A title that cleans to "" leaves the stored one. It reports
// changed false, and writes nothing, when the title is stored already. The
// session's updated_at stays: it dates state changes.
func (s *Store) SetSessionTitle(ctx context.Context, id, title string) (shared.Session, bool, error) {
	title = CleanTitle(title)
	if title == "" {
		row, err := s.loadSession(ctx, id)
		return row.toSession(), false, err
	}
	res := s.write.WithContext(ctx).Model(&sessionRow{}).
		Where("id = ? AND title <> ?", id, title).UpdateColumn("title", title)
	if res.Error != nil {
		return shared.Session{}, false, fmt.Errorf("update title of session %s: %w", id, res.Error)
	}
	row, err := s.loadSession(ctx, id)
	if err != nil {
		return shared.Session{}, false, err
	}
	return row.toSession(), res.RowsAffected == 1, nil
}

// UsageChange says what SetSessionUsage changed.
type UsageChange struct {
	// Usage is set when the context usage or the cost changed.
	Usage bool
	// Cost is set when the cost changed: the task's summary sums it.
	Cost bool
}

// SetSessionUsage stores a session's latest context usage and, when cost
// is not nil, its cumulative cost; a nil cost keeps the stored one (agents
// report cost less often than usage). Negative token counts count as 0; a
// cost that is negative, not finite or not in an ISO 4217-like currency
// code (one to eight letters, stored in upper case) is ignored. It writes
// nothing when nothing changed; updated_at stays, so usage alone never
// reads as activity.
func (s *Store) SetSessionUsage(ctx context.Context, id string, used, size int, cost *shared.Cost) (shared.Session, UsageChange, error) {
	used, size, cost = max(used, 0), max(size, 0), cleanCost(cost)
	var change UsageChange
	err := s.write.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var row sessionRow
		if err := tx.Where("id = ?", id).Take(&row).Error; err != nil {
			return err
		}
		set := map[string]any{}
		if !row.HasUsage || row.ContextUsed != used || row.ContextSize != size {
			set["has_usage"], set["context_used"], set["context_size"] = true, used, size
		}
		if cost != nil && (row.CostAmount != cost.Amount || row.CostCurrency != cost.Currency) {
			set["has_usage"], set["cost_amount"], set["cost_currency"] = true, cost.Amount, cost.Currency
			change.Cost = true
		}
		if len(set) == 0 {
			return nil
		}
		change.Usage = true
		return tx.Model(&sessionRow{}).Where("id = ?", id).UpdateColumns(set).Error
	})
	if err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return shared.Session{}, UsageChange{}, sessionNotFound(id)
		}
		return shared.Session{}, UsageChange{}, fmt.Errorf("update usage of session %s: %w", id, err)
	}
	row, err := s.loadSession(ctx, id)
	if err != nil {
		return shared.Session{}, UsageChange{}, err
	}
	return row.toSession(), change, nil
}

// SetSessionCommands stores the slash commands an agent offers in a
// session, cleaned by CleanCommands, and returns them as stored. It
// reports changed false, and writes nothing, when they are stored already.
func (s *Store) SetSessionCommands(ctx context.Context, id string, cmds []shared.SlashCommand) ([]shared.SlashCommand, bool, error) {
	cmds = CleanCommands(cmds)
	raw, err := json.Marshal(cmds)
	if err != nil {
		return nil, false, fmt.Errorf("encode commands of session %s: %w", id, err)
	}
	res := s.write.WithContext(ctx).Model(&sessionRow{}).
		Where("id = ? AND commands <> ?", id, string(raw)).UpdateColumn("commands", string(raw))
	if res.Error != nil {
		return nil, false, fmt.Errorf("update commands of session %s: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		if _, err := s.loadSession(ctx, id); err != nil {
			return nil, false, err
		}
	}
	return cmds, res.RowsAffected == 1, nil
}

// SessionCommands returns the slash commands a session's agent last
// offered; never nil.
func (s *Store) SessionCommands(ctx context.Context, id string) ([]shared.SlashCommand, error) {
	var raw []string
	err := s.read.WithContext(ctx).Model(&sessionRow{}).Where("id = ?", id).Pluck("commands", &raw).Error
	if err != nil {
		return nil, fmt.Errorf("load commands of session %s: %w", id, err)
	}
	if len(raw) == 0 {
		return nil, sessionNotFound(id)
	}
	cmds := []shared.SlashCommand{}
	if err := json.Unmarshal([]byte(raw[0]), &cmds); err != nil {
		return nil, fmt.Errorf("decode commands of session %s: %w", id, err)
	}
	return cmds, nil
}

// CleanTitle makes an agent's title showable: valid UTF-8, control and
// format characters dropped (no bidi overrides), white space collapsed to
// single spaces and trimmed, at most shared.MaxSessionTitleBytes (cut on
// a character boundary, ending in "…").
func CleanTitle(title string) string {
	return oneLine(title, shared.MaxSessionTitleBytes)
}

// CleanCommands bounds a command list: commands whose name is empty,
// longer than shared.MaxCommandNameBytes, starts with "/" or holds white
// space or control characters are dropped, as are repeated names and
// those beyond shared.MaxSlashCommands; descriptions and hints become one
// line of at most their Max* bytes. Never nil.
func CleanCommands(cmds []shared.SlashCommand) []shared.SlashCommand {
	out := make([]shared.SlashCommand, 0, min(len(cmds), shared.MaxSlashCommands))
	seen := make(map[string]bool, len(cmds))
	for _, c := range cmds {
		if len(out) == shared.MaxSlashCommands {
			break
		}
		if !commandName(c.Name) || seen[c.Name] {
			continue
		}
		seen[c.Name] = true
		out = append(out, shared.SlashCommand{
			Name:        c.Name,
			Description: oneLine(c.Description, shared.MaxCommandDescriptionBytes),
			Hint:        oneLine(c.Hint, shared.MaxCommandHintBytes),
		})
	}
	return out
}

// commandName reports whether name can follow "/" at the start of a prompt.
func commandName(name string) bool {
	if name == "" || len(name) > shared.MaxCommandNameBytes || !utf8.ValidString(name) || name[0] == '/' {
		return false
	}
	return strings.IndexFunc(name, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
	}) < 0
}

// oneLine returns text as one clean line of at most limit bytes.
func oneLine(text string, limit int) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToValidUTF8(text, "\uFFFD") {
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return shared.Clip(b.String(), limit)
}

// cleanCost returns cost with its currency in upper case, or nil when it
// cannot be a cost.
func cleanCost(cost *shared.Cost) *shared.Cost {
	if cost == nil || cost.Amount < 0 || math.IsNaN(cost.Amount) || math.IsInf(cost.Amount, 0) {
		return nil
	}
	cur := strings.ToUpper(cost.Currency)
	if len(cur) == 0 || len(cur) > 8 || strings.IndexFunc(cur, func(r rune) bool { return r < 'A' || r > 'Z' }) >= 0 {
		return nil
	}
	return &shared.Cost{Amount: cost.Amount, Currency: cur}
}
