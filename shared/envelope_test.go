package shared_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herd-dev/herd/shared"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// requestCase is one client frame and what DecodeRequest must make of it.
type requestCase struct {
	name  string
	frame string
	// want is the decoded envelope of a valid frame.
	want shared.Envelope
	// wantErr marks a frame that must be rejected with bad_request.
	wantErr bool
	// errHas is text the error message must contain.
	errHas string
	// errID is the id a rejected frame's envelope must still carry, so the
	// error can be correlated; empty when the frame has no usable id.
	errID string
}

// requestFrame builds a frame from its envelope fields.
func requestFrame(id, typ, action string) string {
	return `{"id":` + quote(id) + `,"type":` + quote(typ) + `,"action":` + quote(action) + `}`
}

func quote(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

var (
	id64 = strings.Repeat("i", shared.MaxIDBytes)
	id65 = strings.Repeat("i", shared.MaxIDBytes+1)
	ping = requestFrame("c-1", "request", "ping")
)

// decodeRequestCases also seed FuzzDecodeRequest.
var decodeRequestCases = []requestCase{
	{
		name:  "valid request",
		frame: `{"id":"c-17","type":"request","action":"message.add","payload":{"session_id":"s-1","content":"hi"}}`,
		want: shared.Envelope{
			ID: "c-17", Type: shared.TypeRequest, Action: shared.ActionMessageAdd,
			Payload: json.RawMessage(`{"session_id":"s-1","content":"hi"}`),
		},
	},
	{
		name:  "absent payload",
		frame: ping,
		want:  shared.Envelope{ID: "c-1", Type: shared.TypeRequest, Action: shared.ActionPing},
	},
	{
		name:  "id of 64 bytes",
		frame: requestFrame(id64, "request", "ping"),
		want:  shared.Envelope{ID: id64, Type: shared.TypeRequest, Action: shared.ActionPing},
	},
	{
		name:  "unknown envelope fields are ignored",
		frame: `{"id":"c-1","type":"request","action":"ping","trace":"t-9","future":{"a":[1,2,{}]}}`,
		want:  shared.Envelope{ID: "c-1", Type: shared.TypeRequest, Action: shared.ActionPing},
	},
	{
		name:  "whitespace around the object",
		frame: " \r\n\t" + ping + "\n ",
		want:  shared.Envelope{ID: "c-1", Type: shared.TypeRequest, Action: shared.ActionPing},
	},
	{
		name:    "invalid UTF-8",
		frame:   `{"id":"c-1","type":"request","action":"message.add","payload":{"content":"` + "\xff\xfe" + `"}}`,
		wantErr: true, errHas: "UTF-8",
	},
	{
		name:    "NUL in a payload string",
		frame:   `{"id":"c-1","type":"request","action":"message.add","payload":{"content":"a\u0000b"}}`,
		wantErr: true, errHas: "NUL", errID: "c-1",
	},
	{
		name:  "an escaped backslash before u0000 is not NUL",
		frame: `{"id":"c-1","type":"request","action":"ping","payload":{"path":"C:\\u0000"}}`,
		want: shared.Envelope{
			ID: "c-1", Type: shared.TypeRequest, Action: shared.ActionPing,
			Payload: json.RawMessage(`{"path":"C:\\u0000"}`),
		},
	},
	{name: "empty frame", frame: "", wantErr: true, errHas: "JSON"},
	{name: "malformed JSON", frame: `{"id":"c-1","type":"request",`, wantErr: true, errHas: "JSON"},
	{name: "single-quoted JSON", frame: `{'id':'c-1'}`, wantErr: true, errHas: "JSON"},
	{name: "JSON array instead of object", frame: "[" + ping + "]", wantErr: true},
	{name: "JSON number instead of object", frame: `42`, wantErr: true},
	{name: "JSON string instead of object", frame: `"ping"`, wantErr: true},
	{name: "JSON null instead of object", frame: `null`, wantErr: true},
	{name: "missing id", frame: `{"type":"request","action":"ping"}`, wantErr: true, errHas: "request id"},
	{name: "empty id", frame: requestFrame("", "request", "ping"), wantErr: true, errHas: "request id"},
	{name: "id of 65 bytes", frame: requestFrame(id65, "request", "ping"), wantErr: true, errHas: "64 bytes"},
	{name: "id of the wrong JSON type", frame: `{"id":17,"type":"request","action":"ping"}`, wantErr: true, errHas: `"id"`},
	{
		name:    "type response",
		frame:   requestFrame("c-1", "response", "ping"),
		wantErr: true, errHas: "request", errID: "c-1",
	},
	{
		name:    "type in the wrong case",
		frame:   requestFrame("c-1", "Request", "ping"),
		wantErr: true, errHas: "request", errID: "c-1",
	},
	{
		name:    "missing type",
		frame:   `{"id":"c-1","action":"ping"}`,
		wantErr: true, errHas: "type", errID: "c-1",
	},
	{
		name:    "missing action",
		frame:   `{"id":"c-1","type":"request"}`,
		wantErr: true, errHas: "action", errID: "c-1",
	},
	{
		name:    "empty action",
		frame:   requestFrame("c-1", "request", ""),
		wantErr: true, errHas: "action", errID: "c-1",
	},
	{
		name:    "wrong JSON type in another field keeps the id",
		frame:   `{"id":"c-1","type":"request","action":"ping","seq":"first"}`,
		wantErr: true, errHas: `"seq"`, errID: "c-1",
	},
	{name: "two JSON values in one frame", frame: ping + ping, wantErr: true, errHas: "more than one"},
	{name: "two JSON values separated by a newline", frame: ping + "\n" + ping, wantErr: true, errHas: "more than one"},
	{name: "trailing garbage", frame: ping + " x", wantErr: true},
	{name: "trailing close brace", frame: ping + "}", wantErr: true},
	{name: "trailing close bracket", frame: ping + "]", wantErr: true},
}

func TestDecodeRequest(t *testing.T) {
	for _, tc := range decodeRequestCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := shared.DecodeRequest([]byte(tc.frame))
			if tc.wantErr {
				assertBadRequest(t, err, tc.errHas)
				if got.ID != tc.errID {
					t.Errorf("rejected envelope id = %q, want %q", got.ID, tc.errID)
				}
				return
			}
			if err != nil {
				t.Fatalf("DecodeRequest: %v", err)
			}
			assertEnvelope(t, got, tc.want)
		})
	}
}

func TestDecodePayload(t *testing.T) {
	tests := []struct {
		name    string
		raw     json.RawMessage
		want    shared.TaskListRequest
		wantErr bool
		errHas  string
	}{
		{name: "absent payload is the zero value", raw: nil},
		{name: "empty payload is the zero value", raw: json.RawMessage{}},
		{name: "null payload is the zero value", raw: json.RawMessage(`null`)},
		{name: "null payload with whitespace is the zero value", raw: json.RawMessage(" null\n")},
		{name: "empty object is the zero value", raw: json.RawMessage(`{}`)},
		{
			name: "all fields",
			raw:  json.RawMessage(`{"workspace_id":"w-1","cursor":"k-9","limit":10,"include_archived":true}`),
			want: shared.TaskListRequest{WorkspaceID: "w-1", Cursor: "k-9", Limit: 10, IncludeArchived: true},
		},
		{
			name: "unknown fields are ignored",
			raw:  json.RawMessage(`{"workspace_id":"w-1","sort":{"by":"title"},"limit":5}`),
			want: shared.TaskListRequest{WorkspaceID: "w-1", Limit: 5},
		},
		{name: "wrong field type names the field", raw: json.RawMessage(`{"limit":"ten"}`), wantErr: true, errHas: `"limit"`},
		{name: "fractional number names the field", raw: json.RawMessage(`{"limit":1.5}`), wantErr: true, errHas: `"limit"`},
		{name: "array instead of object", raw: json.RawMessage(`[]`), wantErr: true},
		{name: "string instead of object", raw: json.RawMessage(`"w-1"`), wantErr: true},
		{name: "malformed JSON", raw: json.RawMessage(`{"limit":`), wantErr: true, errHas: "JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := shared.DecodePayload[shared.TaskListRequest](tc.raw)
			if tc.wantErr {
				assertBadRequest(t, err, tc.errHas)
				return
			}
			if err != nil {
				t.Fatalf("DecodePayload: %v", err)
			}
			if got != tc.want {
				t.Errorf("DecodePayload = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestDecodePayloadNamesNestedField(t *testing.T) {
	_, err := shared.DecodePayload[shared.TaskCreateRequest](json.RawMessage(`{"repositories":[{"path":7}]}`))
	assertBadRequest(t, err, `"repositories.path"`)
}

func TestRequestPayloadDecodesAfterEnvelope(t *testing.T) {
	env, err := shared.DecodeRequest([]byte(`{"id":"c-2","type":"request","action":"task.create",` +
		`"payload":{"workspace_id":"w-1","title":"Fix login","repositories":[{"path":"/src/app"}],"later":true}}`))
	if err != nil {
		t.Fatalf("DecodeRequest: %v", err)
	}
	got, err := shared.DecodePayload[shared.TaskCreateRequest](env.Payload)
	if err != nil {
		t.Fatalf("DecodePayload: %v", err)
	}
	if got.WorkspaceID != "w-1" || got.Title != "Fix login" ||
		len(got.Repositories) != 1 || got.Repositories[0] != (shared.RepositoryInput{Path: "/src/app"}) {
		t.Errorf("DecodePayload = %+v", got)
	}
}

// sentAt is in a non-UTC zone so the tests see the server normalise it.
var sentAt = time.Date(2026, 11, 29, 13, 0, 0, 123456789, time.FixedZone("CET", 3600))

func TestServerEnvelopesRoundTrip(t *testing.T) {
	response, err := shared.NewResponse("c-17", shared.ActionTaskGet, shared.TaskRef{TaskID: "t-1"}, sentAt)
	if err != nil {
		t.Fatalf("NewResponse: %v", err)
	}
	notification, err := shared.NewNotification(shared.NotifyTaskDeleted, shared.TaskRef{TaskID: "t-1"}, sentAt)
	if err != nil {
		t.Fatalf("NewNotification: %v", err)
	}
	failure := shared.NewErrorEnvelope("c-18", shared.ActionTaskGet, shared.Errorf(shared.CodeNotFound, "task %q does not exist", "t-1"), sentAt)

	tests := []struct {
		name        string
		env         shared.Envelope
		wantType    shared.Type
		wantID      string
		wantAction  string
		wantPayload string
	}{
		{"response", response, shared.TypeResponse, "c-17", shared.ActionTaskGet, `{"task_id":"t-1"}`},
		{"error", failure, shared.TypeError, "c-18", shared.ActionTaskGet, `{"code":"not_found","message":"task \"t-1\" does not exist"}`},
		{"notification", notification, shared.TypeNotification, "", shared.NotifyTaskDeleted, `{"task_id":"t-1"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			frame, err := json.Marshal(tc.env)
			if err != nil {
				t.Fatalf("marshal: %v", err)
			}
			var fields map[string]json.RawMessage
			if err := json.Unmarshal(frame, &fields); err != nil {
				t.Fatalf("frame %s is not an object: %v", frame, err)
			}
			if _, ok := fields["id"]; ok != (tc.wantID != "") {
				t.Errorf("frame %s: id present = %v, want %v", frame, ok, tc.wantID != "")
			}
			if ts := string(fields["ts"]); !strings.HasSuffix(ts, `Z"`) {
				t.Errorf("frame %s: ts = %s, want RFC 3339 UTC", frame, ts)
			}

			var got shared.Envelope
			if err := json.Unmarshal(frame, &got); err != nil {
				t.Fatalf("re-decode %s: %v", frame, err)
			}
			if got.Type != tc.wantType || got.ID != tc.wantID || got.Action != tc.wantAction {
				t.Errorf("re-decoded (type, id, action) = (%q, %q, %q), want (%q, %q, %q)",
					got.Type, got.ID, got.Action, tc.wantType, tc.wantID, tc.wantAction)
			}
			if !got.TS.Equal(sentAt) || got.TS.Location() != time.UTC {
				t.Errorf("re-decoded ts = %v, want %v in UTC", got.TS, sentAt.UTC())
			}
			if string(got.Payload) != tc.wantPayload {
				t.Errorf("re-decoded payload = %s, want %s", got.Payload, tc.wantPayload)
			}
			if _, err := shared.DecodeRequest(frame); shared.ErrorCode(err) != shared.CodeBadRequest {
				t.Errorf("DecodeRequest accepted a server %s envelope: err = %v", tc.name, err)
			}
		})
	}
}

func TestErrorEnvelopeCarriesDecodableError(t *testing.T) {
	env := shared.NewErrorEnvelope("c-1", shared.ActionMessageAdd, &shared.Error{
		Code: shared.CodeConflict, Message: "client_message_id belongs to another task",
		Details: map[string]any{"field": "client_message_id"},
	}, sentAt)
	got, err := shared.DecodePayload[shared.Error](env.Payload)
	if err != nil {
		t.Fatalf("DecodePayload: %v", err)
	}
	if got.Code != shared.CodeConflict || got.Details["field"] != "client_message_id" {
		t.Errorf("error payload = %+v", got)
	}
}

func TestErrorEnvelopeFallsBackWhenDetailsCannotBeEncoded(t *testing.T) {
	env := shared.NewErrorEnvelope("c-1", shared.ActionPing, &shared.Error{
		Code: shared.CodeNotFound, Message: "gone", Details: map[string]any{"callback": func() {}},
	}, sentAt)
	got, err := shared.DecodePayload[shared.Error](env.Payload)
	if err != nil {
		t.Fatalf("DecodePayload: %v", err)
	}
	if got.Code != shared.CodeInternal || got.Message == "" {
		t.Errorf("fallback payload = %+v, want an internal error with a message", got)
	}
}

func TestServerEnvelopesRejectUnencodablePayload(t *testing.T) {
	if _, err := shared.NewResponse("c-1", shared.ActionPing, make(chan int), sentAt); err == nil {
		t.Error("NewResponse encoded a channel")
	}
	if _, err := shared.NewNotification(shared.NotifyTaskUpdated, func() {}, sentAt); err == nil {
		t.Error("NewNotification encoded a func")
	}
}

func TestErrorCode(t *testing.T) {
	wrapped := errors.Join(errors.New("load task"), shared.Errorf(shared.CodeNotFound, "no task"))
	if got := shared.ErrorCode(wrapped); got != shared.CodeNotFound {
		t.Errorf("ErrorCode(wrapped not_found) = %q", got)
	}
	if got := shared.ErrorCode(errors.New("disk on fire")); got != shared.CodeInternal {
		t.Errorf("ErrorCode(plain error) = %q, want internal", got)
	}
}

// assertBadRequest fails unless err is a *shared.Error with code bad_request
// whose message contains has.
func assertBadRequest(tb testing.TB, err error, has string) {
	tb.Helper()
	var e *shared.Error
	if !errors.As(err, &e) {
		tb.Fatalf("err = %v (%T), want a *shared.Error", err, err)
	}
	if e.Code != shared.CodeBadRequest {
		tb.Errorf("code = %q, want %q (message %q)", e.Code, shared.CodeBadRequest, e.Message)
	}
	if e.Message == "" || !strings.Contains(e.Message, has) {
		tb.Errorf("message = %q, want it to mention %q", e.Message, has)
	}
}

func assertEnvelope(tb testing.TB, got, want shared.Envelope) {
	tb.Helper()
	if got.ID != want.ID || got.Type != want.Type || got.Action != want.Action ||
		got.Seq != want.Seq || !got.TS.Equal(want.TS) {
		tb.Errorf("envelope = %+v, want %+v", got, want)
	}
	if !bytes.Equal(got.Payload, want.Payload) {
		tb.Errorf("payload = %s, want %s", got.Payload, want.Payload)
	}
}

// The wire tests pin the JSON form of the objects script authors read most:
// golden files catch any change, and the key lists below are transcribed
// from the protocol document ("Objects" and "status_summary"), so a renamed
// tag fails against the contract, not just against an old output.

var (
	summaryKeys = []string{
		"revision", "updated_at", "last_activity_at",
		"primary_session", "primary_session.id", "primary_session.state",
		"foreground_activity", "active_subagent_count", "pending_action",
		"active_error", "active_error.session_id", "active_error.stamp", "active_error.occurred_at", "active_error.preview",
		"git", "git.additions", "git.deletions", "git.changed_files", "git.ahead", "git.behind",
		"pull_request", "pull_request.count", "pull_request.open_count", "pull_request.aggregate_state",
		"pull_request.number", "pull_request.url",
		"queued_prompt_count", "preview",
	}
	taskKeys = append([]string{
		"id", "workspace_id", "title", "description", "primary_session_id",
		"repositories", "repositories[].id", "repositories[].path", "repositories[].base_branch",
		"repositories[].branch", "repositories[].worktree_path",
		"archived", "created_at", "updated_at", "foreground_activity", "active_subagent_count", "status_summary",
	}, prefixed("status_summary.", summaryKeys)...)
	sessionKeys = []string{
		"id", "task_id", "agent_profile_id", "state", "foreground_activity",
		"active_subagent_count", "state_revision", "error_message", "created_at", "updated_at",
	}
	messageKeys = []string{
		"id", "session_id", "task_id", "seq", "type", "content", "status",
		"pending_id", "client_message_id", "metadata", "append_from", "created_at", "updated_at",
	}
	// metadataKeys are the metadata fields of each message type.
	toolCallMetadataKeys   = []string{"tool_call_id", "kind", "input", "output", "paths", "provenance"}
	permissionMetadataKeys = []string{
		"tool_call_id", "kind", "options", "options[].option_id", "options[].name", "options[].kind", "selected_option_id",
	}
	planMetadataKeys = []string{"entries", "entries[].content", "entries[].priority", "entries[].status"}
)

var (
	createdAt = time.Date(2026, 11, 29, 11, 0, 0, 0, time.UTC)
	updatedAt = time.Date(2026, 11, 29, 12, 0, 0, 500000000, time.UTC)
)

func fullSummary() shared.TaskStatusSummary {
	lastActivity := updatedAt.Add(-time.Second)
	return shared.TaskStatusSummary{
		Revision:            42,
		UpdatedAt:           updatedAt,
		LastActivityAt:      &lastActivity,
		PrimarySession:      &shared.PrimarySession{ID: "s-1", State: shared.SessionRunning},
		ForegroundActivity:  shared.ActivityGenerating,
		ActiveSubagentCount: 2,
		PendingAction:       shared.PendingPermission,
		ActiveError: &shared.ActiveError{
			SessionID: "s-1", Stamp: "e-7", OccurredAt: createdAt.Add(time.Minute),
			Preview: "rate limit exceeded; retrying in 30 s",
		},
		Git:               &shared.GitSummary{Additions: 10, Deletions: 2, ChangedFiles: 3, Ahead: 1, Behind: 4},
		PullRequest:       &shared.PullRequestSummary{Count: 2, OpenCount: 1, AggregateState: shared.PRFailure, Number: 17, URL: "https://github.com/herd-dev/app/pull/17"},
		QueuedPromptCount: 1,
		Preview:           "Edit notes.txt",
	}
}

func fullTask() shared.Task {
	summary := fullSummary()
	return shared.Task{
		ID: "t-1", WorkspaceID: "w-1", Title: "Fix login", Description: "The login form loses focus.",
		PrimarySessionID: "s-1",
		Repositories: []shared.TaskRepository{{
			ID: "r-1", Path: "/src/app", BaseBranch: "main",
			Branch: "herd/fix-login", WorktreePath: "/var/lib/herd/worktrees/t-1/app",
		}},
		Archived:            true,
		CreatedAt:           createdAt,
		UpdatedAt:           updatedAt,
		ForegroundActivity:  shared.ActivityGenerating,
		ActiveSubagentCount: 2,
		StatusSummary:       &summary,
	}
}

func fullSession() shared.Session {
	return shared.Session{
		ID: "s-1", TaskID: "t-1", AgentProfileID: "mock", State: shared.SessionFailed,
		ForegroundActivity: shared.ActivityBackground, ActiveSubagentCount: 1, StateRevision: 7,
		ErrorMessage: "the agent exited with status 3", CreatedAt: createdAt, UpdatedAt: updatedAt,
	}
}

func fullMessage() shared.Message {
	appendFrom := 12
	return shared.Message{
		ID: "m-9", SessionID: "s-1", TaskID: "t-1", Seq: 9,
		Type: shared.MessagePermissionRequest, Content: "Run `go test ./...`?", Status: shared.MessagePending,
		PendingID: "p-3", ClientMessageID: "cm-5",
		Metadata: &shared.MessageMetadata{ToolCallID: "call-4", Kind: "execute", Options: []shared.PermissionOption{
			{OptionID: "allow", Name: "Allow once", Kind: "allow_once"},
			{OptionID: "deny", Name: "Deny", Kind: "reject_once"},
		}},
		AppendFrom: &appendFrom,
		CreatedAt:  createdAt,
		UpdatedAt:  updatedAt,
	}
}

// toolCallMessage is a tool call with every metadata field a tool call
// carries.
func toolCallMessage() shared.Message {
	return shared.Message{
		ID: "m-10", SessionID: "s-1", TaskID: "t-1", Seq: 10,
		Type: shared.MessageToolCall, Content: "Edit main.go", Status: shared.MessageComplete,
		Metadata: &shared.MessageMetadata{
			ToolCallID: "call-4", Kind: "edit",
			Input: `{"file_path":"main.go"}`, Output: "diff main.go\n",
			Paths:      []string{"main.go"},
			Provenance: json.RawMessage(`{"claudeCode":{"toolName":"Edit"}}`),
		},
		CreatedAt: createdAt, UpdatedAt: updatedAt,
	}
}

// planMessage is a plan with its entries.
func planMessage() shared.Message {
	return shared.Message{
		ID: "m-11", SessionID: "s-1", TaskID: "t-1", Seq: 11,
		Type: shared.MessagePlan, Content: "- [completed] Read the code\n- [in_progress] Fix the bug\n", Status: shared.MessageComplete,
		Metadata: &shared.MessageMetadata{Entries: []shared.PlanEntry{
			{Content: "Read the code", Priority: "high", Status: "completed"},
			{Content: "Fix the bug", Priority: "medium", Status: "in_progress"},
		}},
		CreatedAt: createdAt, UpdatedAt: updatedAt,
	}
}

// configEvent is a session's configuration with a select, grouped
// values and a boolean.
func configEvent() shared.SessionConfigEvent {
	return shared.SessionConfigEvent{SessionID: "s-1", Config: shared.SessionConfig{Options: []shared.ConfigOption{
		{ID: "model", Name: "Model", Description: "AI model to use", Category: shared.ConfigCategoryModel, Type: shared.ConfigSelect,
			CurrentValue: "sonnet", Values: []shared.ConfigValue{
				{Value: "opus", Name: "Opus 5.5", Description: "Best for everyday, complex tasks", Group: "Anthropic"},
				{Value: "sonnet", Name: "Sonnet 5.5", Group: "Anthropic"},
			}},
		{ID: "fast", Name: "Fast mode", Category: "model_config", Type: shared.ConfigBoolean, CurrentValue: "false"},
	}}}
}

func TestWireGolden(t *testing.T) {
	tests := []struct {
		file string
		v    any
	}{
		{"task_status_summary.json", fullSummary()},
		{"task.json", fullTask()},
		{"message.json", fullMessage()},
		{"message_tool_call.json", toolCallMessage()},
		{"message_plan.json", planMessage()},
		{"session_config_updated.json", configEvent()},
		{"turn_started.json", shared.TurnStartedEvent{SessionID: "s-1", TurnID: "m-8", MessageID: "m-8"}},
		{"turn_settled.json", shared.TurnSettledEvent{SessionID: "s-1", TurnID: "m-8", Outcome: shared.TurnCancelled}},
		{"queue_changed.json", shared.QueueChangedEvent{SessionID: "s-1", Queue: []shared.QueuedPrompt{{
			ID: "m-12", SessionID: "s-1", ClientMessageID: "cm-6", Content: "then run the tests", CreatedAt: createdAt,
		}}}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			got, err := json.MarshalIndent(tc.v, "", "  ")
			if err != nil {
				t.Fatalf("marshal: %v", err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", tc.file)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./shared -run TestWireGolden -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("wire form differs from %s (rerun with -update if the change is intended):\ngot:\n%s\nwant:\n%s", path, got, want)
			}
		})
	}
}

func TestWireFieldNamesMatchProtocol(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want []string
	}{
		{"status_summary", fullSummary(), summaryKeys},
		{"task", fullTask(), taskKeys},
		{"session", fullSession(), sessionKeys},
		// metadata differs per message type: see below.
		{"message", fullMessage(), messageKeys},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertKeys(t, wireKeys(t, tc.v, "metadata"), tc.want)
		})
	}
	resolved := fullMessage()
	resolved.Metadata.SelectedOptionID = "allow"
	metadata := []struct {
		name string
		v    *shared.MessageMetadata
		want []string
	}{
		{"tool call metadata", toolCallMessage().Metadata, toolCallMetadataKeys},
		{"permission metadata", resolved.Metadata, permissionMetadataKeys},
		{"plan metadata", planMessage().Metadata, planMetadataKeys},
		{"clarification metadata", &shared.MessageMetadata{Answer: "yes"}, []string{"answer"}},
	}
	for _, tc := range metadata {
		t.Run(tc.name, func(t *testing.T) {
			// provenance is the adapter's own object, passed through.
			assertKeys(t, wireKeys(t, tc.v, "provenance"), tc.want)
		})
	}
}

func TestWireOmitsAbsentFields(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want []string
	}{
		{
			name: "empty summary",
			v:    shared.TaskStatusSummary{},
			want: []string{"revision", "updated_at", "active_subagent_count", "queued_prompt_count"},
		},
		{
			name: "pull request without a representative",
			v:    shared.PullRequestSummary{Count: 3, AggregateState: shared.PRMerged},
			want: []string{"count", "open_count", "aggregate_state"},
		},
		{
			name: "task without session, worktree or summary",
			v: shared.Task{
				ID: "t-1", WorkspaceID: "w-1", Title: "Fix login",
				Repositories: []shared.TaskRepository{{ID: "r-1", Path: "/src/app", BaseBranch: "main"}},
			},
			want: []string{
				"id", "workspace_id", "title", "description", "archived", "created_at", "updated_at",
				"repositories", "repositories[].id", "repositories[].path", "repositories[].base_branch",
				"active_subagent_count",
			},
		},
		{
			name: "plain agent message",
			v:    shared.Message{ID: "m-1", SessionID: "s-1", TaskID: "t-1", Seq: 1, Type: shared.MessageAgent, Status: shared.MessageComplete},
			want: []string{"id", "session_id", "task_id", "seq", "type", "content", "status", "created_at", "updated_at"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertKeys(t, wireKeys(t, tc.v), tc.want)
		})
	}
}

// wireKeys returns the sorted dotted paths of every object key in v's JSON
// form; an array adds "[]" to the path of its elements. Values under an
// opaque path are not descended into.
func wireKeys(tb testing.TB, v any, opaque ...string) []string {
	tb.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		tb.Fatalf("marshal %T: %v", v, err)
	}
	var tree any
	if err := json.Unmarshal(raw, &tree); err != nil {
		tb.Fatalf("unmarshal %s: %v", raw, err)
	}
	var keys []string
	var walk func(prefix string, node any)
	walk = func(prefix string, node any) {
		switch node := node.(type) {
		case map[string]any:
			for key, child := range node {
				path := prefix + key
				keys = append(keys, path)
				if !slices.Contains(opaque, path) {
					walk(path+".", child)
				}
			}
		case []any:
			for _, child := range node {
				walk(strings.TrimSuffix(prefix, ".")+"[].", child)
			}
		}
	}
	walk("", tree)
	slices.Sort(keys)
	return slices.Compact(keys)
}

func assertKeys(tb testing.TB, got, want []string) {
	tb.Helper()
	want = slices.Sorted(slices.Values(want))
	var missing, extra []string
	for _, k := range want {
		if !slices.Contains(got, k) {
			missing = append(missing, k)
		}
	}
	for _, k := range got {
		if !slices.Contains(want, k) {
			extra = append(extra, k)
		}
	}
	if len(missing) > 0 || len(extra) > 0 {
		tb.Errorf("JSON keys differ from the protocol: missing %q, unexpected %q", missing, extra)
	}
}

func prefixed(prefix string, keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = prefix + k
	}
	return out
}
