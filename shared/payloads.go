package shared

// Empty is the payload of requests and responses that carry nothing.
type Empty struct{}

// ServerInfo describes the server in a boot response.
type ServerInfo struct {
	Version         string   `json:"version"`
	ProtocolVersion int      `json:"protocol_version"`
	Features        []string `json:"features"`
}

// BootRequest asks for everything a client needs to render its first screen.
type BootRequest struct {
	// WorkspaceID selects the workspace; empty picks the first workspace.
	WorkspaceID string `json:"workspace_id,omitempty"`
}

// BootResponse is the first screen: the selected workspace's first page of
// tasks (each with its status summary) plus the lists a client renders.
// Boot also joins the connection to the selected workspace's feed.
type BootResponse struct {
	Server ServerInfo `json:"server"`
	// WorkspaceID is the workspace whose tasks are listed; empty when there
	// is no workspace yet.
	WorkspaceID   string         `json:"workspace_id,omitempty"`
	Workspaces    []Workspace    `json:"workspaces"`
	Tasks         []Task         `json:"tasks"`
	NextCursor    string         `json:"next_cursor,omitempty"`
	AgentProfiles []AgentProfile `json:"agent_profiles"`
}

// WorkspaceListResponse answers workspace.list.
type WorkspaceListResponse struct {
	Workspaces []Workspace `json:"workspaces"`
}

// WorkspaceCreateRequest creates a workspace.
type WorkspaceCreateRequest struct {
	Name string `json:"name"`
}

// WorkspaceRef names a workspace (workspace.subscribe, workspace.unsubscribe).
type WorkspaceRef struct {
	WorkspaceID string `json:"workspace_id"`
}

// TaskListRequest lists a workspace's tasks, newest first.
type TaskListRequest struct {
	WorkspaceID string `json:"workspace_id"`
	// Cursor continues from a previous response's NextCursor.
	Cursor string `json:"cursor,omitempty"`
	// Limit is the page size; zero means DefaultTaskPage, at most MaxTaskPage.
	Limit int `json:"limit,omitempty"`
	// IncludeArchived lists archived tasks too.
	IncludeArchived bool `json:"include_archived,omitempty"`
}

// Task list page sizes.
const (
	DefaultTaskPage = 500
	MaxTaskPage     = 10000
)

// TaskListResponse is one page of tasks.
type TaskListResponse struct {
	Tasks []Task `json:"tasks"`
	// NextCursor is absent on the last page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// RepositoryInput attaches a repository to a new task.
type RepositoryInput struct {
	Path string `json:"path"`
	// BaseBranch defaults to the repository's current branch.
	BaseBranch string `json:"base_branch,omitempty"`
	// RunInPlace runs the agent in Path itself instead of a worktree of the
	// task's own.
	RunInPlace bool `json:"run_in_place,omitempty"`
}

// TaskCreateRequest creates a task.
type TaskCreateRequest struct {
	WorkspaceID  string            `json:"workspace_id"`
	Title        string            `json:"title"`
	Description  string            `json:"description,omitempty"`
	Repositories []RepositoryInput `json:"repositories,omitempty"`
	// AgentProfileID and Prompt start a session when Prompt is given.
	AgentProfileID string `json:"agent_profile_id,omitempty"`
	Prompt         string `json:"prompt,omitempty"`
}

// TaskRef names a task (task.get, task.archive).
type TaskRef struct {
	TaskID string `json:"task_id"`
}

// TaskUpdateRequest changes a task; absent fields stay as they are.
type TaskUpdateRequest struct {
	TaskID           string  `json:"task_id"`
	Title            *string `json:"title,omitempty"`
	Description      *string `json:"description,omitempty"`
	PrimarySessionID *string `json:"primary_session_id,omitempty"`
	// PullRequestURL links a pull request to the task explicitly; an empty
	// string removes the link.
	PullRequestURL *string `json:"pull_request_url,omitempty"`
}

// TaskArchiveRequest archives a task and removes its worktrees. A worktree
// with uncommitted work, or a locked one, makes it fail with conflict
// unless Force is set.
type TaskArchiveRequest struct {
	TaskID string `json:"task_id"`
	Force  bool   `json:"force,omitempty"`
}

// TaskEvent is the payload of task.created, task.updated and task.deleted:
// the task's coarse fields, without its status summary.
type TaskEvent = Task

// StatusSummaryEvent is the payload of task.status_summary.updated.
type StatusSummaryEvent struct {
	TaskID        string            `json:"task_id"`
	WorkspaceID   string            `json:"workspace_id"`
	StatusSummary TaskStatusSummary `json:"status_summary"`
}

// SessionStateEvent is the payload of session.state_changed and
// session.activity_changed: a session's state and activity at one
// StateRevision. ForegroundActivity is omitted when the session is settled;
// ContextLost as Session's, omitted when the agent's context was restored.
type SessionStateEvent struct {
	TaskID              string             `json:"task_id"`
	SessionID           string             `json:"session_id"`
	State               SessionState       `json:"state"`
	ForegroundActivity  ForegroundActivity `json:"foreground_activity,omitempty"`
	ActiveSubagentCount int                `json:"active_subagent_count"`
	StateRevision       int64              `json:"state_revision"`
	ContextLost         string             `json:"context_lost,omitempty"`
	// PromptCapabilities is the session's Session.PromptCapabilities.
	PromptCapabilities *PromptCapabilities `json:"prompt_capabilities,omitempty"`
}

// SessionStateEventOf returns the state event of a session.
func SessionStateEventOf(s Session) SessionStateEvent {
	return SessionStateEvent{
		TaskID: s.TaskID, SessionID: s.ID, State: s.State, ForegroundActivity: s.ForegroundActivity,
		ActiveSubagentCount: s.ActiveSubagentCount, StateRevision: s.StateRevision,
		ContextLost: s.ContextLost, PromptCapabilities: s.PromptCapabilities,
	}
}

// TurnStartedEvent is the payload of session.turn.started.
type TurnStartedEvent struct {
	SessionID string `json:"session_id"`
	// TurnID names the turn: the id of the user message that started it.
	TurnID string `json:"turn_id"`
	// MessageID is that user message's id.
	MessageID string `json:"message_id"`
}

// TurnOutcome says how a turn ended.
type TurnOutcome string

// Turn outcomes.
const (
	TurnEndTurn   TurnOutcome = "end_turn"
	TurnCancelled TurnOutcome = "cancelled"
	// TurnFailed is a turn whose prompt failed: the agent reported an
	// error (stored as an error message) or died.
	TurnFailed    TurnOutcome = "failed"
	TurnMaxTokens TurnOutcome = "max_tokens"
	TurnRefusal   TurnOutcome = "refusal"
)

// TurnSettledEvent is the payload of session.turn.settled.
type TurnSettledEvent struct {
	SessionID string      `json:"session_id"`
	TurnID    string      `json:"turn_id"`
	Outcome   TurnOutcome `json:"outcome"`
}

// QueueChangedEvent is the payload of session.queue.changed: the whole
// queue, oldest first, never null.
type QueueChangedEvent struct {
	SessionID string         `json:"session_id"`
	Queue     []QueuedPrompt `json:"queue"`
}

// SessionListResponse answers session.list.
type SessionListResponse struct {
	Sessions []Session `json:"sessions"`
}

// SessionCreateRequest starts a session for a task.
type SessionCreateRequest struct {
	TaskID         string `json:"task_id"`
	AgentProfileID string `json:"agent_profile_id,omitempty"`
	Prompt         string `json:"prompt,omitempty"`
}

// SessionRef names a session (session.list uses TaskRef).
type SessionRef struct {
	SessionID string `json:"session_id"`
}

// SessionSnapshot is the state of a session at subscription.
type SessionSnapshot struct {
	Session  Session        `json:"session"`
	Messages []Message      `json:"messages"`
	Queue    []QueuedPrompt `json:"queue"`
	// Pending lists the unanswered permission and clarification requests.
	Pending []Message `json:"pending"`
	// Git holds the latest observation of each of the task's repositories;
	// never null.
	Git []RepositoryGit `json:"git"`
	// Commands are the slash commands the agent last offered; never null.
	// They travel here and in session.commands.updated rather than in
	// Session, which session.list and state events carry, because a real
	// agent's list runs to several kilobytes.
	Commands []SlashCommand `json:"commands"`
}

// SessionGitEvent is the payload of session.git.updated: the latest
// observations of the session's task repositories, all of them.
type SessionGitEvent struct {
	SessionID    string          `json:"session_id"`
	TaskID       string          `json:"task_id"`
	Repositories []RepositoryGit `json:"repositories"`
}

// SessionConfigSetRequest sets one option of a session's configuration
// (session.config.set): Value is one of the option's values, or "true" or
// "false" for a boolean option.
type SessionConfigSetRequest struct {
	SessionID string `json:"session_id"`
	OptionID  string `json:"option_id"`
	Value     string `json:"value"`
}

// SessionConfigEvent is the payload of session.config.updated, and the
// answer of session.config.set: the session's whole configuration as the
// agent now reports it.
type SessionConfigEvent struct {
	SessionID string        `json:"session_id"`
	Config    SessionConfig `json:"config"`
}

// SessionSubscribeResponse answers session.subscribe; Snapshot is present
// only when the connection newly joined.
type SessionSubscribeResponse struct {
	Joined   bool             `json:"joined"`
	Snapshot *SessionSnapshot `json:"snapshot,omitempty"`
}

// MaxPromptBytes bounds a prompt's text: message.add's content, and the
// first prompt of session.create.
const MaxPromptBytes = 256 << 10

// MessageAddRequest sends a prompt. MessageID is accepted as an alias of
// ClientMessageID.
type MessageAddRequest struct {
	SessionID       string `json:"session_id"`
	ClientMessageID string `json:"client_message_id,omitempty"`
	MessageID       string `json:"message_id,omitempty"`
	Content         string `json:"content"`
	// Attachments are images and @file mentions sent with the text (see
	// Attachment and CheckAttachments); absent for a text-only prompt.
	Attachments []Attachment `json:"attachments,omitempty"`
}

// MessageOutcome says what message.add did.
type MessageOutcome string

// message.add outcomes.
const (
	OutcomeDispatched MessageOutcome = "dispatched"
	OutcomeQueued     MessageOutcome = "queued"
	OutcomeDuplicate  MessageOutcome = "duplicate"
)

// MessageAddResponse answers message.add.
type MessageAddResponse struct {
	Message Message        `json:"message"`
	Outcome MessageOutcome `json:"outcome"`
}

// MessageListRequest pages backwards through a session's transcript.
type MessageListRequest struct {
	SessionID string `json:"session_id"`
	// BeforeSeq is exclusive; zero means from the newest message.
	BeforeSeq int64 `json:"before_seq,omitempty"`
	// Limit defaults to 100, at most 500.
	Limit int `json:"limit,omitempty"`
}

// MessageListResponse holds messages in ascending seq order.
type MessageListResponse struct {
	Messages []Message `json:"messages"`
	HasMore  bool      `json:"has_more"`
}

// MessageGetRequest fetches one message.
type MessageGetRequest struct {
	SessionID string `json:"session_id"`
	MessageID string `json:"message_id"`
}

// QueueRemoveRequest removes a queued prompt.
type QueueRemoveRequest struct {
	SessionID string `json:"session_id"`
	QueueID   string `json:"queue_id"`
}

// QueueResponse answers the queue actions.
type QueueResponse struct {
	Queue []QueuedPrompt `json:"queue"`
}

// PermissionRespondRequest answers a permission request.
type PermissionRespondRequest struct {
	SessionID string `json:"session_id"`
	PendingID string `json:"pending_id"`
	OptionID  string `json:"option_id"`
}

// ClarificationRespondRequest answers a clarification request.
type ClarificationRespondRequest struct {
	SessionID string `json:"session_id"`
	PendingID string `json:"pending_id"`
	Answer    string `json:"answer"`
}

// ErrorDismissRequest dismisses a task's active error.
type ErrorDismissRequest struct {
	TaskID string `json:"task_id"`
	Stamp  string `json:"stamp"`
}

// AgentProfileListResponse answers agent_profile.list.
type AgentProfileListResponse struct {
	AgentProfiles []AgentProfile `json:"agent_profiles"`
}
