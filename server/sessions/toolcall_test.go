package sessions

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/agent"
	"github.com/herd-dev/herd/server/coalescer"
	"github.com/herd-dev/herd/shared"
)

// toolCalls returns the tool call messages of the transcript.
func (rig *sessionRig) toolCalls(t *testing.T) []shared.Message {
	t.Helper()
	var out []shared.Message
	for _, m := range rig.transcript(t) {
		if m.Type == shared.MessageToolCall {
			out = append(out, m)
		}
	}
	return out
}

// The real Claude adapter's Write and Edit (recorded frames, replayed by
// the mock agent) become two tool call messages whose diffs are stored as
// unified diffs, each call updated in place as its frames come.
func TestRealClaudeWriteAndEditAreStoredWithTheirDiffs(t *testing.T) {
	rig := newSessionRig(t, "sqlite")
	_, err := rig.m.AddMessage(context.Background(), rig.session.ID, "c-edit", "/scenario claude-replay edit")
	require.NoError(t, err)
	rig.waitSettledAs(t, shared.TurnEndTurn)

	calls := rig.toolCalls(t)
	require.Len(t, calls, 2, "one message per call, updated in place")
	write, edit := calls[0], calls[1]
	assert.Equal(t, shared.MessageComplete, write.Status)
	assert.True(t, strings.HasPrefix(write.Content, "Write /"), write.Content)
	require.Len(t, write.Metadata.Content, 1)
	d := write.Metadata.Content[0]
	assert.Equal(t, shared.ToolContentDiff, d.Type)
	assert.True(t, d.NewFile)
	assert.Equal(t, "@@ -0,0 +1,3 @@\n+one\n+two\n+three\n", d.Body)
	assert.Equal(t, 3, d.Added)
	assert.Contains(t, write.Metadata.Input, `"file_path"`, "the input of an earlier update is kept by later ones without it")
	assert.Contains(t, write.Metadata.Output, "File created successfully")

	require.Len(t, edit.Metadata.Content, 1, "the adapter's second diff replaced its first")
	d = edit.Metadata.Content[0]
	assert.Equal(t, "@@ -1,3 +1,4 @@\n one\n-two\n+2\n+and a half\n three\n", d.Body)
	assert.False(t, d.NewFile)
	require.Len(t, edit.Metadata.Locations, 1)
	assert.Equal(t, 1, edit.Metadata.Locations[0].Line)
	assert.True(t, strings.HasSuffix(edit.Metadata.Locations[0].Path, "notes.txt"))
	assert.Equal(t, []string{edit.Metadata.Locations[0].Path}, edit.Metadata.Paths)
}

// An update's content replaces the call's; an update without content
// keeps it, one with an empty list clears it. A large output is stored
// whole, carried bounded, and read back in pages.
func TestToolCallContentIsReplacedKeptOrClearedAsACPSays(t *testing.T) {
	ctx := context.Background()
	rig := newSessionRig(t, "sqlite")
	r, _, err := rig.m.runOf(ctx, rig.session.ID)
	require.NoError(t, err)
	s := newSink(r)
	tool := func(kind agent.EventKind, call agent.ToolCall) shared.Message {
		t.Helper()
		s.handle(coalescer.Output{Op: coalescer.OpBarrier, Event: agent.Event{Kind: kind, Tool: &call}})
		calls := rig.toolCalls(t)
		require.Len(t, calls, 1)
		return calls[0]
	}
	m := tool(agent.EventToolCall, agent.ToolCall{ID: "t1", Title: "Run ls", Kind: "execute", Status: agent.ToolPending,
		Content: []agent.ToolContent{{Type: agent.ToolText, Text: "starting"}}, Locations: []agent.ToolLocation{{Path: "/w", Line: 3}}})
	require.Len(t, m.Metadata.Content, 1)
	assert.Equal(t, "starting", m.Metadata.Content[0].Body)

	m = tool(agent.EventToolCallUpdate, agent.ToolCall{ID: "t1", Status: agent.ToolInProgress})
	assert.Equal(t, shared.MessageStreaming, m.Status)
	assert.Equal(t, "Run ls", m.Content, "an absent title is unchanged")
	require.Len(t, m.Metadata.Content, 1, "absent content is unchanged")
	assert.Equal(t, []shared.ToolLocation{{Path: "/w", Line: 3}}, m.Metadata.Locations)

	big := strings.Repeat("output line\n", 100000) // 1.2 MB
	m = tool(agent.EventToolCallUpdate, agent.ToolCall{ID: "t1", Content: []agent.ToolContent{{Type: agent.ToolText, Text: big}}})
	p := m.Metadata.Content[0]
	assert.True(t, p.Truncated)
	assert.Equal(t, len(big), p.Size)
	assert.Equal(t, 100000, p.Lines)
	assert.LessOrEqual(t, len(p.Body), shared.ToolTextWireBytes)
	var whole strings.Builder
	for off := 0; off < len(big); {
		page, err := rig.st.ToolContentPage(ctx, shared.ToolContentGetRequest{SessionID: rig.session.ID, MessageID: m.ID, Offset: off})
		require.NoError(t, err)
		whole.WriteString(page.Body)
		off += len(page.Body)
	}
	assert.Equal(t, big, whole.String())

	m = tool(agent.EventToolCallUpdate, agent.ToolCall{ID: "t1", Status: agent.ToolCompleted, Content: []agent.ToolContent{}, Locations: []agent.ToolLocation{}})
	assert.Equal(t, shared.MessageComplete, m.Status)
	assert.Empty(t, m.Metadata.Content, "an empty list clears the content")
	assert.Empty(t, m.Metadata.Locations)
	assert.Equal(t, "execute", m.Metadata.Kind)
	_, err = rig.st.ToolContentPage(ctx, shared.ToolContentGetRequest{SessionID: rig.session.ID, MessageID: m.ID})
	assert.Equal(t, shared.CodeNotFound, shared.ErrorCode(err), "the old bodies went with it")
}
