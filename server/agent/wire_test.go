package agent

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	acp "github.com/coder/acp-go-sdk"
)

func TestClassifyFollowsTheSDKDispatch(t *testing.T) {
	for _, tc := range []struct {
		frame string
		want  frameKind
		err   string
	}{
		{"  \r\n", frameBlank, ""},
		{`{"jsonrpc":"2.0","method":"session/update","params":{}}`, frameNotification, ""},
		{`{"jsonrpc":"2.0","id":null,"method":"session/update"}`, frameNotification, ""},
		{`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":3}}`, frameCancel, ""},
		{`{"jsonrpc":"2.0","method":"_herd/wire_mark","params":{"mark":1}}`, frameMark, ""},
		{`{"jsonrpc":"2.0","id":4,"method":"session/request_permission","params":{}}`, frameRequest, ""},
		{`{"jsonrpc":"2.0","id":"a","result":{}}`, frameResponse, ""},
		{`{"jsonrpc":"2.0","id":5,"error":{"code":-1,"message":"x"}}`, frameResponse, ""},
		{`not json`, 0, "malformed frame"},
		{`{"method":5}`, 0, "malformed frame"},
		{`{"jsonrpc":"2.0"}`, 0, "neither id nor method"},
		{`null`, 0, "neither id nor method"},
	} {
		got, err := classify([]byte(tc.frame))
		switch {
		case tc.err != "":
			if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err = %v, want %q", tc.frame, err, tc.err)
			}
		case err != nil || got != tc.want:
			t.Errorf("%s: %v, %v; want %v", tc.frame, got, err, tc.want)
		}
	}
}

func FuzzClassify(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"x"}`))
	f.Add([]byte(`{"id":[1],"result":null}`))
	f.Add([]byte("\x00{"))
	f.Fuzz(func(t *testing.T, frame []byte) {
		kind, err := classify(frame)
		if err == nil && kind != frameBlank && !json.Valid(frame) {
			t.Fatalf("invalid JSON %q classified as %v", frame, kind)
		}
	})
}

func TestAppendMarkIsAFrameTheClassifierKnows(t *testing.T) {
	frame := appendMark(nil, 42)
	if kind, err := classify(frame); err != nil || kind != frameMark || !strings.HasSuffix(string(frame), "\n") {
		t.Fatalf("%q: %v, %v", frame, kind, err)
	}
	var m struct{ Params struct{ Mark uint64 } }
	if err := json.Unmarshal(frame, &m); err != nil || m.Params.Mark != 42 {
		t.Fatalf("mark = %+v, %v", m, err)
	}
}

func TestRingKeepsTheTailOfStderr(t *testing.T) {
	var r ring
	r.Write([]byte("first line\n"))
	if got := r.tail(tailLimit); got != "first line" {
		t.Fatalf("tail = %q", got)
	}
	for range 10000 {
		r.Write([]byte("some noisy log line é\n"))
	}
	r.Write([]byte("the last words\n"))
	if len(r.buf) > stderrLimit {
		t.Fatalf("kept %d bytes", len(r.buf))
	}
	tail := r.tail(tailLimit)
	if !strings.HasSuffix(tail, "the last words") || !strings.HasPrefix(tail, "some noisy") || len(tail) > tailLimit {
		t.Fatalf("tail = %q", tail)
	}
}

func TestNormalizeSkipsUnknownKindsTheSDKMisdecodes(t *testing.T) {
	for _, raw := range []string{
		`{"sessionUpdate":"async_task_spawned","asyncTaskId":"bash_1","toolCallId":"t"}`,
		`{"sessionUpdate":"subagent_spawned","name":"Explore"}`,
		`{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"hi"}}`,
	} {
		var u acp.SessionUpdate
		if err := json.Unmarshal([]byte(raw), &u); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if ev, ok := normalize(u, Capabilities{}); ok {
			t.Errorf("%s became %+v", raw, ev)
		}
	}
}

func TestProvenanceIsAttestedOnlyByTheAdapter(t *testing.T) {
	raw := `{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Task","_meta":{"claudeCode":{
		"toolName":"Task","backgroundTaskId":"agent_1","backgroundKind":"subagent","lifecycle":"started",
		"Attested":true,"attested":true}}}`
	var u acp.SessionUpdate
	if err := json.Unmarshal([]byte(raw), &u); err != nil {
		t.Fatal(err)
	}
	// Only the mock speaks herd's explicit lifecycle; attestation comes
	// from the provider's capabilities, never from the frame's own claim.
	for provider, want := range map[string]struct{ explicit, attested bool }{
		"mock": {true, true}, "claude": {false, true}, "codex": {false, false}, "": {false, false},
	} {
		ev, ok := normalize(u, CapabilitiesOf(provider))
		p := ev.Tool.Provenance
		explicit := p != nil && p.BackgroundKind == BackgroundSubagent && p.Lifecycle == LifecycleStarted && p.BackgroundTaskID == "agent_1"
		if !ok || p == nil || p.ToolName != "Task" || explicit != want.explicit || p.Attested != want.attested {
			t.Errorf("%s: %+v", provider, p)
		}
	}
	b, _ := json.Marshal(Provenance{ToolName: "Bash", Attested: true})
	if string(b) != `{"toolName":"Bash"}` {
		t.Fatalf("wire form = %s", b)
	}
}

func TestToolSummariesAreBounded(t *testing.T) {
	long := strings.Repeat("é", summaryLimit)
	u := acp.UpdateToolCall("t", acp.WithUpdateRawInput(map[string]any{"text": long}),
		acp.WithUpdateRawOutput(map[string]any{"text": long}))
	u.ToolCallUpdate.SessionUpdate = "tool_call_update"
	ev, ok := normalize(u, Capabilities{})
	if !ok {
		t.Fatal("not an event")
	}
	for _, s := range []string{ev.Tool.Input, ev.Tool.Output} {
		if len(s) > summaryLimit || !strings.HasSuffix(s, "…") || !utf8.ValidString(s) {
			t.Fatalf("summary %d bytes: %.40q", len(s), s)
		}
	}
}

func TestBuiltinForIncludesTheMockAgent(t *testing.T) {
	profiles := BuiltinFor(MockProfile("/opt/herd/bin/herd", "mock-agent"), "")
	var mock *Profile
	for i := range profiles {
		if profiles[i].ID == MockProfileID {
			mock = &profiles[i]
		}
	}
	if mock == nil || mock.Name != "Mock agent" || mock.Provider != "mock" || mock.Command != "/opt/herd/bin/herd" ||
		strings.Join(mock.Args, " ") != "mock-agent" {
		t.Fatalf("mock profile = %+v", mock)
	}
	if len(profiles) != 4 {
		t.Fatalf("%d built-in profiles, want the three adapters and the mock", len(profiles))
	}
	if p := mockProfile(); !p.Available() {
		t.Fatal("the mock agent of the tests is not available")
	}
}
