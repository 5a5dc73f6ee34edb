package shared

import "time"

// The bounds of what the inbox and a notification carry.
const (
	// MaxInboxRequests bounds InboxListResponse.Requests: the newest
	// requests of a workspace, with Truncated set when there are more.
	MaxInboxRequests = 200
	// MaxInboxTitleBytes bounds InboxRequest.Title.
	MaxInboxTitleBytes = 512
	// MaxInboxOptions bounds InboxRequest.Options.
	MaxInboxOptions = 8
	// MaxPushDevices bounds the devices one workspace keeps; subscribing
	// one more is a conflict until one is removed.
	MaxPushDevices = 32
	// MaxDeviceNameBytes bounds PushDevice.Name.
	MaxDeviceNameBytes = 64
	// MaxPushEndpointBytes bounds a subscription's endpoint URL.
	MaxPushEndpointBytes = 1024
	// MaxPushPayloadBytes bounds a push message's JSON before encryption,
	// so that it fits the 4,096-byte record every push service takes.
	MaxPushPayloadBytes = 3072
	// MaxPushBodyBytes bounds PushMessage.Body.
	MaxPushBodyBytes = 240
)

// Request actions of attention: push devices and the inbox.
const (
	ActionPushConfigGet    = "push.config.get"
	ActionPushSubscribe    = "push.subscribe"
	ActionPushDeviceList   = "push.device.list"
	ActionPushDeviceUpdate = "push.device.update"
	ActionPushDeviceRemove = "push.device.remove"
	ActionPushTest         = "push.test"
	ActionInboxList        = "inbox.list"
)

// Workspace feed notifications of the inbox.
const (
	// NotifyInboxRequestOpened carries an InboxRequest: an agent asks.
	NotifyInboxRequestOpened = "inbox.request.opened"
	// NotifyInboxRequestClosed carries an InboxRequestClosed: the request
	// was answered (anywhere) or withdrawn.
	NotifyInboxRequestClosed = "inbox.request.closed"
)

// InboxKind says what a pending request asks for.
type InboxKind string

// The kinds of pending request.
const (
	InboxPermission    InboxKind = "permission"
	InboxClarification InboxKind = "clarification"
)

// InboxRequest is one unanswered permission or clarification request of a
// workspace, as the inbox shows it without the session's transcript.
type InboxRequest struct {
	WorkspaceID string    `json:"workspace_id"`
	TaskID      string    `json:"task_id"`
	SessionID   string    `json:"session_id"`
	MessageID   string    `json:"message_id"`
	PendingID   string    `json:"pending_id"`
	Kind        InboxKind `json:"kind"`
	// Title is the tool call's title or the question, at most
	// MaxInboxTitleBytes, cut on a character boundary.
	Title string `json:"title"`
	// ToolKind is the ACP tool kind of a permission request (edit,
	// execute, …); empty when the agent gave none.
	ToolKind string `json:"tool_kind,omitempty"`
	// Options are a permission request's choices, in the agent's order, at
	// most MaxInboxOptions.
	Options   []PermissionOption `json:"options,omitempty"`
	CreatedAt time.Time          `json:"created_at"`
}

// InboxRequestClosed is the payload of inbox.request.closed.
type InboxRequestClosed struct {
	WorkspaceID string `json:"workspace_id"`
	TaskID      string `json:"task_id"`
	SessionID   string `json:"session_id"`
	PendingID   string `json:"pending_id"`
	// Status is the request's message status now: resolved (answered) or
	// cancelled (withdrawn, or its session stopped).
	Status MessageState `json:"status"`
}

// InboxListRequest asks for a workspace's unanswered requests.
type InboxListRequest struct {
	WorkspaceID string `json:"workspace_id"`
}

// InboxListResponse holds a workspace's unanswered requests, newest first.
type InboxListResponse struct {
	Requests []InboxRequest `json:"requests"`
	// Truncated is true when the workspace has more than
	// MaxInboxRequests; the oldest are left out.
	Truncated bool `json:"truncated,omitempty"`
}

// PushPreferences say what notifies a device.
type PushPreferences struct {
	// Requests: permission and clarification requests (on by default).
	Requests bool `json:"requests"`
	// Errors: an agent error on a task.
	Errors bool `json:"errors"`
	// Turns: a primary session's turn finished without asking anything.
	Turns bool `json:"turns"`
	// PullRequests: a task's pull request turned red (failing) or green
	// (passing).
	PullRequests bool `json:"pull_requests"`
}

// DefaultPushPreferences notify of requests only.
var DefaultPushPreferences = PushPreferences{Requests: true}

// PushDevice is a browser subscribed to a workspace's notifications.
type PushDevice struct {
	ID          string          `json:"id"`
	WorkspaceID string          `json:"workspace_id"`
	Name        string          `json:"name"`
	Preferences PushPreferences `json:"preferences"`
	// PushService is the host of the device's push service
	// (fcm.googleapis.com, updates.push.services.mozilla.com, …).
	PushService string    `json:"push_service"`
	CreatedAt   time.Time `json:"created_at"`
	// LastSentAt is when herd last delivered a push to it.
	LastSentAt *time.Time `json:"last_sent_at,omitempty"`
}

// PushConfig is the answer of push.config.get.
type PushConfig struct {
	// PublicKey is the VAPID application server key, unpadded base64url
	// of the uncompressed P-256 point, for PushManager.subscribe.
	PublicKey string `json:"public_key"`
}

// PushSubscribeRequest registers a browser's push subscription
// (PushSubscription.toJSON()) for a workspace. The same endpoint again
// replaces that device's keys, name and preferences, and its credential.
type PushSubscribeRequest struct {
	WorkspaceID string `json:"workspace_id"`
	Name        string `json:"name"`
	Endpoint    string `json:"endpoint"`
	Keys        struct {
		P256dh string `json:"p256dh"`
		Auth   string `json:"auth"`
	} `json:"keys"`
	// Preferences default to DefaultPushPreferences.
	Preferences *PushPreferences `json:"preferences,omitempty"`
}

// PushSubscribeResponse answers push.subscribe.
type PushSubscribeResponse struct {
	Device PushDevice `json:"device"`
	// Credential is the device's secret for POST /api/v1/push/decision;
	// herd keeps only its digest, so it is shown this once.
	Credential string `json:"credential"`
}

// PushDeviceListRequest lists a workspace's devices.
type PushDeviceListRequest struct {
	WorkspaceID string `json:"workspace_id"`
}

// PushDeviceListResponse holds a workspace's devices, oldest first.
type PushDeviceListResponse struct {
	Devices []PushDevice `json:"devices"`
}

// PushDeviceUpdateRequest renames a device or changes what notifies it;
// absent fields stay. It is answered with the PushDevice as stored.
type PushDeviceUpdateRequest struct {
	DeviceID    string           `json:"device_id"`
	Name        *string          `json:"name,omitempty"`
	Preferences *PushPreferences `json:"preferences,omitempty"`
}

// PushResubscribeRequest is the body of POST /api/v1/push/resubscribe,
// sent by the service worker with "Authorization: HerdDevice <credential>"
// when the push service replaced the browser's subscription
// (pushsubscriptionchange): the credential's device keeps its id, name and
// preferences and takes the new endpoint and keys, checked as
// push.subscribe checks them. It answers a PushSubscribeResponse; the
// worker keeps the credential it carries in place of the old one.
type PushResubscribeRequest struct {
	Endpoint string `json:"endpoint"`
	Keys     struct {
		P256dh string `json:"p256dh"`
		Auth   string `json:"auth"`
	} `json:"keys"`
}

// PushDeviceRef names a device.
type PushDeviceRef struct {
	DeviceID string `json:"device_id"`
}

// PushKind says what a push message is about.
type PushKind string

// The kinds of push message.
const (
	PushPermission    PushKind = "permission"
	PushClarification PushKind = "clarification"
	PushError         PushKind = "error"
	PushTurn          PushKind = "turn"
	PushPullRequest   PushKind = "pull_request"
	PushTest          PushKind = "test"
	// PushClose closes the task's notification: what it asked for was
	// answered or withdrawn.
	PushClose PushKind = "close"
)

// PushMessage is the JSON a service worker receives in a push, at most
// MaxPushPayloadBytes. It holds a bounded preview, never transcript
// content beyond it.
type PushMessage struct {
	Kind PushKind `json:"kind"`
	// Tag names the notification it shows or replaces: one per task
	// ("task:<task_id>").
	Tag         string `json:"tag"`
	WorkspaceID string `json:"workspace_id"`
	TaskID      string `json:"task_id,omitempty"`
	SessionID   string `json:"session_id,omitempty"`
	PendingID   string `json:"pending_id,omitempty"`
	// Title is the notification's title: the task's title and what it
	// needs.
	Title string `json:"title,omitempty"`
	// Body is at most MaxPushBodyBytes: the tool call's title, the
	// question, the error or the pull request's state.
	Body string `json:"body,omitempty"`
	// ToolKind is a permission request's ACP tool kind.
	ToolKind string `json:"tool_kind,omitempty"`
	// Actions are the notification's buttons: a permission request's
	// allow-once and reject-once options, with the agent's labels.
	Actions []PushAction `json:"actions,omitempty"`
	// URL is the app's address of the session (or task) to open.
	URL string `json:"url,omitempty"`
	// Pending counts the workspace's unanswered requests, for the app
	// icon's badge.
	Pending int `json:"pending"`
	// SentAt is when herd sent it.
	SentAt time.Time `json:"sent_at"`
}

// PushAction is a button of a permission request's notification.
type PushAction struct {
	OptionID string `json:"option_id"`
	Label    string `json:"label"`
	// Kind is the option's ACP kind (allow_once, reject_once).
	Kind string `json:"kind"`
}

// PushDecisionRequest is the body of POST /api/v1/push/decision: a
// notification's answer to exactly one pending request. A permission
// request takes OptionID; a clarification takes Answer.
type PushDecisionRequest struct {
	WorkspaceID string `json:"workspace_id"`
	SessionID   string `json:"session_id"`
	PendingID   string `json:"pending_id"`
	OptionID    string `json:"option_id,omitempty"`
	Answer      string `json:"answer,omitempty"`
}

// PushDecisionResponse answers a decision: the request's message as
// stored, and whether this call answered it or found it answered the same
// way already (a retry).
type PushDecisionResponse struct {
	Message Message `json:"message"`
	// Repeated is true when the request had been answered with the same
	// choice before this call.
	Repeated bool `json:"repeated,omitempty"`
}
