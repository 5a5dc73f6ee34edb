package faults

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/herd-dev/herd/shared"
)

// flood is how many frames each pipelined flood sends.
const flood = 3000

// suiteToken is the token of the servers that need one: 24 printable
// bytes, above the 16-byte minimum.
const suiteToken = "faults-suite-token-0123456789"

// hostile is one bad input and the answer it must get.
type hostile struct {
	name   string
	frame  string
	binary bool
	// id is the id the error must carry: the request's when it could be
	// read, "" when the frame had none the server could read.
	id   string
	code shared.Code
}

// request builds a request frame by hand, so that any part of it can be
// wrong; payload is raw JSON ("" for none).
func request(id, action, payload string) string {
	s := `{"id":` + quote(id) + `,"type":"request","action":` + quote(action)
	if payload != "" {
		s += `,"payload":` + payload
	}
	return s + "}"
}

// quote is s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// hostiles is the battery: every kind of bad frame and payload a client
// could send, given the ids of real objects where the input needs them.
func hostiles(ws, task, session, otherTask, otherSession string) []hostile {
	big := func(n int) string { return strings.Repeat("x", n) }
	unknown := "0191e0a0-0000-7000-8000-000000000000"
	bad, missing, conflict := shared.CodeBadRequest, shared.CodeNotFound, shared.CodeConflict
	return []hostile{
		// The envelope.
		{name: "invalid UTF-8", frame: request("u", "ping", `{"x":"`+"\xff\xfe"+`"}`), code: bad},
		{name: "binary frame", frame: request("b", "ping", ""), binary: true, code: bad},
		{name: "malformed JSON", frame: `{"id":"m","type":"request",`, code: bad},
		{name: "JSON array", frame: `[{"id":"a","type":"request","action":"ping"}]`, code: bad},
		{name: "JSON number", frame: `42`, code: bad},
		{name: "JSON string", frame: `"ping"`, code: bad},
		{name: "JSON null", frame: `null`, code: bad},
		{name: "two JSON values", frame: request("two", "ping", "") + `{}`, code: bad},
		{name: "stray closing brace", frame: request("brace", "ping", "") + `}`, code: bad},
		{name: "missing id", frame: `{"type":"request","action":"ping"}`, code: bad},
		{name: "empty id", frame: request("", "ping", ""), code: bad},
		{name: "id of 65 bytes", frame: request(big(65), "ping", ""), code: bad},
		{name: "id of 64 KiB", frame: request(big(64<<10), "ping", ""), code: bad},
		{name: "id is a number", frame: `{"id":7,"type":"request","action":"ping"}`, code: bad},
		{name: "id is an object", frame: `{"id":{"a":1},"type":"request","action":"ping"}`, code: bad},
		{name: "type response", frame: `{"id":"r","type":"response","action":"ping"}`, id: "r", code: bad},
		{name: "type missing", frame: `{"id":"nt","action":"ping"}`, id: "nt", code: bad},
		{name: "type is a number", frame: `{"id":"tn","type":1,"action":"ping"}`, id: "tn", code: bad},
		{name: "action missing", frame: `{"id":"na","type":"request"}`, id: "na", code: bad},
		{name: "action is an array", frame: `{"id":"aa","type":"request","action":["ping"]}`, id: "aa", code: bad},
		{name: "unknown action", frame: request("ua", "task.destroy", `{}`), id: "ua", code: shared.CodeUnknownAction},
		{name: "action of 64 KiB", frame: request("la", big(64<<10), `{}`), id: "la", code: shared.CodeUnknownAction},
		{name: "payload is a number", frame: request("pn", "ping", `5`), id: "pn", code: bad},
		{name: "payload is a string", frame: request("ps", "task.get", `"task"`), id: "ps", code: bad},
		{name: "payload is an array", frame: request("pa", "workspace.create", `["w"]`), id: "pa", code: bad},

		// Payload fields of the wrong JSON type.
		{name: "workspace name is a number", frame: request("t1", "workspace.create", `{"name":5}`), id: "t1", code: bad},
		{name: "task title is an array", frame: request("t2", "task.create", `{"workspace_id":`+quote(ws)+`,"title":[]}`), id: "t2", code: bad},
		{name: "task list limit is a string", frame: request("t3", "task.list", `{"workspace_id":`+quote(ws)+`,"limit":"ten"}`), id: "t3", code: bad},
		{name: "task list limit overflows", frame: request("t4", "task.list", `{"workspace_id":`+quote(ws)+`,"limit":1e30}`), id: "t4", code: bad},
		{name: "task list limit is fractional", frame: request("t5", "task.list", `{"workspace_id":`+quote(ws)+`,"limit":1.5}`), id: "t5", code: bad},
		{name: "prompt content is an object", frame: request("t6", "message.add", `{"session_id":`+quote(session)+`,"client_message_id":"t6","content":{}}`), id: "t6", code: bad},
		{name: "session task id is a boolean", frame: request("t7", "session.create", `{"task_id":true}`), id: "t7", code: bad},
		{name: "archive force is a string", frame: request("t8", "task.archive", `{"task_id":`+quote(task)+`,"force":"yes"}`), id: "t8", code: bad},
		{name: "repositories is a string", frame: request("t9", "task.create", `{"workspace_id":`+quote(ws)+`,"title":"t","repositories":"/tmp"}`), id: "t9", code: bad},
		{name: "before_seq is a string", frame: request("t10", "message.list", `{"session_id":`+quote(session)+`,"before_seq":"9"}`), id: "t10", code: bad},

		// Missing fields and values out of bounds.
		{name: "workspace name empty", frame: request("b1", "workspace.create", `{"name":"  "}`), id: "b1", code: bad},
		{name: "task title missing", frame: request("b2", "task.create", `{"workspace_id":`+quote(ws)+`}`), id: "b2", code: bad},
		{name: "task title of 501 bytes", frame: request("b3", "task.create", `{"workspace_id":`+quote(ws)+`,"title":"`+big(501)+`"}`), id: "b3", code: bad},
		{name: "task description over 64 KiB", frame: request("b4", "task.create", `{"workspace_id":`+quote(ws)+`,"title":"t","description":"`+big(64<<10+1)+`"}`), id: "b4", code: bad},
		{name: "17 repositories", frame: request("b5", "task.create", `{"workspace_id":`+quote(ws)+`,"title":"t","repositories":[`+strings.TrimSuffix(strings.Repeat(`{"path":"/tmp"},`, 17), ",")+`]}`), id: "b5", code: bad},
		{name: "relative repository path", frame: request("b6", "task.create", `{"workspace_id":`+quote(ws)+`,"title":"t","repositories":[{"path":"repo"}]}`), id: "b6", code: bad},
		{name: "repository that is not git", frame: request("b7", "task.create", `{"workspace_id":`+quote(ws)+`,"title":"t","repositories":[{"path":"/proc"}]}`), id: "b7", code: bad},
		{name: "task list limit over 10,000", frame: request("b8", "task.list", `{"workspace_id":`+quote(ws)+`,"limit":10001}`), id: "b8", code: bad},
		{name: "task list limit negative", frame: request("b9", "task.list", `{"workspace_id":`+quote(ws)+`,"limit":-1}`), id: "b9", code: bad},
		{name: "task list cursor forged", frame: request("b10", "task.list", `{"workspace_id":`+quote(ws)+`,"cursor":"garbage"}`), id: "b10", code: bad},
		{name: "prompt without client id", frame: request("b11", "message.add", `{"session_id":`+quote(session)+`,"content":"hi"}`), id: "b11", code: bad},
		{name: "client id of 129 bytes", frame: request("b12", "message.add", `{"session_id":`+quote(session)+`,"client_message_id":"`+big(129)+`","content":"hi"}`), id: "b12", code: bad},
		{name: "prompt over 256 KiB", frame: request("b13", "message.add", `{"session_id":`+quote(session)+`,"client_message_id":"b13","content":"`+big(256<<10+1)+`"}`), id: "b13", code: bad},
		{name: "session prompt over 256 KiB", frame: request("b14", "session.create", `{"task_id":`+quote(task)+`,"prompt":"`+big(256<<10+1)+`"}`), id: "b14", code: bad},
		{name: "message list limit over 500", frame: request("b15", "message.list", `{"session_id":`+quote(session)+`,"limit":501}`), id: "b15", code: bad},
		{name: "clarification answer over 64 KiB", frame: request("b16", "clarification.respond", `{"session_id":`+quote(session)+`,"pending_id":"p","answer":"`+big(64<<10+1)+`"}`), id: "b16", code: bad},
		{name: "pull request URL not GitHub's shape", frame: request("b17", "task.update", `{"task_id":`+quote(task)+`,"pull_request_url":"http://example.com/x"}`), id: "b17", code: bad},
		{name: "task id missing", frame: request("b18", "task.get", `{}`), id: "b18", code: bad},
		{name: "session id blank", frame: request("b19", "session.subscribe", `{"session_id":"   "}`), id: "b19", code: bad},

		// Ids that name nothing.
		{name: "boot unknown workspace", frame: request("n1", "boot", `{"workspace_id":`+quote(unknown)+`}`), id: "n1", code: missing},
		{name: "subscribe unknown workspace", frame: request("n2", "workspace.subscribe", `{"workspace_id":`+quote(unknown)+`}`), id: "n2", code: missing},
		{name: "get unknown task", frame: request("n3", "task.get", `{"task_id":`+quote(unknown)+`}`), id: "n3", code: missing},
		{name: "list tasks of unknown workspace", frame: request("n4", "task.list", `{"workspace_id":`+quote(unknown)+`}`), id: "n4", code: missing},
		{name: "create task in unknown workspace", frame: request("n5", "task.create", `{"workspace_id":`+quote(unknown)+`,"title":"t"}`), id: "n5", code: missing},
		{name: "update unknown task", frame: request("n6", "task.update", `{"task_id":`+quote(unknown)+`,"title":"t"}`), id: "n6", code: missing},
		{name: "archive unknown task", frame: request("n7", "task.archive", `{"task_id":`+quote(unknown)+`}`), id: "n7", code: missing},
		{name: "list sessions of unknown task", frame: request("n8", "session.list", `{"task_id":`+quote(unknown)+`}`), id: "n8", code: missing},
		{name: "create session in unknown task", frame: request("n9", "session.create", `{"task_id":`+quote(unknown)+`}`), id: "n9", code: missing},
		{name: "subscribe unknown session", frame: request("n10", "session.subscribe", `{"session_id":`+quote(unknown)+`}`), id: "n10", code: missing},
		{name: "focus unknown session", frame: request("n11", "session.focus", `{"session_id":`+quote(unknown)+`}`), id: "n11", code: missing},
		{name: "cancel unknown session", frame: request("n12", "session.cancel", `{"session_id":`+quote(unknown)+`}`), id: "n12", code: missing},
		{name: "git refresh of unknown session", frame: request("n13", "session.git.refresh", `{"session_id":`+quote(unknown)+`}`), id: "n13", code: missing},
		{name: "prompt to unknown session", frame: request("n14", "message.add", `{"session_id":`+quote(unknown)+`,"client_message_id":"n14","content":"hi"}`), id: "n14", code: missing},
		{name: "messages of unknown session", frame: request("n15", "message.list", `{"session_id":`+quote(unknown)+`}`), id: "n15", code: missing},
		{name: "unknown message", frame: request("n16", "message.get", `{"session_id":`+quote(session)+`,"message_id":`+quote(unknown)+`}`), id: "n16", code: missing},
		{name: "queue of unknown session", frame: request("n17", "message.queue.get", `{"session_id":`+quote(unknown)+`}`), id: "n17", code: missing},
		{name: "remove unknown queued prompt", frame: request("n18", "message.queue.remove", `{"session_id":`+quote(session)+`,"queue_id":`+quote(unknown)+`}`), id: "n18", code: missing},
		{name: "answer unknown permission", frame: request("n19", "permission.respond", `{"session_id":`+quote(session)+`,"pending_id":`+quote(unknown)+`,"option_id":"allow"}`), id: "n19", code: missing},
		{name: "answer unknown question", frame: request("n20", "clarification.respond", `{"session_id":`+quote(session)+`,"pending_id":`+quote(unknown)+`,"answer":"a"}`), id: "n20", code: missing},
		{name: "dismiss unknown error", frame: request("n21", "error.dismiss", `{"task_id":`+quote(task)+`,"stamp":`+quote(unknown)+`}`), id: "n21", code: missing},
		{name: "dismiss error of unknown task", frame: request("n22", "error.dismiss", `{"task_id":`+quote(unknown)+`,"stamp":"s"}`), id: "n22", code: missing},
		{name: "unknown agent profile", frame: request("n23", "session.create", `{"task_id":`+quote(task)+`,"agent_profile_id":"no-such-agent"}`), id: "n23", code: missing},
		{name: "primary session of another task", frame: request("n24", "task.update", `{"task_id":`+quote(task)+`,"primary_session_id":`+quote(otherSession)+`}`), id: "n24", code: missing},

		// NUL, which PostgreSQL cannot store.
		{name: "NUL in a workspace name", frame: request("z1", "workspace.create", `{"name":"a\u0000b"}`), id: "z1", code: bad},
		{name: "NUL in a prompt", frame: request("z2", "message.add", `{"session_id":`+quote(session)+`,"client_message_id":"z2","content":"a\u0000b"}`), id: "z2", code: bad},
		{name: "NUL in a task title", frame: request("z3", "task.create", `{"workspace_id":`+quote(ws)+`,"title":"\u0000"}`), id: "z3", code: bad},
		{name: "NUL in a key", frame: request("z4", "ping", `{"\u0000":1}`), id: "z4", code: bad},
		{name: "NUL in the id", frame: request("z5\x00", "ping", ""), id: "z5\x00", code: bad},

		// A client message id owned by another task.
		{name: "client id of another task", frame: request("c1", "message.add", `{"session_id":`+quote(otherSession)+`,"client_message_id":"owned","content":"hi"}`), id: "c1", code: conflict},
		{name: "archive a task with a running session", frame: request("c2", "task.archive", `{"task_id":`+quote(otherTask)+`}`), id: "c2", code: conflict},

		// Structure.
		{name: "arrays nested 100,000 deep", frame: request("d1", "ping", strings.Repeat("[", 100000)+strings.Repeat("]", 100000)), code: bad},
		{name: "objects nested 50,000 deep", frame: request("d2", "ping", strings.Repeat(`{"a":`, 50000)+"1"+strings.Repeat("}", 50000)), code: bad},
		{name: "150,000 payload fields", frame: request("d3", "workspace.create", `{`+strings.Repeat(`"x":1,`, 150000)+`"name":5}`), id: "d3", code: bad},
	}
}

// The bad-input battery: every hostile frame gets its documented coded
// error (never internal) and the connection keeps answering; a frame over
// 1 MiB closes the connection with 1009 and a fresh one works; a flood of
// pipelined requests and of bad frames from a client that keeps reading is
// answered in full; afterwards /metrics shows no internal error at all.
func TestBadInputBatteryGetsCodedErrors(t *testing.T) {
	rec := record(t)
	h := startHerd(t, serveOptions{token: suiteToken})
	auth := http.Header{"Authorization": {"Bearer " + suiteToken}}
	c := mustDial(t, h, dialOptions{header: auth})
	f := &fleet{t: t, c: c}
	f.ledger.init()
	var ws shared.Workspace
	f.must(f.call(shared.ActionWorkspaceCreate, shared.WorkspaceCreateRequest{Name: "battery"}, &ws))
	members := make([]*member, 2)
	for i := range members {
		var task shared.Task
		f.must(f.call(shared.ActionTaskCreate, shared.TaskCreateRequest{WorkspaceID: ws.ID, Title: fmt.Sprint("t", i)}, &task))
		var s shared.Session
		f.must(f.call(shared.ActionSessionCreate, shared.SessionCreateRequest{TaskID: task.ID}, &s))
		members[i] = &member{name: fmt.Sprint("t", i), task: task.ID, session: s.ID}
		f.members = append(f.members, members[i])
		f.waitState(members[i], shared.SessionWaitingForInput)
	}
	// "owned" belongs to the first task; the second task's session runs a
	// long turn, so archiving that task is refused.
	_, err := f.add(prompt{"owned", members[0].session, "hello"})
	f.must(err)
	_, err = f.add(prompt{"long", members[1].session, "/scenario sleep 60000"})
	f.must(err)
	f.waitState(members[1], shared.SessionRunning)

	rec.want("wrong_answers", "0")
	rec.want("internal_errors", "0")
	rec.want("unanswered_after", "0")
	for _, hc := range hostiles(ws.ID, members[0].task, members[0].session, members[1].task, members[1].session) {
		rec.add("bad_inputs", 1)
		if problem := try(c, hc); problem != "" {
			rec.add("wrong_answers", 1)
			t.Errorf("%s: %s", hc.name, problem)
		}
		if err := ping(c); err != nil {
			rec.add("unanswered_after", 1)
			t.Fatalf("after %s the connection no longer answers: %v", hc.name, err)
		}
	}

	rec.want("oversized_frame_not_closed_1009", "0")
	rec.add("bad_inputs", 1)
	if status := oversized(c); status != websocket.StatusMessageTooBig {
		rec.add("oversized_frame_not_closed_1009", 1)
		t.Errorf("a frame over 1 MiB: connection ended with %v, want 1009", status)
	}
	c = mustDial(t, h, dialOptions{header: auth})
	if err := ping(c); err != nil {
		rec.add("unanswered_after", 1)
		t.Fatalf("a fresh connection after the oversized frame does not answer: %v", err)
	}

	// Pipelined floods from a client that reads every answer as it comes:
	// requests, then bad frames, each burst written in one piece.
	rec.want("flood_unanswered", "0")
	rec.want("flood_closed", "0")
	floods := map[string]func(i int) string{
		"pings":      func(i int) string { return request(fmt.Sprint("p", i), "ping", `{}`) },
		"bad frames": func(i int) string { return `{"id":"e` + fmt.Sprint(i) + `","type":"request","action":5}` },
	}
	for name, frame := range floods {
		frames := make([]string, flood)
		for i := range frames {
			frames[i] = frame(i)
		}
		rec.add("bad_inputs", 1)
		rec.add("flood_frames", flood)
		answered, status, err := burst(h, auth, frames)
		rec.add("flood_unanswered", flood-answered)
		if status != 0 {
			rec.add("flood_closed", 1)
		}
		if answered != flood {
			t.Errorf("a flood of %d pipelined %s: %d answered, then close status %d (%v)", flood, name, answered, status, err)
		}
	}
	if err := ping(mustDial(t, h, dialOptions{header: auth})); err != nil {
		rec.add("unanswered_after", 1)
		t.Errorf("after the floods a fresh connection does not answer: %v", err)
	}

	internal, err := internalRequests(h)
	f.must(err)
	rec.add("internal_errors", internal)
	if !h.running() {
		t.Fatalf("herd exited during the battery: %v", h.state)
	}
}

// mustDial opens a connection the test closes at its end.
func mustDial(t *testing.T, h *herd, o dialOptions) *client {
	t.Helper()
	ctx, cancel := timeout(10 * time.Second)
	defer cancel()
	c, _, err := dial(ctx, h.addr, o)
	if err != nil {
		t.Fatalf("dial %s: %v", h.addr, err)
	}
	t.Cleanup(c.close)
	return c
}

// ping checks that the connection still answers.
func ping(c *client) error {
	ctx, cancel := timeout(10 * time.Second)
	defer cancel()
	return c.call(ctx, shared.ActionPing, struct{}{}, nil)
}

// try sends one hostile frame and says what is wrong with its answer, or
// "".
func try(c *client, hc hostile) string {
	ctx, cancel := timeout(20 * time.Second)
	defer cancel()
	typ := websocket.MessageText
	if hc.binary {
		typ = websocket.MessageBinary
	}
	var env envelope
	var err error
	if hc.id != "" {
		env, err = c.roundTrip(ctx, hc.id, typ, []byte(hc.frame))
	} else if err = c.conn.Write(ctx, typ, []byte(hc.frame)); err == nil {
		select {
		case env = <-c.idless:
		case <-ctx.Done():
			err = errors.New("no error envelope")
		case <-c.done:
			err = fmt.Errorf("connection closed: %v", c.readErr)
		}
	}
	if err != nil {
		return err.Error()
	}
	var pe *shared.Error
	if !errors.As(decodeAnswer(env, nil), &pe) {
		return fmt.Sprintf("answered %s %s, want error %s", env.Type, env.Payload, hc.code)
	}
	switch {
	case pe.Code != hc.code:
		return fmt.Sprintf("answered %s (%q), want %s", pe.Code, pe.Message, hc.code)
	case pe.Message == "":
		return "the error has no message"
	}
	return ""
}

// oversized sends a frame one byte over 1 MiB and returns the close
// status the connection ends with.
func oversized(c *client) websocket.StatusCode {
	ctx, cancel := timeout(20 * time.Second)
	defer cancel()
	frame := request("huge", "ping", `{"pad":"`+strings.Repeat("x", shared.MaxFrameBytes)+`"}`)
	_ = c.conn.Write(ctx, websocket.MessageText, []byte(frame)) // the server may close while it is written
	select {
	case <-c.done:
		return websocket.CloseStatus(c.readErr)
	case <-ctx.Done():
		return -1
	}
}

// internalRequests sums the herd_ws_requests_total series with code
// "internal" on /metrics, read with the token.
func internalRequests(h *herd) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, h.url("/metrics"), nil)
	req.Header.Set("Authorization", "Bearer "+suiteToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("/metrics with the token: HTTP %d", resp.StatusCode)
	}
	n, seen := 0, false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "herd_ws_requests_total{") {
			continue
		}
		seen = true
		if strings.Contains(line, `code="internal"`) {
			var v float64
			fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v)
			n += int(v)
		}
	}
	if !seen {
		return 0, errors.New("/metrics has no herd_ws_requests_total series")
	}
	return n, sc.Err()
}
