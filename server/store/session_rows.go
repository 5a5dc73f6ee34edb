package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"

	"github.com/herd-dev/herd/shared"
)

// sessionRow is a row of sessions.
type sessionRow struct {
	ID                  string    `gorm:"column:id;primaryKey"`
	TaskID              string    `gorm:"column:task_id"`
	AgentProfileID      string    `gorm:"column:agent_profile_id"`
	State               string    `gorm:"column:state"`
	ForegroundActivity  string    `gorm:"column:foreground_activity"`
	ActiveSubagentCount int       `gorm:"column:active_subagent_count"`
	StateRevision       int64     `gorm:"column:state_revision"`
	ErrorMessage        string    `gorm:"column:error_message"`
	AgentSessionID      string    `gorm:"column:agent_session_id"`
	ContextLost         string    `gorm:"column:context_lost"`
	Config              string    `gorm:"column:config"`
	NextMessageSeq      int64     `gorm:"column:next_message_seq"`
	Title               string    `gorm:"column:title"`
	HasUsage            bool      `gorm:"column:has_usage"`
	ContextUsed         int       `gorm:"column:context_used"`
	ContextSize         int       `gorm:"column:context_size"`
	CostAmount          float64   `gorm:"column:cost_amount"`
	CostCurrency        string    `gorm:"column:cost_currency"`
	CreatedAt           time.Time `gorm:"column:created_at"`
	UpdatedAt           time.Time `gorm:"column:updated_at"`

	// PromptCapabilities is the JSON of a shared.PromptCapabilities; ''
	// until the agent started once.
	PromptCapabilities string `gorm:"column:prompt_capabilities"`
}

// TableName implements gorm's schema.Tabler.
func (sessionRow) TableName() string { return "sessions" }

func (r sessionRow) toSession() shared.Session {
	s := shared.Session{
		ID:                  r.ID,
		TaskID:              r.TaskID,
		AgentProfileID:      r.AgentProfileID,
		State:               shared.SessionState(r.State),
		ForegroundActivity:  shared.ForegroundActivity(r.ForegroundActivity),
		ActiveSubagentCount: r.ActiveSubagentCount,
		StateRevision:       r.StateRevision,
		ErrorMessage:        r.ErrorMessage,
		AgentSessionID:      r.AgentSessionID,
		ContextLost:         r.ContextLost,
		PromptCapabilities:  decodePromptCapabilities(r.PromptCapabilities),
		Title:               r.Title,
		Usage:               r.usage(),
		CreatedAt:           r.CreatedAt.UTC(),
		UpdatedAt:           r.UpdatedAt.UTC(),
	}
	if r.Config != "" {
		// Only SetSessionConfig writes it, from a value it encoded.
		var c shared.SessionConfig
		if json.Unmarshal([]byte(r.Config), &c) == nil {
			s.Config = &c
		}
	}
	return s
}

// usage is the row's usage, nil before the agent reported any.
func (r sessionRow) usage() *shared.SessionUsage {
	if !r.HasUsage {
		return nil
	}
	u := &shared.SessionUsage{Used: r.ContextUsed, Size: r.ContextSize}
	if r.CostCurrency != "" {
		u.Cost = &shared.Cost{Amount: r.CostAmount, Currency: r.CostCurrency}
	}
	return u
}

// messageRow is a row of messages.
type messageRow struct {
	ID              string     `gorm:"column:id;primaryKey"`
	SessionID       string     `gorm:"column:session_id"`
	TaskID          string     `gorm:"column:task_id"`
	Seq             int64      `gorm:"column:seq"`
	Type            string     `gorm:"column:type"`
	Content         string     `gorm:"column:content"`
	Status          string     `gorm:"column:status"`
	PendingID       *string    `gorm:"column:pending_id"`
	ClientMessageID *string    `gorm:"column:client_message_id"`
	Metadata        string     `gorm:"column:metadata"`
	DispatchState   string     `gorm:"column:dispatch_state"`
	ClaimToken      string     `gorm:"column:claim_token"`
	DispatchedAt    *time.Time `gorm:"column:dispatched_at"`
	CreatedAt       time.Time  `gorm:"column:created_at"`
	UpdatedAt       time.Time  `gorm:"column:updated_at"`
}

// TableName implements gorm's schema.Tabler.
func (messageRow) TableName() string { return "messages" }

func (r messageRow) toMessage() (shared.Message, error) {
	m := shared.Message{
		ID:        r.ID,
		SessionID: r.SessionID,
		TaskID:    r.TaskID,
		Seq:       r.Seq,
		Type:      shared.MessageType(r.Type),
		Content:   r.Content,
		Status:    shared.MessageState(r.Status),
		CreatedAt: r.CreatedAt.UTC(),
		UpdatedAt: r.UpdatedAt.UTC(),
	}
	if r.PendingID != nil {
		m.PendingID = *r.PendingID
	}
	if r.ClientMessageID != nil {
		m.ClientMessageID = *r.ClientMessageID
	}
	if r.Metadata != "" && r.Metadata != "{}" {
		if err := json.Unmarshal([]byte(r.Metadata), &m.Metadata); err != nil {
			return shared.Message{}, fmt.Errorf("decode metadata of message %s: %w", r.ID, err)
		}
	}
	return m, nil
}

// segmentRow is a row of message_segments: text appended to a streaming
// message.
type segmentRow struct {
	MessageID string `gorm:"column:message_id;primaryKey"`
	Position  int64  `gorm:"column:position;primaryKey"`
	Text      string `gorm:"column:text"`
}

// TableName implements gorm's schema.Tabler.
func (segmentRow) TableName() string { return "message_segments" }

// pgUniqueViolation is PostgreSQL's SQLSTATE for unique_violation.
const pgUniqueViolation = "23505"

// isUniqueViolation reports whether err is a database's refusal of a row
// that repeats a unique key.
func isUniqueViolation(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) {
		return se.ExtendedCode == sqlite3.ErrConstraintUnique || se.ExtendedCode == sqlite3.ErrConstraintPrimaryKey
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == pgUniqueViolation
	}
	return false
}

// optional turns an empty string into NULL.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
