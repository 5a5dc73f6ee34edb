package mockagent

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"go.uber.org/goleak"
)

// TestMain checks that the agent's goroutines end with it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// pipeClient is a bare ACP client that keeps the agent's text.
type pipeClient struct {
	mu   sync.Mutex
	text strings.Builder
}

func (c *pipeClient) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	if u := n.Update.AgentMessageChunk; u != nil && u.Content.Text != nil {
		c.mu.Lock()
		c.text.WriteString(u.Content.Text.Text)
		c.mu.Unlock()
	}
	return nil
}

func (c *pipeClient) takeText() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.text.String()
	c.text.Reset()
	return s
}

func (*pipeClient) RequestPermission(context.Context, acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeSelected("allow")}, nil
}

func (*pipeClient) ReadTextFile(context.Context, acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	return acp.ReadTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsReadTextFile)
}

func (*pipeClient) WriteTextFile(context.Context, acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	return acp.WriteTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsWriteTextFile)
}

func (*pipeClient) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalCreate)
}

func (*pipeClient) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalKill)
}

func (*pipeClient) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalOutput)
}

func (*pipeClient) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalRelease)
}

func (*pipeClient) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalWaitForExit)
}

// startMockInProcess runs Run on pipes and returns a connected
// client with an open session. Closing the agent's stdin ends it.
func startMockInProcess(t *testing.T, args ...string) (*acp.ClientSideConnection, *pipeClient, acp.SessionId) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), "v-test", args, inR, outW, io.Discard) }()
	client := &pipeClient{}
	conn := acp.NewClientSideConnection(client, inW, outR)
	conn.SetLogger(slog.New(slog.DiscardHandler))
	t.Cleanup(func() {
		inW.Close()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		outW.Close()
		<-conn.Done()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	init, err := conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber})
	if err != nil || init.AgentInfo == nil || init.AgentInfo.Name != "herd-mock-agent" || init.AgentInfo.Version != "v-test" {
		t.Fatalf("initialize = %+v, %v", init, err)
	}
	if _, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: "relative", McpServers: []acp.McpServer{}}); err == nil {
		t.Fatal("relative cwd accepted")
	}
	ns, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	return conn, client, ns.SessionId
}

func TestMockAgentAnswersPromptsInProcess(t *testing.T) {
	conn, client, sid := startMockInProcess(t)
	ctx := context.Background()
	for _, tc := range []struct{ prompt, text, code string }{
		{"echo me", "echo me", ""},
		{"/scenario stream 5", "0 1 2 3 4 ", ""},
		{"/scenario reasoning-burst 3", "done", ""},
		{"/scenario clarify", "this client does not offer _herd/clarify", ""},
		{"/scenario slow-start 10", "slow-start delays initialize: start the agent with --slow-start MS or HERD_MOCK_SLOW_START_MS", ""},
		{"/scenario sleep 1", "", ""},
		{"/scenario nope", "", "-32602"},
		{"/scenario stream x", "", "-32602"},
		{"/scenario write", "", "-32602"},
	} {
		resp, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: sid, Prompt: []acp.ContentBlock{acp.TextBlock(tc.prompt)}})
		if got := client.takeText(); got != tc.text {
			t.Errorf("%q: text = %q, want %q", tc.prompt, got, tc.text)
		}
		var re *acp.RequestError
		switch {
		case tc.code == "" && (err != nil || resp.StopReason != acp.StopReasonEndTurn):
			t.Errorf("%q: %+v, %v", tc.prompt, resp, err)
		case tc.code != "" && (!errors.As(err, &re) || !strings.Contains(re.Error(), tc.code)):
			t.Errorf("%q: err = %v, want code %s", tc.prompt, err, tc.code)
		}
	}
	if _, err := conn.SetSessionMode(ctx, acp.SetSessionModeRequest{SessionId: sid, ModeId: "x"}); err == nil ||
		!strings.Contains(err.Error(), "-32601") {
		t.Errorf("set_mode: err = %v, want method not found", err)
	}
}

func TestMockAgentRejectsBadArguments(t *testing.T) {
	for _, args := range [][]string{{"--slow-start", "soon"}, {"--slow-start", "-1"}, {"extra"}} {
		if err := Run(context.Background(), "v-test", args, strings.NewReader(""), io.Discard, io.Discard); err == nil {
			t.Errorf("mock-agent %q accepted", args)
		}
	}
	t.Setenv("HERD_MOCK_SLOW_START_MS", "later")
	err := Run(context.Background(), "v-test", nil, strings.NewReader(""), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "HERD_MOCK_SLOW_START_MS") {
		t.Errorf("bad env accepted: %v", err)
	}
}
