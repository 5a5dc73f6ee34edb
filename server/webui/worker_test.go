package webui

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

// t0 is when the test messages were sent.
var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// scenario is what testdata/worker_harness.js plays against the served
// service worker.
type scenario struct {
	// Devices are the stored device credentials, by workspace id.
	Devices map[string]storedDevice `json:"devices,omitempty"`
	// Windows are the open windows of the app.
	Windows []window `json:"windows,omitempty"`
	// Fetch answers the worker's requests in order (200 {} after them).
	Fetch []fetchAnswer `json:"fetch,omitempty"`
	// Notifications are open before the first step.
	Notifications []shownNotification `json:"notifications,omitempty"`
	// Renewed is the subscription pushManager.subscribe makes.
	Renewed *subscription `json:"renewed,omitempty"`
	Steps   []step        `json:"steps"`
}

type storedDevice struct {
	DeviceID   string `json:"device_id"`
	Credential string `json:"credential"`
}

type window struct {
	URL             string `json:"url"`
	Focused         bool   `json:"focused"`
	VisibilityState string `json:"visibilityState"`
}

type fetchAnswer struct {
	Status int            `json:"status,omitempty"`
	Error  bool           `json:"error,omitempty"`
	JSON   map[string]any `json:"json,omitempty"`
}

type subscription struct {
	Endpoint string            `json:"endpoint"`
	Keys     map[string]string `json:"keys"`
	Key      []byte            `json:"-"`
}

// MarshalJSON writes the key as numbers, which the harness turns into an
// ArrayBuffer.
func (s subscription) MarshalJSON() ([]byte, error) {
	key := make([]int, len(s.Key))
	for i, b := range s.Key {
		key[i] = int(b)
	}
	return json.Marshal(map[string]any{"endpoint": s.Endpoint, "keys": s.Keys, "key": key})
}

type click struct {
	Tag    string `json:"tag"`
	Action string `json:"action,omitempty"`
}

type renewal struct {
	Old *subscription `json:"old,omitempty"`
	New *subscription `json:"new,omitempty"`
}

// step is one event: a push (its data as text; JSON null for a push
// without data), a click on the notification of a tag, a direct call of
// handleNotificationAction, or a pushsubscriptionchange.
type step struct {
	Push  *json.RawMessage `json:"push,omitempty"`
	Click *click           `json:"click,omitempty"`
	Call  *click           `json:"call,omitempty"`
	Renew *renewal         `json:"renew,omitempty"`
}

type shownNotification struct {
	Title              string           `json:"title"`
	Body               string           `json:"body"`
	Tag                string           `json:"tag"`
	Renotify           bool             `json:"renotify"`
	RequireInteraction bool             `json:"requireInteraction"`
	Icon               string           `json:"icon"`
	Badge              string           `json:"badge"`
	Timestamp          int64            `json:"timestamp"`
	Actions            []map[string]any `json:"actions"`
	Data               map[string]any   `json:"data"`
}

type madeRequest struct {
	URL         string            `json:"url"`
	Method      string            `json:"method"`
	Headers     map[string]string `json:"headers"`
	Body        map[string]any    `json:"body"`
	Credentials string            `json:"credentials"`
	Bounded     bool              `json:"bounded"`
}

// workerLog is what the worker did.
type workerLog struct {
	Shown      []shownNotification `json:"shown"`
	Closed     []string            `json:"closed"`
	Fetches    []madeRequest       `json:"fetches"`
	Badges     []int               `json:"badges"`
	Focused    int                 `json:"focused"`
	Messages   []map[string]any    `json:"messages"`
	Opened     []string            `json:"opened"`
	Saved      []map[string]string `json:"saved"`
	Subscribed []struct {
		UserVisibleOnly bool  `json:"userVisibleOnly"`
		Key             []int `json:"key"`
	} `json:"subscribed"`
	Imported []string            `json:"imported"`
	Outcomes []string            `json:"outcomes"`
	Open     []map[string]string `json:"open"`
}

// play runs sc against the service worker the handler serves, in node.
func play(t *testing.T, sc scenario) workerLog {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node is required to check the service worker when CI=true")
		}
		t.Skip("SKIPPING service worker checks: node not found on PATH")
	}
	worker := filepath.Join(t.TempDir(), "app-worker.js")
	res := get(newHandler(t, staticFS(t, true)), http.MethodGet, "/app-worker.js", nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.NoError(t, os.WriteFile(worker, body(t, res), 0o600))

	input, err := json.Marshal(sc)
	require.NoError(t, err)
	cmd := exec.Command(node, filepath.Join("testdata", "worker_harness.js"), worker)
	cmd.Stdin = bytes.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "harness: %s", stderr.String())
	var out workerLog
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &out), stdout.String())
	return out
}

// pushOf is a push step carrying msg as JSON.
func pushOf(t *testing.T, msg any) step {
	t.Helper()
	b, err := json.Marshal(msg)
	require.NoError(t, err)
	return rawPush(string(b))
}

// rawPush is a push step carrying text as its data.
func rawPush(text string) step {
	b, _ := json.Marshal(text)
	raw := json.RawMessage(b)
	return step{Push: &raw}
}

// permissionPush is a permission request of task t1 with two options.
func permissionPush(pending int) shared.PushMessage {
	return shared.PushMessage{
		Kind: shared.PushPermission, Tag: "task:t1", WorkspaceID: "w1", TaskID: "t1", SessionID: "s1",
		PendingID: "p1", Title: "Fix the login bug needs permission", Body: "Edit notes.txt", ToolKind: "edit",
		Actions: []shared.PushAction{
			{OptionID: "allow", Label: "Allow once", Kind: "allow_once"},
			{OptionID: "reject", Label: "Reject", Kind: "reject_once"},
		},
		URL: "/tasks/t1/sessions/s1", Pending: pending, SentAt: t0,
	}
}

func TestServiceWorkerReplacesGoAppsPushHandlers(t *testing.T) {
	js := string(body(t, get(newHandler(t, staticFS(t, true)), http.MethodGet, "/app-worker.js", nil)))
	for _, event := range []string{"push", "notificationclick", "pushsubscriptionchange"} {
		assert.Equal(t, 1, strings.Count(js, `addEventListener("`+event+`"`), "one %s handler", event)
	}
	assert.NotContains(t, js, "goapp.path", "go-app's own push handler is gone")
	assert.Contains(t, js, `importScripts("/web/push.js")`)
	assert.Contains(t, js, "\nasync function handleNotificationAction(notification, action) {",
		"browser tests call it by name on the worker target")
	assert.Contains(t, js, `"/web/push.js"`, "the script the worker imports is cached with the app")
}

func TestAPermissionRequestShowsItsOptionsAsButtons(t *testing.T) {
	out := play(t, scenario{Steps: []step{pushOf(t, permissionPush(3))}})
	require.Len(t, out.Shown, 1)
	n := out.Shown[0]
	assert.Equal(t, "Fix the login bug needs permission", n.Title)
	assert.Equal(t, "Edit notes.txt", n.Body)
	assert.Equal(t, "task:t1", n.Tag)
	assert.True(t, n.Renotify, "a replaced notification of the task alerts again")
	assert.True(t, n.RequireInteraction, "a request stays until it is acted on")
	assert.Equal(t, "/web/icon-192.png", n.Icon)
	assert.Equal(t, "/web/icon-192.png", n.Badge)
	assert.Equal(t, t0.UnixMilli(), n.Timestamp)
	assert.Equal(t, []map[string]any{{"action": "allow", "title": "Allow once"}, {"action": "reject", "title": "Reject"}}, n.Actions)
	assert.Equal(t, "p1", n.Data["pending_id"], "the message rides along for the click")
	assert.Equal(t, []int{3}, out.Badges)
	assert.Equal(t, []string{"/web/push.js"}, out.Imported)
}

func TestAClarificationIsShownWithoutButtons(t *testing.T) {
	msg := permissionPush(1)
	msg.Kind, msg.Title, msg.Body = shared.PushClarification, "Fix the login bug asks", "Which branch?"
	out := play(t, scenario{Steps: []step{pushOf(t, msg)}})
	require.Len(t, out.Shown, 1)
	assert.True(t, out.Shown[0].RequireInteraction)
	assert.Empty(t, out.Shown[0].Actions, "a question is answered in the app")
}

func TestACloseMessageClosesOnlyItsTasksNotification(t *testing.T) {
	out := play(t, scenario{
		Notifications: []shownNotification{{Title: "A", Tag: "task:t1"}, {Title: "B", Tag: "task:t2"}},
		Steps:         []step{pushOf(t, shared.PushMessage{Kind: shared.PushClose, Tag: "task:t1", WorkspaceID: "w1", Pending: 0})},
	})
	assert.Equal(t, []string{"task:t1"}, out.Closed)
	assert.Empty(t, out.Shown)
	assert.Equal(t, []map[string]string{{"title": "B", "tag": "task:t2"}}, out.Open)
	assert.Equal(t, []int{0}, out.Badges, "no open request clears the badge")
}

func TestAnUnreadablePushStillShowsANotification(t *testing.T) {
	null := json.RawMessage("null")
	tests := []struct {
		name string
		push step
	}{
		{"no data", step{Push: &null}},
		{"not JSON", rawPush("{oops")},
		{"JSON without a kind", rawPush(`{"title":"x"}`)},
		{"a JSON array", rawPush(`[1,2]`)},
		{"a kind that is not text", rawPush(`{"kind":7}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := play(t, scenario{Steps: []step{tt.push}})
			require.Len(t, out.Shown, 1)
			assert.Equal(t, "herd needs you", out.Shown[0].Title)
			assert.Equal(t, "herd", out.Shown[0].Tag)
			assert.Empty(t, out.Badges)
		})
	}
}

func TestAMessageWithoutATagGetsOne(t *testing.T) {
	msg := permissionPush(1)
	msg.Tag = ""
	out := play(t, scenario{Steps: []step{pushOf(t, msg)}})
	require.Len(t, out.Shown, 1, "renotify needs a tag; without one the notification would not show")
	assert.Equal(t, "herd", out.Shown[0].Tag)
}

func TestWhileHerdIsInViewOnlyRequestsAndTestsAreShown(t *testing.T) {
	kinds := []shared.PushKind{shared.PushPermission, shared.PushClarification, shared.PushTest, shared.PushTurn, shared.PushError, shared.PushPullRequest}
	tests := []struct {
		name   string
		window window
		shown  []string
	}{
		{"focused and visible", window{URL: "https://herd.test/", Focused: true, VisibilityState: "visible"}, []string{"permission", "clarification", "test"}},
		{"hidden", window{URL: "https://herd.test/", VisibilityState: "hidden"}, []string{"permission", "clarification", "test", "turn", "error", "pull_request"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := scenario{Windows: []window{tt.window}}
			for i, k := range kinds {
				msg := permissionPush(1)
				msg.Kind, msg.Tag = k, "task:"+string(rune('a'+i))
				sc.Steps = append(sc.Steps, pushOf(t, msg))
			}
			out := play(t, sc)
			var shown []string
			for _, n := range out.Shown {
				shown = append(shown, n.Data["kind"].(string))
			}
			assert.Equal(t, tt.shown, shown)
		})
	}
}

func TestAnActionPostsTheDecisionWithTheDeviceCredential(t *testing.T) {
	devices := map[string]storedDevice{"w1": {DeviceID: "d1", Credential: "d1.secret"}, "w2": {DeviceID: "d2", Credential: "d2.other"}}
	out := play(t, scenario{
		Devices: devices,
		Steps:   []step{pushOf(t, permissionPush(2)), {Call: &click{Tag: "task:t1", Action: "allow"}}},
	})
	assert.Equal(t, []string{"answered"}, out.Outcomes)
	require.Len(t, out.Fetches, 1)
	req := out.Fetches[0]
	assert.Equal(t, "/api/v1/push/decision", req.URL)
	assert.Equal(t, http.MethodPost, req.Method)
	assert.Equal(t, "HerdDevice d1.secret", req.Headers["Authorization"], "the credential of the message's workspace")
	assert.Equal(t, "application/json", req.Headers["Content-Type"])
	assert.Equal(t, map[string]any{"workspace_id": "w1", "session_id": "s1", "pending_id": "p1", "option_id": "allow"}, req.Body)
	assert.Equal(t, "omit", req.Credentials)
	assert.True(t, req.Bounded, "a hung server cannot keep the notification waiting")
	assert.Equal(t, []string{"task:t1"}, out.Closed)
	assert.Empty(t, out.Open)
}

func TestAButtonClickRunsTheAction(t *testing.T) {
	out := play(t, scenario{
		Devices: map[string]storedDevice{"w1": {DeviceID: "d1", Credential: "d1.secret"}},
		Steps:   []step{pushOf(t, permissionPush(2)), {Click: &click{Tag: "task:t1", Action: "reject"}}},
	})
	require.Len(t, out.Fetches, 1)
	assert.Equal(t, "reject", out.Fetches[0].Body["option_id"])
	assert.Empty(t, out.Open)
	assert.Zero(t, out.Focused, "answering from the notification opens nothing")
	assert.Empty(t, out.Opened)
}

func TestAnActionThatCannotAnswerSaysSo(t *testing.T) {
	tests := []struct {
		name    string
		answer  fetchAnswer
		devices map[string]storedDevice
		outcome string
		title   string
	}{
		{"answered elsewhere", fetchAnswer{Status: 409}, nil, "already answered", "Already answered"},
		{"no such request", fetchAnswer{Status: 404}, nil, "already answered", "Already answered"},
		{"server error", fetchAnswer{Status: 503}, nil, "failed", "Could not answer"},
		{"credential refused", fetchAnswer{Status: 401}, nil, "failed", "Could not answer"},
		{"other workspace", fetchAnswer{Status: 403}, nil, "failed", "Could not answer"},
		{"bad request", fetchAnswer{Status: 400}, nil, "failed", "Could not answer"},
		{"offline", fetchAnswer{Error: true}, nil, "failed", "Could not answer"},
		{"no credential stored", fetchAnswer{Status: 200}, map[string]storedDevice{}, "failed", "Could not answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			devices := tt.devices
			if devices == nil {
				devices = map[string]storedDevice{"w1": {DeviceID: "d1", Credential: "d1.secret"}}
			}
			out := play(t, scenario{
				Devices: devices,
				Fetch:   []fetchAnswer{tt.answer},
				Steps:   []step{pushOf(t, permissionPush(1)), {Call: &click{Tag: "task:t1", Action: "allow"}}},
			})
			assert.Equal(t, []string{tt.outcome}, out.Outcomes)
			require.Len(t, out.Shown, 2)
			replaced := out.Shown[1]
			assert.Equal(t, tt.title, replaced.Title)
			assert.Equal(t, "task:t1", replaced.Tag, "it replaces the request's notification")
			assert.Empty(t, replaced.Actions, "nothing more to press")
			assert.Equal(t, "/tasks/t1/sessions/s1", replaced.Data["url"], "a tap opens the task")
			assert.Equal(t, []map[string]string{{"title": tt.title, "tag": "task:t1"}}, out.Open)
			if len(tt.devices) == 0 && tt.devices != nil {
				assert.Empty(t, out.Fetches, "without a credential nothing is sent")
			}
		})
	}
}

func TestTappingANotificationOpensItsTask(t *testing.T) {
	foreign := permissionPush(1)
	foreign.URL = "https://elsewhere.example/steal"
	tests := []struct {
		name     string
		windows  []window
		msg      shared.PushMessage
		messages []map[string]any
		opened   []string
	}{
		{
			"in the open window, in place",
			[]window{{URL: "https://herd.test/", VisibilityState: "hidden"}},
			permissionPush(1),
			[]map[string]any{{"goapp": map[string]any{"type": "notification", "path": "/tasks/t1/sessions/s1"}}},
			[]string{},
		},
		{"in a new window when none is open", nil, permissionPush(1), []map[string]any{}, []string{"https://herd.test/tasks/t1/sessions/s1"}},
		{"never on another origin", nil, foreign, []map[string]any{}, []string{"https://herd.test/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := play(t, scenario{Windows: tt.windows, Steps: []step{pushOf(t, tt.msg), {Click: &click{Tag: "task:t1"}}}})
			assert.Equal(t, tt.messages, out.Messages)
			assert.Equal(t, tt.opened, out.Opened)
			assert.Equal(t, len(tt.windows), out.Focused)
			assert.Empty(t, out.Fetches, "a tap decides nothing")
			assert.Equal(t, []string{"task:t1"}, out.Closed)
		})
	}
}

func TestARenewedSubscriptionIsRegisteredForEveryDevice(t *testing.T) {
	key := []byte{4, 1, 2, 3}
	renewed := &subscription{Endpoint: "https://push.example/new", Keys: map[string]string{"p256dh": "BP", "auth": "AU"}}
	out := play(t, scenario{
		Devices: map[string]storedDevice{"w1": {DeviceID: "d1", Credential: "d1.a"}, "w2": {DeviceID: "d2", Credential: "d2.b"}},
		Renewed: renewed,
		Fetch: []fetchAnswer{
			{Status: 200, JSON: map[string]any{"device": map[string]any{"id": "d1"}, "credential": "d1.new"}},
			{Status: 401},
		},
		Steps: []step{{Renew: &renewal{Old: &subscription{Endpoint: "https://push.example/old", Key: key}}}},
	})
	require.Len(t, out.Subscribed, 1, "the browser gave no new subscription: one is made with the old key")
	assert.True(t, out.Subscribed[0].UserVisibleOnly)
	assert.Equal(t, []int{4, 1, 2, 3}, out.Subscribed[0].Key)
	require.Len(t, out.Fetches, 2)
	for i, cred := range []string{"HerdDevice d1.a", "HerdDevice d2.b"} {
		assert.Equal(t, "/api/v1/push/resubscribe", out.Fetches[i].URL)
		assert.Equal(t, cred, out.Fetches[i].Headers["Authorization"])
		assert.Equal(t, map[string]any{"endpoint": "https://push.example/new", "keys": map[string]any{"p256dh": "BP", "auth": "AU"}}, out.Fetches[i].Body)
	}
	assert.Equal(t, []map[string]string{{"workspace_id": "w1", "device_id": "d1", "credential": "d1.new"}}, out.Saved,
		"the new credential is kept; a refused device keeps its old one")
}

func TestARenewalTheBrowserMadeIsRegisteredAsIs(t *testing.T) {
	out := play(t, scenario{
		Devices: map[string]storedDevice{"w1": {DeviceID: "d1", Credential: "d1.a"}},
		Steps:   []step{{Renew: &renewal{New: &subscription{Endpoint: "https://push.example/given", Keys: map[string]string{"p256dh": "BP", "auth": "AU"}}}}},
	})
	assert.Empty(t, out.Subscribed)
	require.Len(t, out.Fetches, 1)
	assert.Equal(t, "https://push.example/given", out.Fetches[0].Body["endpoint"])
}
