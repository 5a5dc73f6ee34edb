package mockagent

import (
	"fmt"
	"path/filepath"
	"strings"

	acp "github.com/coder/acp-go-sdk"
)

// maxScenarioBytes bounds what the tool content scenarios generate.
const maxScenarioBytes = 16 << 20

// toolOutput plays `tool-output BYTES [STEPS]`: a command whose output,
// numbered lines of about 60 bytes up to BYTES in all, grows over STEPS
// in_progress updates (1 when absent), each carrying the output so far as
// text content, as agents report command output; then it completes.
func (t *turn) toolOutput(args []string) error {
	n, err := intArgs(args, 1, 2)
	if err != nil {
		return err
	}
	size, steps := min(n[0], maxScenarioBytes), max(n[1], 1)
	var out strings.Builder
	for i := 0; out.Len() < size; i++ {
		fmt.Fprintf(&out, "%06d build step output: compiling package %d of the tree\n", i, i)
	}
	text := out.String()[:size]
	id := acp.ToolCallId(t.msg + "-run")
	if err := t.send(t.ctx, acp.StartToolCall(id, "Run make build", acp.WithStartKind(acp.ToolKindExecute),
		acp.WithStartStatus(acp.ToolCallStatusPending), acp.WithStartRawInput(map[string]any{"command": "make build"}))); err != nil {
		return err
	}
	for s := 1; s <= steps; s++ {
		so := text[:size*s/steps]
		if err := t.send(t.ctx, acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusInProgress),
			acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(so))}))); err != nil {
			return err
		}
	}
	if err := t.send(t.ctx, acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusCompleted),
		acp.WithUpdateRawOutput(map[string]any{"exit_code": 0}))); err != nil {
		return err
	}
	return t.say(fmt.Sprintf("The build printed %d bytes.", size))
}

// toolDiff plays `tool-diff LINES`: an edit creating big.txt of LINES
// lines and changing every 50th line of notes.txt of LINES lines, as two
// diff parts of one completed edit tool call.
func (t *turn) toolDiff(args []string) error {
	n, err := intArgs(args, 1, 1)
	if err != nil {
		return err
	}
	lines := min(n[0], maxScenarioBytes/64)
	var created, old, new strings.Builder
	for i := range lines {
		fmt.Fprintf(&created, "line %d of a generated file\n", i+1)
		fmt.Fprintf(&old, "note %d\n", i+1)
		if i%50 == 49 {
			fmt.Fprintf(&new, "note %d, revised\n", i+1)
		} else {
			fmt.Fprintf(&new, "note %d\n", i+1)
		}
	}
	id := acp.ToolCallId(t.msg + "-edit")
	big, notes := filepath.Join(t.cwd, "big.txt"), filepath.Join(t.cwd, "notes.txt")
	err = t.sendAll(
		acp.StartToolCall(id, "Edit big.txt and notes.txt", acp.WithStartKind(acp.ToolKindEdit),
			acp.WithStartStatus(acp.ToolCallStatusPending),
			acp.WithStartLocations([]acp.ToolCallLocation{{Path: big}, {Path: notes}})),
		acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusCompleted),
			acp.WithUpdateContent([]acp.ToolCallContent{
				acp.ToolDiffContent(big, created.String()),
				acp.ToolDiffContent(notes, new.String(), old.String()),
			})),
	)
	if err != nil {
		return err
	}
	return t.say(fmt.Sprintf("Wrote %d lines.", lines))
}
