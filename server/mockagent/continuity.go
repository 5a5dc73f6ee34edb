package mockagent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	acp "github.com/coder/acp-go-sdk"
)

// The ways the mock can continue a session it opened in an earlier
// process (flag --restore, env HERD_MOCK_RESTORE). Each needs --state-dir.
const (
	restoreResume = "resume" // advertise sessionCapabilities.resume
	restoreLoad   = "load"   // advertise loadSession only, replaying history
	restoreNone   = "none"   // keep history but offer no way back
)

// session is one ACP session of the mock: its cwd and the turns it has
// played, which the history scenario reports and session/load replays.
type session struct {
	Cwd   string     `json:"cwd"`
	Turns []exchange `json:"turns"`
	// Config holds the settings changed from their initial values
	// (config.go), by option id.
	Config map[string]string `json:"config,omitempty"`
	// running counts the session's turns in flight; not kept.
	running int
}

// exchange is one played turn: the prompt and the answer text.
type exchange struct {
	Prompt string `json:"prompt"`
	Answer string `json:"answer"`
}

// newSessionID returns a fresh session id, random so that ids do not
// repeat across processes, as a real agent's do not.
func newSessionID() (acp.SessionId, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return acp.SessionId("mock-" + hex.EncodeToString(b[:])), nil
}

// sessionPath is where a session's history is kept, or "" without a
// state directory. Only ids the mock itself makes are accepted, so a
// client cannot name a path outside it.
func (m *mock) sessionPath(id acp.SessionId) (string, error) {
	if m.stateDir == "" {
		return "", nil
	}
	hexID, ok := strings.CutPrefix(string(id), "mock-")
	if _, err := hex.DecodeString(hexID); !ok || err != nil || hexID == "" {
		return "", acp.NewInvalidParams(map[string]any{"error": "unknown session " + string(id)})
	}
	return filepath.Join(m.stateDir, hexID+".json"), nil
}

// save writes a session's history to its file, if it has one.
func (m *mock) save(id acp.SessionId, s *session) error {
	path, err := m.sessionPath(id)
	if err != nil || path == "" {
		return err
	}
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// restore reads a session an earlier process saved and makes it live.
func (m *mock) restore(id acp.SessionId, cwd string) (*session, error) {
	path, err := m.sessionPath(id)
	if err != nil {
		return nil, err
	}
	if path == "" {
		return nil, acp.NewInvalidParams(map[string]any{"error": "unknown session " + string(id)})
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, acp.NewInvalidParams(map[string]any{"error": "unknown session " + string(id)})
	}
	if err != nil {
		return nil, acp.NewInternalError(map[string]any{"error": err.Error()})
	}
	s := &session{}
	if err := json.Unmarshal(b, s); err != nil {
		return nil, acp.NewInternalError(map[string]any{"error": "corrupt session file: " + err.Error()})
	}
	s.Cwd = cwd
	m.mu.Lock()
	m.sessions[id] = s
	m.mu.Unlock()
	return s, nil
}

// ResumeSession continues a saved session, when --restore is resume.
func (m *mock) ResumeSession(_ context.Context, p acp.ResumeSessionRequest) (acp.ResumeSessionResponse, error) {
	if m.restoreMode != restoreResume {
		return acp.ResumeSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionResume)
	}
	s, err := m.restore(p.SessionId, p.Cwd)
	if err != nil {
		return acp.ResumeSessionResponse{}, err
	}
	options, modes, models := m.sessionConfig(s)
	return acp.ResumeSessionResponse{ConfigOptions: options, Modes: modes, Models: models}, nil
}

// LoadSession continues a saved session, when --restore is load, after
// replaying its history as user and agent message chunks.
func (m *mock) LoadSession(ctx context.Context, p acp.LoadSessionRequest) (acp.LoadSessionResponse, error) {
	if m.restoreMode != restoreLoad {
		return acp.LoadSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionLoad)
	}
	s, err := m.restore(p.SessionId, p.Cwd)
	if err != nil {
		return acp.LoadSessionResponse{}, err
	}
	for i, x := range s.Turns {
		id := fmt.Sprintf("replay-%d", i)
		for _, u := range []acp.SessionUpdate{
			{UserMessageChunk: &acp.SessionUpdateUserMessageChunk{Content: acp.TextBlock(x.Prompt)}},
			{AgentMessageChunk: &acp.SessionUpdateAgentMessageChunk{Content: acp.TextBlock(x.Answer), MessageId: &id}},
		} {
			if err := m.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: p.SessionId, Update: u}); err != nil {
				return acp.LoadSessionResponse{}, err
			}
		}
	}
	options, modes, models := m.sessionConfig(s)
	return acp.LoadSessionResponse{ConfigOptions: options, Modes: modes, Models: models}, nil
}

// history answers with the prompts of the session's earlier turns, so a
// test can tell whether a session continued.
func (t *turn) history() error {
	t.m.mu.Lock()
	prompts := make([]string, len(t.s.Turns))
	for i, x := range t.s.Turns {
		prompts[i] = x.Prompt
	}
	t.m.mu.Unlock()
	return t.say("history: " + strings.Join(prompts, " | "))
}
