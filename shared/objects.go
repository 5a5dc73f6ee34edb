package shared

import "time"

// Workspace groups tasks; a connection follows one workspace's task feed.
type Workspace struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// Task is one unit of work, run by one or more agent sessions.
type Task struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	Title       string `json:"title"`
	// Description is free text; empty when none was given.
	Description string `json:"description"`
	// PrimarySessionID is the session whose state the task row shows; empty
	// until the task has a session.
	PrimarySessionID string `json:"primary_session_id,omitempty"`
	// Repositories lists the repositories attached to the task; never null.
	Repositories []TaskRepository `json:"repositories"`
	// PullRequestURL links a pull request to the task explicitly; empty
	// when pull requests are linked by the task's branches alone.
	PullRequestURL string    `json:"pull_request_url,omitempty"`
	Archived       bool      `json:"archived"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
	// ForegroundActivity aggregates the task's sessions coarsely: generating
	// while one runs, absent when all are settled.
	ForegroundActivity ForegroundActivity `json:"foreground_activity,omitempty"`
	// ActiveSubagentCount sums the live subagents of the task's sessions.
	ActiveSubagentCount int `json:"active_subagent_count"`
	// StatusSummary is the bounded live status of the task. List, get and
	// boot responses always carry it; workspace feed task events omit it
	// (summaries travel as task.status_summary.updated).
	StatusSummary *TaskStatusSummary `json:"status_summary,omitempty"`
}

// TaskRepository is a repository attached to a task.
type TaskRepository struct {
	ID         string `json:"id"`
	Path       string `json:"path"`
	BaseBranch string `json:"base_branch"`
	// Branch is the task's working branch; empty until a worktree exists.
	Branch string `json:"branch,omitempty"`
	// WorktreePath is where the agent runs; empty until a worktree exists.
	WorktreePath string `json:"worktree_path,omitempty"`
	// RunInPlace is true when the agent runs in Path itself, without a
	// worktree of its own.
	RunInPlace bool `json:"run_in_place,omitempty"`
}

// RepositoryGit is the latest git observation of one task repository, as
// the session view shows it.
type RepositoryGit struct {
	RepositoryID string `json:"repository_id"`
	Path         string `json:"path"`
	// Branch is the branch observed: the task's working branch, or the
	// checked-out branch of a repository run in place.
	Branch     string `json:"branch,omitempty"`
	BaseBranch string `json:"base_branch"`
	// ObservedAt is absent while the repository has not been observed;
	// the totals then mean nothing.
	ObservedAt   *time.Time `json:"observed_at,omitempty"`
	Additions    int        `json:"additions"`
	Deletions    int        `json:"deletions"`
	ChangedFiles int        `json:"changed_files"`
	// Ahead and Behind count commits against the base branch; both are 0
	// when ComparisonUnavailable.
	Ahead  int `json:"ahead"`
	Behind int `json:"behind"`
	// ComparisonUnavailable is true when the base branch cannot be
	// resolved; the totals are then those of the uncommitted changes.
	ComparisonUnavailable bool `json:"comparison_unavailable,omitempty"`
	// UpstreamAhead and UpstreamBehind count commits against the branch's
	// upstream; absent when it has none.
	UpstreamAhead  *int `json:"upstream_ahead,omitempty"`
	UpstreamBehind *int `json:"upstream_behind,omitempty"`
	// Error is the newest observation's failure, when it failed; the totals
	// are those of the last observation that succeeded.
	Error string `json:"error,omitempty"`
}

// SessionState is a session's lifecycle state.
type SessionState string

// Session states.
const (
	SessionCreated         SessionState = "CREATED"
	SessionStarting        SessionState = "STARTING"
	SessionRunning         SessionState = "RUNNING"
	SessionWaitingForInput SessionState = "WAITING_FOR_INPUT"
	SessionCompleted       SessionState = "COMPLETED"
	SessionIdle            SessionState = "IDLE"
	SessionFailed          SessionState = "FAILED"
	SessionCancelled       SessionState = "CANCELLED"
)

// ForegroundActivity says what a session's foreground is doing.
type ForegroundActivity string

// Foreground activities; the empty value means settled.
const (
	ActivityGenerating ForegroundActivity = "generating"
	ActivityBackground ForegroundActivity = "background"
)

// Session is one agent execution history within a task.
type Session struct {
	ID             string       `json:"id"`
	TaskID         string       `json:"task_id"`
	AgentProfileID string       `json:"agent_profile_id"`
	State          SessionState `json:"state"`
	// ForegroundActivity is omitted when the session is settled.
	ForegroundActivity  ForegroundActivity `json:"foreground_activity,omitempty"`
	ActiveSubagentCount int                `json:"active_subagent_count"`
	// StateRevision rises by one with every change of State,
	// ForegroundActivity, ActiveSubagentCount or ContextLost; a client
	// keeps the copy with the highest revision, whether it came in a list
	// or an event.
	StateRevision int64 `json:"state_revision"`
	// ErrorMessage explains a FAILED state; empty otherwise.
	ErrorMessage string `json:"error_message,omitempty"`
	// AgentSessionID is the agent's own ACP session id behind this
	// session, which herd resumes when it starts the agent again; absent
	// until the agent has opened a session.
	AgentSessionID string `json:"agent_session_id,omitempty"`
	// ContextLost is set when the agent's latest start could not restore
	// its earlier context (it does not support session/resume or
	// session/load, or refused them) and opened a fresh session, which
	// remembers none of the earlier turns: it says why. Absent when the
	// context was restored or there was none to restore.
	ContextLost string `json:"context_lost,omitempty"`
	// Title is the title the agent gave the session (ACP
	// session_info_update): valid UTF-8 without control characters, white
	// space collapsed, at most MaxSessionTitleBytes. Empty until the agent
	// names it; clients then show what they showed before.
	Title string `json:"title,omitempty"`
	// Usage is the session's latest context usage and cumulative cost;
	// absent until the agent reports usage.
	Usage *SessionUsage `json:"usage,omitempty"`
	// Config is what the agent lets a person choose for the session (its
	// model, mode and other options) with their current values, as the
	// agent last reported them; absent until the agent has reported any.
	// It is kept when the agent stops, so it shows across reloads and
	// restarts; the agent's next start reports it afresh.
	Config    *SessionConfig `json:"config,omitempty"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`

	// PromptCapabilities is what the session's agent takes in a prompt
	// beyond text, as its latest start advertised it; absent until the
	// agent has started once.
	PromptCapabilities *PromptCapabilities `json:"prompt_capabilities,omitempty"`
}

// SessionConfig is the configuration an agent offers for one session.
type SessionConfig struct {
	// Options are the agent's options in its own order; never null.
	Options []ConfigOption `json:"options"`
}

// Option returns the option with the given id.
func (c *SessionConfig) Option(id string) (ConfigOption, bool) {
	if c == nil {
		return ConfigOption{}, false
	}
	for _, o := range c.Options {
		if o.ID == id {
			return o, true
		}
	}
	return ConfigOption{}, false
}

// ConfigOptionType says what values a ConfigOption takes.
type ConfigOptionType string

// Config option types.
const (
	// ConfigSelect takes one of the option's Values.
	ConfigSelect ConfigOptionType = "select"
	// ConfigBoolean takes "true" or "false".
	ConfigBoolean ConfigOptionType = "boolean"
)

// Config option categories the web app places first; an agent may name
// others (Claude's "model_config"), which are shown after these.
const (
	ConfigCategoryModel        = "model"
	ConfigCategoryMode         = "mode"
	ConfigCategoryThoughtLevel = "thought_level"
)

// ConfigOption is one setting of an agent session: an ACP session config
// option, or the session's modes or models when the agent offers those
// instead (older agents); session.config.set changes it either way.
type ConfigOption struct {
	// ID names the option in session.config.set.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Description is the agent's own; absent when it gave none.
	Description string `json:"description,omitempty"`
	// Category is ConfigCategoryModel, ConfigCategoryMode,
	// ConfigCategoryThoughtLevel or the agent's own; absent when the agent
	// gave none.
	Category string           `json:"category,omitempty"`
	Type     ConfigOptionType `json:"type"`
	// CurrentValue is the chosen value: one of Values' Value for a
	// select, "true" or "false" for a boolean.
	CurrentValue string `json:"current_value"`
	// Values are a select's choices in the agent's order; absent for a
	// boolean.
	Values []ConfigValue `json:"values,omitempty"`
}

// ConfigValue is one choice of a select ConfigOption.
type ConfigValue struct {
	Value string `json:"value"`
	Name  string `json:"name"`
	// Description is the agent's own ("Sonnet 5.5 · Efficient for routine
	// tasks"); absent when it gave none.
	Description string `json:"description,omitempty"`
	// Group names the group the agent put the choice in; absent when the
	// agent does not group its choices.
	Group string `json:"group,omitempty"`
}

// Bounds of a stored SessionConfig: what an agent reports beyond them is
// cut, so one agent cannot make every snapshot of its session large.
const (
	MaxConfigOptions   = 32
	MaxConfigValues    = 200
	MaxConfigTextBytes = 512
	MaxConfigIDBytes   = 128
)

// MessageType classifies a transcript message.
type MessageType string

// Message types.
const (
	MessageUser                 MessageType = "user"
	MessageAgent                MessageType = "agent"
	MessageThinking             MessageType = "thinking"
	MessageToolCall             MessageType = "tool_call"
	MessagePermissionRequest    MessageType = "permission_request"
	MessageClarificationRequest MessageType = "clarification_request"
	MessageError                MessageType = "error"
	MessageStatus               MessageType = "status"
	MessagePlan                 MessageType = "plan"
)

// MessageState is where a message is in its life.
type MessageState string

// Message statuses.
const (
	MessageStreaming MessageState = "streaming"
	MessageComplete  MessageState = "complete"
	MessagePending   MessageState = "pending"
	MessageResolved  MessageState = "resolved"
	MessageFailed    MessageState = "failed"
	MessageCancelled MessageState = "cancelled"
)

// Message is one transcript entry of a session.
type Message struct {
	ID        string       `json:"id"`
	SessionID string       `json:"session_id"`
	TaskID    string       `json:"task_id"`
	Seq       int64        `json:"seq"`
	Type      MessageType  `json:"type"`
	Content   string       `json:"content"`
	Status    MessageState `json:"status"`
	// PendingID names the permission or clarification request this message
	// carries; empty for other messages.
	PendingID string `json:"pending_id,omitempty"`
	// ClientMessageID is the client's idempotency key for user messages.
	ClientMessageID string `json:"client_message_id,omitempty"`
	// Metadata holds type-specific fields (a permission request's options,
	// a tool call's input and output, a plan's entries); absent when the
	// message has none.
	Metadata *MessageMetadata `json:"metadata,omitempty"`
	// AppendFrom, on a session.message.updated only, is the byte offset into
	// the UTF-8 content at which Content starts; absent means Content is whole.
	AppendFrom *int      `json:"append_from,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// QueuedPrompt is a prompt waiting for the running turn to settle.
type QueuedPrompt struct {
	ID              string    `json:"id"`
	SessionID       string    `json:"session_id"`
	ClientMessageID string    `json:"client_message_id"`
	Content         string    `json:"content"`
	CreatedAt       time.Time `json:"created_at"`
}

// AgentProfile says how to start an agent.
type AgentProfile struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	Provider string   `json:"provider"`
	Command  string   `json:"command"`
	Args     []string `json:"args"`
	// Available is false when the command cannot be found on this machine.
	Available bool `json:"available"`
	// Missing says, when Available is false, what is missing and how to
	// install it; absent otherwise.
	Missing string `json:"missing,omitempty"`
	// AuthRequired lists the agent's own auth methods when its latest
	// start on this server was refused for want of authentication; absent
	// once a start succeeds (and before any start).
	AuthRequired []AuthMethod `json:"auth_required,omitempty"`
}

// AuthMethod is one way an agent can be authenticated, in its own words.
type AuthMethod struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Vars are environment variables that authenticate this way, one of
	// which is enough (set it in herd's or the profile's environment);
	// absent when the agent signs in by itself (a browser login).
	Vars []string `json:"vars,omitempty"`
}
