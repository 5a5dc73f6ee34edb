package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server"
	"github.com/herd-dev/herd/server/gitcli/gittest"
	"github.com/herd-dev/herd/server/push/pushtest"
)

// device is a browser subscribed to a workspace's pushes at the loopback
// push service.
type device struct {
	sub        *pushtest.Subscription
	id         string
	credential string
}

// subscribe registers a new subscription of the push service as a device
// of the workspace, as the web app does after PushManager.subscribe.
func subscribe(t testing.TB, c *wsClient, ps *pushtest.Service, workspaceID any, name string, prefs map[string]any) device {
	t.Helper()
	sub := ps.NewSubscription()
	req := map[string]any{"workspace_id": workspaceID, "name": name, "endpoint": sub.Endpoint,
		"keys": map[string]any{"p256dh": sub.P256dh, "auth": sub.Auth}}
	if prefs != nil {
		req["preferences"] = prefs
	}
	out := c.call("push.subscribe", req)
	dev := out["device"].(map[string]any)
	return device{sub: sub, id: dev["id"].(string), credential: out["credential"].(string)}
}

// pushes waits for the device's nth push and decodes them all.
func (d device) pushes(t testing.TB, n int) []map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	msgs, err := d.sub.WaitMessages(ctx, n)
	require.NoError(t, err, "waiting for push %d", n)
	out := make([]map[string]any, len(msgs))
	for i, m := range msgs {
		require.NoError(t, json.Unmarshal(m.Plaintext, &out[i]))
		out[i]["\x00ttl"], out[i]["\x00urgency"], out[i]["\x00topic"], out[i]["\x00at"] = m.TTL, m.Urgency, m.Topic, m.At
	}
	return out
}

// decide posts a notification's decision with a credential and returns
// the status and body.
func decide(t *testing.T, srv *server.Server, credential string, body map[string]any) (int, map[string]any) {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, "http://"+srv.Addr()+"/api/v1/push/decision", bytes.NewReader(b))
	require.NoError(t, err)
	if credential != "" {
		req.Header.Set("Authorization", "HerdDevice "+credential)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(raw, &out), "%s", raw)
	return resp.StatusCode, out
}

// A permission request reaches the workspace's inbox (the feed and
// inbox.list) and every device as one encrypted, signed push with the
// agent's options as actions; a decision from one device's notification
// takes only that device's credential for that workspace's exact request,
// is safe to repeat and continues the agent's turn; then every device is
// told to close the notification and the inbox empties.
func TestAPermissionRequestReachesTheInboxAndEveryDeviceAndIsAnsweredFromANotification(t *testing.T) {
	ps := pushtest.New(t)
	srv := MustStart(t, nil)
	owner := MustDial(t, srv, nil)
	ps.ExpectApplicationKey(owner.call("push.config.get", map[string]any{})["public_key"].(string))
	task, session := newTaskSession(t, owner)
	ws := task["workspace_id"]
	feed := follower(t, srv, ws)
	phone := subscribe(t, owner, ps, ws, "Phone", nil)
	laptop := subscribe(t, owner, ps, ws, "Laptop", nil)
	other := owner.call("workspace.create", map[string]any{"name": "Other"})
	stranger := subscribe(t, owner, ps, other["id"], "Elsewhere", nil)

	owner.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "p-1", "content": "/scenario permission"})
	request := awaitRequest(t, owner, "permission_request")
	opened := feed.awaitNotification("inbox.request.opened")
	assert.Equal(t, request["pending_id"], opened["pending_id"])
	assert.Equal(t, "permission", opened["kind"])
	assert.Equal(t, "Edit notes.txt", opened["title"])
	assert.Equal(t, "edit", opened["tool_kind"])
	inbox := owner.call("inbox.list", map[string]any{"workspace_id": ws})["requests"].([]any)
	require.Len(t, inbox, 1)
	assert.Equal(t, request["pending_id"], inbox[0].(map[string]any)["pending_id"])

	for _, d := range []device{phone, laptop} {
		p := d.pushes(t, 1)[0]
		assert.Equal(t, "permission", p["kind"])
		assert.Equal(t, "task:"+task["id"].(string), p["tag"])
		assert.Equal(t, "agent task needs your permission", p["title"])
		assert.Equal(t, "Edit notes.txt", p["body"])
		assert.Equal(t, request["pending_id"], p["pending_id"])
		assert.Equal(t, session["id"], p["session_id"])
		assert.Equal(t, ws, p["workspace_id"])
		assert.Equal(t, "/tasks/"+task["id"].(string)+"/sessions/"+session["id"].(string), p["url"])
		assert.Equal(t, []any{
			map[string]any{"option_id": "allow", "label": "Allow", "kind": "allow_once"},
			map[string]any{"option_id": "reject", "label": "Reject", "kind": "reject_once"},
		}, p["actions"])
		assert.EqualValues(t, 1, p["pending"])
		assert.InDelta(t, 12*3600, p["\x00ttl"], 60, "12 h, less what passed before it was sent")
		assert.Equal(t, "high", p["\x00urgency"])
		assert.Len(t, p["\x00topic"], 22)
	}

	decision := func(option string) map[string]any {
		return map[string]any{"workspace_id": ws, "session_id": session["id"], "pending_id": request["pending_id"], "option_id": option}
	}
	status, body := decide(t, srv, "", decision("allow"))
	assert.Equal(t, http.StatusUnauthorized, status, "no credential: %v", body)
	status, _ = decide(t, srv, phone.id+".not-the-secret", decision("allow"))
	assert.Equal(t, http.StatusUnauthorized, status, "a wrong secret")
	status, _ = decide(t, srv, stranger.credential, decision("allow"))
	assert.Equal(t, http.StatusForbidden, status, "another workspace's device")
	replayed := decision("allow")
	replayed["workspace_id"] = other["id"]
	status, _ = decide(t, srv, stranger.credential, replayed)
	assert.Equal(t, http.StatusForbidden, status, "replayed as another workspace's request")
	wrongID := decision("allow")
	wrongID["pending_id"] = "not-" + request["pending_id"].(string)
	status, _ = decide(t, srv, phone.credential, wrongID)
	assert.Equal(t, http.StatusNotFound, status, "only the exact request id")
	status, _ = decide(t, srv, phone.credential, decision("maybe"))
	assert.Equal(t, http.StatusBadRequest, status, "an option the request does not offer")

	status, body = decide(t, srv, phone.credential, decision("allow"))
	require.Equal(t, http.StatusOK, status, "%v", body)
	assert.Equal(t, "resolved", body["message"].(map[string]any)["status"])
	assert.Nil(t, body["repeated"])
	status, body = decide(t, srv, phone.credential, decision("allow"))
	require.Equal(t, http.StatusOK, status, "a retried post")
	assert.Equal(t, true, body["repeated"])
	status, _ = decide(t, srv, laptop.credential, decision("reject"))
	assert.Equal(t, http.StatusConflict, status, "answered otherwise already")

	require.Equal(t, "end_turn", awaitSettled(t, owner))
	assert.Contains(t, transcript(t, owner, session["id"]), "agent:allowed")
	closed := feed.awaitNotification("inbox.request.closed")
	assert.Equal(t, request["pending_id"], closed["pending_id"])
	assert.Equal(t, "resolved", closed["status"])
	p := laptop.pushes(t, 2)[1]
	assert.Equal(t, "close", p["kind"])
	assert.Equal(t, "task:"+task["id"].(string), p["tag"])
	assert.EqualValues(t, 0, p["pending"])
	assert.Empty(t, owner.call("inbox.list", map[string]any{"workspace_id": ws})["requests"])

	// The phone closed its own notification when it answered: no close
	// is pushed to it (a push that shows nothing costs a browser's
	// patience), so its next push is the next request.
	owner.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "p-2", "content": "/scenario permission"})
	awaitRequest(t, owner, "permission_request")
	assert.Equal(t, "permission", phone.pushes(t, 2)[1]["kind"])
	assert.Equal(t, "permission", laptop.pushes(t, 3)[2]["kind"])
	assert.Empty(t, stranger.sub.Messages(), "another workspace's device is told nothing")
}

// A question is pushed as a clarification and answered with text; a
// request the agent withdraws (its turn cancelled) closes the
// notification, and a decision about it afterwards is a conflict.
func TestAQuestionIsAnsweredFromItsNotificationAndAWithdrawnRequestIsAConflict(t *testing.T) {
	ps := pushtest.New(t)
	srv := MustStart(t, nil)
	owner := MustDial(t, srv, nil)
	task, session := newTaskSession(t, owner)
	ws := task["workspace_id"]
	phone := subscribe(t, owner, ps, ws, "Phone", nil)

	owner.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "q-1", "content": "/scenario clarify"})
	question := awaitRequest(t, owner, "clarification_request")
	p := phone.pushes(t, 1)[0]
	assert.Equal(t, "clarification", p["kind"])
	assert.Equal(t, "agent task asks you a question", p["title"])
	assert.Nil(t, p["actions"], "a question is answered in the app")
	answer := map[string]any{"workspace_id": ws, "session_id": session["id"], "pending_id": question["pending_id"], "answer": "blue"}
	status, body := decide(t, srv, phone.credential, answer)
	require.Equal(t, http.StatusOK, status, "%v", body)
	require.Equal(t, "end_turn", awaitSettled(t, owner))

	owner.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "p-2", "content": "/scenario permission"})
	request := awaitRequest(t, owner, "permission_request")
	assert.Equal(t, "permission", phone.pushes(t, 2)[1]["kind"], "no close to the device that answered")
	owner.call("session.cancel", map[string]any{"session_id": session["id"]})
	require.Equal(t, "cancelled", awaitSettled(t, owner))
	assert.Equal(t, "close", phone.pushes(t, 3)[2]["kind"], "a withdrawn request's notification closes")
	status, _ = decide(t, srv, phone.credential, map[string]any{"workspace_id": ws, "session_id": session["id"],
		"pending_id": request["pending_id"], "option_id": "allow"})
	assert.Equal(t, http.StatusConflict, status)
}

// A push service that answers 410 has dropped the subscription: the device
// is removed. push.test answers only once the push service took the test,
// and says its reason when it did not.
func TestAGoneSubscriptionIsRemovedAndATestPushSaysWhatTheServiceSaid(t *testing.T) {
	ps := pushtest.New(t)
	srv := MustStart(t, nil)
	owner := MustDial(t, srv, nil)
	task, session := newTaskSession(t, owner)
	ws := task["workspace_id"]
	kept := subscribe(t, owner, ps, ws, "Kept", nil)
	gone := subscribe(t, owner, ps, ws, "Gone", nil)
	ps.Script(gone.sub, pushtest.Answer{Status: http.StatusGone}, pushtest.Always)

	owner.call("push.test", map[string]any{"device_id": kept.id})
	test := kept.pushes(t, 1)[0]
	assert.Equal(t, "test", test["kind"])
	failed := owner.callErr("push.test", map[string]any{"device_id": gone.id}, "unavailable")
	assert.Contains(t, failed["message"], "410")

	owner.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "p-1", "content": "/scenario permission"})
	awaitRequest(t, owner, "permission_request")
	kept.pushes(t, 2)
	devices := owner.call("push.device.list", map[string]any{"workspace_id": ws})["devices"].([]any)
	require.Len(t, devices, 1)
	assert.Equal(t, kept.id, devices[0].(map[string]any)["id"])
}

// What a summary change says goes only to the devices that asked for it:
// an agent error, a finished turn, a pull request turning red; a device
// left at the defaults (requests only) is told none of it.
func TestSummaryChangesNotifyOnlyTheDevicesThatAskedForThem(t *testing.T) {
	const secret = "s3cret"
	ps := pushtest.New(t)
	srv := MustStart(t, func(cfg *server.Config, _ *server.Options) { cfg.GitHubWebhookSecret = secret })
	c := MustDial(t, srv, nil)
	repo := gittest.Init(t)
	ws := c.call("workspace.create", map[string]any{"name": "W"})
	task := c.call("task.create", map[string]any{
		"workspace_id": ws["id"], "title": "Fix login", "repositories": []any{map[string]any{"path": repo}},
	})
	session := c.call("session.create", map[string]any{"task_id": task["id"], "agent_profile_id": "mock"})
	c.call("session.subscribe", map[string]any{"session_id": session["id"]})
	awaitState(t, c, session["id"], "WAITING_FOR_INPUT")
	everything := subscribe(t, c, ps, ws["id"], "Everything", map[string]any{
		"requests": true, "errors": true, "turns": true, "pull_requests": true})
	quiet := subscribe(t, c, ps, ws["id"], "Requests only", nil)

	c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "e-1", "content": "/scenario error"})
	awaitSettled(t, c)
	p := everything.pushes(t, 1)[0]
	assert.Equal(t, "error", p["kind"])
	assert.Equal(t, "Fix login hit an error", p["title"])
	assert.NotEmpty(t, p["body"])
	assert.InDelta(t, 3600, p["\x00ttl"], 60, "an error keeps an hour")

	c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "t-1", "content": "/scenario stream 5 20"})
	awaitSettled(t, c)
	p = everything.pushes(t, 2)[1]
	assert.Equal(t, "turn", p["kind"])
	assert.Equal(t, "Fix login finished its turn", p["title"])
	assert.Equal(t, "low", p["\x00urgency"])

	branch := task["repositories"].([]any)[0].(map[string]any)["branch"].(string)
	for i, name := range []string{"pull_request_opened.json", "check_suite_completed.json"} {
		recorded, err := os.ReadFile("github/testdata/" + name)
		require.NoError(t, err)
		body := bytes.ReplaceAll(recorded, []byte(`"herd/0190a1b2-fix-login"`), []byte(`"`+branch+`"`))
		event := strings.TrimSuffix(strings.TrimSuffix(name, "_opened.json"), "_completed.json")
		require.Equal(t, http.StatusOK, deliver(t, srv, fmt.Sprintf("d-%d", i), event, sign(secret, body), body))
	}
	p = everything.pushes(t, 3)[2]
	assert.Equal(t, "pull_request", p["kind"])
	assert.Equal(t, "Fix login pull request is failing", p["title"])
	assert.Equal(t, "#42", p["body"])

	// The quiet device heard none of it; a request still reaches it.
	c.call("message.add", map[string]any{"session_id": session["id"], "client_message_id": "p-1", "content": "/scenario permission"})
	awaitRequest(t, c, "permission_request")
	assert.Equal(t, "permission", quiet.pushes(t, 1)[0]["kind"])
	assert.Equal(t, "permission", everything.pushes(t, 4)[3]["kind"])
}

// Devices belong to the token that made them: after the server's token
// changes they are removed at start and their credentials decide nothing.
// A renewed subscription keeps its device and gets a new credential.
func TestDevicesBelongToTheTokenThatMadeThem(t *testing.T) {
	const first, second = "first-token-0123456789", "second-token-0123456789"
	ps := pushtest.New(t)
	dir := t.TempDir()
	start := func(token string) (*server.Server, *wsClient) {
		srv := MustStart(t, func(cfg *server.Config, _ *server.Options) { cfg.DataDir, cfg.Token = dir, token })
		return srv, MustDial(t, srv, http.Header{"Authorization": {"Bearer " + token}})
	}
	srv, c := start(first)
	ws := c.call("workspace.create", map[string]any{"name": "W"})
	phone := subscribe(t, c, ps, ws["id"], "Phone", nil)

	renewed := ps.NewSubscription()
	body, err := json.Marshal(map[string]any{"endpoint": renewed.Endpoint, "keys": map[string]any{"p256dh": renewed.P256dh, "auth": renewed.Auth}})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, "http://"+srv.Addr()+"/api/v1/push/resubscribe", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "HerdDevice "+phone.credential)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	var moved map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&moved))
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "%v", moved)
	assert.Equal(t, phone.id, moved["device"].(map[string]any)["id"], "the same device")
	fresh := moved["credential"].(string)
	assert.NotEqual(t, phone.credential, fresh)
	status, _ := decide(t, srv, phone.credential, map[string]any{"workspace_id": ws["id"], "session_id": "s", "pending_id": "p", "option_id": "allow"})
	assert.Equal(t, http.StatusUnauthorized, status, "the old credential is replaced")
	status, _ = decide(t, srv, fresh, map[string]any{"workspace_id": ws["id"], "session_id": "s", "pending_id": "p", "option_id": "allow"})
	assert.Equal(t, http.StatusNotFound, status, "the new one is the device's")
	c.call("push.test", map[string]any{"device_id": phone.id})
	require.Len(t, device{sub: renewed}.pushes(t, 1), 1, "pushes go to the renewed subscription")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, srv.Shutdown(ctx))
	srv, c = start(second)
	assert.Empty(t, c.call("push.device.list", map[string]any{"workspace_id": ws["id"]})["devices"])
	status, _ = decide(t, srv, fresh, map[string]any{"workspace_id": ws["id"], "session_id": "s", "pending_id": "p", "option_id": "allow"})
	assert.Equal(t, http.StatusUnauthorized, status, "another token's device decides nothing")
}
