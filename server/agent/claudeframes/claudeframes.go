// Package claudeframes holds frames that the real Claude ACP adapter sent
// to a plain ACP v1 client, recorded against a scripted model endpoint (go
// test ./server/agent -run TestRealClaude -args -record-claude). Each file
// is one scenario: a header line naming the adapter and Claude Code
// versions, then every frame the adapter wrote, in wire order. The agent
// runtime's Claude attestation is tested against them and the mock agent
// replays them (its claude-replay scenario).
package claudeframes

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
)

//go:embed *.jsonl
var files embed.FS

// Header describes where a recording came from.
type Header struct {
	// Adapter is the adapter's npm package and version, PACKAGE@VERSION.
	Adapter string `json:"adapter"`
	// ClaudeCode is the version of the Claude Code the adapter ran.
	ClaudeCode string `json:"claudeCode"`
	// Scenario names the recording (the file's name).
	Scenario string `json:"scenario"`
	// Recorded is the day it was recorded, YYYY-MM-DD.
	Recorded string `json:"recorded"`
	// How is the command that recorded it.
	How string `json:"how"`
}

// Recording is one scenario's frames.
type Recording struct {
	Header Header
	// Frames are the adapter's JSON-RPC messages, in wire order.
	Frames []json.RawMessage
}

// Load returns the recording of the scenario name ("stream", "subagent",
// "shell", "permission").
func Load(name string) (Recording, error) {
	data, err := files.ReadFile(name + ".jsonl")
	if err != nil {
		return Recording{}, fmt.Errorf("claude recording %q: %w", name, err)
	}
	var rec Recording
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 4<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if n == 1 {
			var h struct {
				Fixture Header `json:"fixture"`
			}
			if err := json.Unmarshal(line, &h); err != nil || h.Fixture.Adapter == "" {
				return Recording{}, fmt.Errorf("claude recording %q: line 1 is not a header", name)
			}
			rec.Header = h.Fixture
			continue
		}
		if !json.Valid(line) {
			return Recording{}, fmt.Errorf("claude recording %q: line %d is not JSON", name, n)
		}
		rec.Frames = append(rec.Frames, append(json.RawMessage(nil), line...))
	}
	return rec, sc.Err()
}

// Prompt returns the session/update params of the recording's one prompt
// turn (after session/new answered, request 2, until the prompt answered,
// request 3), the prompt's stop reason, and the updates the adapter sent
// after that answer.
func (r Recording) Prompt() (turn []json.RawMessage, stopReason string, after []json.RawMessage, err error) {
	phase := 0 // 0 before the prompt, 1 during, 2 after
	for _, f := range r.Frames {
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(f, &m); err != nil {
			return nil, "", nil, err
		}
		switch {
		case m.ID != nil && *m.ID == 2 && m.Result != nil:
			phase = 1
		case m.ID != nil && *m.ID == 3 && m.Result != nil:
			var res struct {
				StopReason string `json:"stopReason"`
			}
			if err := json.Unmarshal(m.Result, &res); err != nil {
				return nil, "", nil, err
			}
			stopReason, phase = res.StopReason, 2
		case m.Method == "session/update" && phase == 1:
			turn = append(turn, m.Params)
		case m.Method == "session/update" && phase == 2:
			after = append(after, m.Params)
		}
	}
	if stopReason == "" {
		return nil, "", nil, fmt.Errorf("claude recording %q has no prompt result", r.Header.Scenario)
	}
	return turn, stopReason, after, nil
}
