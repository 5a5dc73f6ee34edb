package shared

// Request actions.
const (
	ActionPing                 = "ping"
	ActionBoot                 = "boot"
	ActionWorkspaceList        = "workspace.list"
	ActionWorkspaceCreate      = "workspace.create"
	ActionWorkspaceSubscribe   = "workspace.subscribe"
	ActionWorkspaceUnsubscribe = "workspace.unsubscribe"
	ActionTaskList             = "task.list"
	ActionTaskCreate           = "task.create"
	ActionTaskGet              = "task.get"
	ActionTaskUpdate           = "task.update"
	ActionTaskArchive          = "task.archive"
	ActionSessionList          = "session.list"
	ActionSessionCreate        = "session.create"
	ActionSessionSubscribe     = "session.subscribe"
	ActionSessionUnsubscribe   = "session.unsubscribe"
	ActionSessionFocus         = "session.focus"
	ActionSessionGitRefresh    = "session.git.refresh"
	ActionSessionCancel        = "session.cancel"
	ActionSessionConfigSet     = "session.config.set"
	ActionSessionFilesList     = "session.files.list"
	ActionMessageAdd           = "message.add"
	ActionMessageList          = "message.list"
	ActionMessageGet           = "message.get"
	ActionMessageQueueGet      = "message.queue.get"
	ActionMessageQueueRemove   = "message.queue.remove"
	ActionPermissionRespond    = "permission.respond"
	ActionClarificationRespond = "clarification.respond"
	ActionErrorDismiss         = "error.dismiss"
	ActionAgentProfileList     = "agent_profile.list"
)

// Workspace feed notifications, sent to connections subscribed to the
// task's workspace.
const (
	NotifyTaskCreated              = "task.created"
	NotifyTaskUpdated              = "task.updated"
	NotifyTaskDeleted              = "task.deleted"
	NotifyTaskStatusSummaryUpdated = "task.status_summary.updated"
)

// Session detail notifications, sent only to connections subscribed to the
// session.
const (
	NotifySessionStateChanged    = "session.state_changed"
	NotifySessionActivityChanged = "session.activity_changed"
	NotifySessionMessageAdded    = "session.message.added"
	NotifySessionMessageUpdated  = "session.message.updated"
	NotifySessionMessageDeleted  = "session.message.deleted"
	NotifySessionTurnStarted     = "session.turn.started"
	NotifySessionTurnSettled     = "session.turn.settled"
	NotifySessionQueueChanged    = "session.queue.changed"
	NotifySessionGitUpdated      = "session.git.updated"
	NotifySessionConfigUpdated   = "session.config.updated"
	NotifySessionInfoUpdated     = "session.info.updated"
	NotifySessionCommandsUpdated = "session.commands.updated"
)
