package agent

import (
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

// toolEvents returns the tool call events of a replayed recording.
func toolEvents(evs []Event) []*ToolCall {
	var out []*ToolCall
	for _, ev := range evs {
		if ev.Kind == EventToolCall || ev.Kind == EventToolCallUpdate {
			out = append(out, ev.Tool)
		}
	}
	return out
}

func TestClaudeFixtureWriteAndEditCarryDiffs(t *testing.T) {
	calls := toolEvents(replayFixture(t, "edit"))
	var write, edit []*ToolCall
	for _, c := range calls {
		switch {
		case strings.HasPrefix(c.ID, "toolu_write"):
			write = append(write, c)
		case strings.HasPrefix(c.ID, "toolu_edit"):
			edit = append(edit, c)
		}
	}
	if len(write) == 0 || len(edit) == 0 {
		t.Fatalf("write calls %d, edit calls %d", len(write), len(edit))
	}
	start := write[0]
	if start.Kind != "edit" || start.Status != ToolPending || start.Content == nil || len(start.Content) != 0 {
		t.Fatalf("the start of the write = %+v, want an edit, pending, with empty (not absent) content", start)
	}
	// The adapter's second frame gives the diff of a new file: no old text.
	var created *ToolContent
	for _, c := range write {
		for i := range c.Content {
			if c.Content[i].Type == ToolDiff {
				created = &c.Content[i]
			}
		}
	}
	if created == nil || created.OldText != nil || created.NewText != "one\ntwo\nthree\n" || !strings.HasSuffix(created.Path, "notes.txt") {
		t.Fatalf("write diff = %+v, want a new file notes.txt with three lines", created)
	}
	// An update without content leaves it unchanged: nil, not empty.
	var bare int
	for _, c := range write[1:] {
		if c.Content == nil && c.Locations == nil {
			bare++
		}
	}
	if bare == 0 {
		t.Fatal("no update of the write left its content unchanged")
	}
	// The edit's last diff is the whole file's, with the line it starts at.
	var last *ToolCall
	for _, c := range edit {
		if len(c.Content) > 0 {
			last = c
		}
	}
	d := last.Content[0]
	if d.Type != ToolDiff || d.OldText == nil || *d.OldText != "one\ntwo\nthree" || d.NewText != "one\n2\nand a half\nthree" {
		t.Fatalf("edit diff = %+v", d)
	}
	if len(last.Locations) != 1 || last.Locations[0].Line != 1 || !strings.HasSuffix(last.Locations[0].Path, "notes.txt") {
		t.Fatalf("edit locations = %+v", last.Locations)
	}
	if end := edit[len(edit)-1]; end.Status != ToolCompleted || !strings.Contains(end.Output, "updated successfully") {
		t.Fatalf("the edit's end = %+v, want completed with its raw output", end)
	}
}

func TestClaudeFixtureShellOutputIsTextContent(t *testing.T) {
	var text string
	for _, c := range toolEvents(replayFixture(t, "shell")) {
		for _, part := range c.Content {
			if part.Type == ToolText && strings.Contains(part.Text, "Command running in background") {
				text = part.Text
			}
		}
	}
	if !strings.HasPrefix(text, "```console\n") {
		t.Fatalf("shell output = %.80q, want the adapter's console block as text content", text)
	}
}

func TestToolContentKeepsEveryPartWhole(t *testing.T) {
	long := strings.Repeat("line\n", 100000)
	old := "a\n"
	u := acp.UpdateToolCall("t", acp.WithUpdateContent([]acp.ToolCallContent{
		acp.ToolContent(acp.TextBlock(long)),
		acp.ToolDiffContent("/w/f.go", "b\n", old),
		{Terminal: &acp.ToolCallContentTerminal{TerminalId: "term-1", Type: "terminal"}},
		acp.ToolContent(acp.ImageBlock("AAAA", "image/png")),
	}))
	u.ToolCallUpdate.SessionUpdate = "tool_call_update"
	ev, ok := normalize(u, Capabilities{})
	if !ok {
		t.Fatal("not an event")
	}
	c := ev.Tool.Content
	if len(c) != 4 || c[0].Text != long || c[1].Type != ToolDiff || *c[1].OldText != old || c[1].NewText != "b\n" ||
		c[2].Type != ToolTerminal || c[2].TerminalID != "term-1" || c[3].Text != "[image]" {
		t.Fatalf("content = %+v", c)
	}
	if ev.Tool.Locations != nil {
		t.Fatal("an update without locations must leave them unchanged")
	}
}
