package store

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

func TestPreviewExcerptKeepsTheFirstNonBlankLine(t *testing.T) {
	long := strings.Repeat("é", 300) // 600 bytes
	tests := []struct {
		name, content, want string
	}{
		{"one line", "Hello", "Hello"},
		{"the first line of several", "Hello\nworld", "Hello"},
		{"blank lines and white space skipped", "\n \t\n\u00a0\r\n  Hello there  \nnext", "Hello there"},
		{"carriage returns end lines", "first\rsecond", "first"},
		{"white space only", " \n\t\r\n ", ""},
		{"empty", "", ""},
		{"a long line is cut on a character boundary", long + "\nnext", strings.Repeat("é", previewSourceChars/2)},
		{"a cut never splits a character", "a" + long, "a" + strings.Repeat("é", (previewSourceChars-1)/2)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := previewExcerpt(tc.content)
			require.Equal(t, tc.want, got)
			require.LessOrEqual(t, len(got), previewSourceChars)
			require.True(t, utf8.ValidString(got))
		})
	}
}

// A session keeps one bounded line of its newest complete agent message
// and of its newest sent prompt, and SummarySources reads the primary
// session's with the task: the preview never needs the transcript.
func TestSummarySourcesReadsThePrimarySessionsLines(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		task := sourceTask(t, s, mustWorkspace(t, s, "w").ID)
		primary, other := mustSession(t, s, task.ID), mustSession(t, s, task.ID)
		lines := func() (agent, prompt string) {
			src := mustSources(t, s, task.ID)
			require.Equal(t, primary, src.PrimarySessionID)
			return src.AgentLine, src.PromptLine
		}
		agentLine := func() string { a, _ := lines(); return a }

		t.Run("nothing before the first messages", func(t *testing.T) {
			agent, prompt := lines()
			require.Empty(t, agent)
			require.Empty(t, prompt)
		})

		t.Run("a prompt counts once it is sent", func(t *testing.T) {
			msg, _, claimed, err := s.AddAndClaimUserMessage(ctx, primary, "p-1", "\n\n  Fix the login bug  \nIt loses focus.", "token")
			require.NoError(t, err)
			require.True(t, claimed)
			_, prompt := lines()
			require.Empty(t, prompt, "claimed, not sent")
			require.NoError(t, s.MarkSent(ctx, msg.ID, "token"))
			_, prompt = lines()
			require.Equal(t, "Fix the login bug", prompt)

			queued, _, err := s.AddUserMessage(ctx, primary, "p-2", "queued for later")
			require.NoError(t, err)
			_, prompt = lines()
			require.Equal(t, "Fix the login bug", prompt, "a queued prompt is not sent")
			require.Equal(t, shared.CodeConflict, shared.ErrorCode(s.MarkSent(ctx, queued.ID, "token")))
			_, prompt = lines()
			require.Equal(t, "Fix the login bug", prompt, "a refused MarkSent records nothing")
		})

		t.Run("an agent message counts once it is complete", func(t *testing.T) {
			before, err := s.GetSession(ctx, primary)
			require.NoError(t, err)
			msg := mustAppend(t, s, primary, shared.MessageAgent, shared.MessageStreaming, "", "## Look")
			require.NoError(t, s.AppendText(ctx, msg.ID, len("## Look"), "ing into it\nsecond line"))
			require.Empty(t, agentLine(), "a streaming message is not shown")
			_, err = s.FinishMessage(ctx, msg.ID, shared.MessageComplete)
			require.NoError(t, err)
			require.Equal(t, "## Looking into it", agentLine(), "the folded text's first line, markup left to the projector")

			after, err := s.GetSession(ctx, primary)
			require.NoError(t, err)
			require.Equal(t, before.UpdatedAt, after.UpdatedAt, "a line is no state change: last_activity_at stays")
			require.Equal(t, before.StateRevision, after.StateRevision)
		})

		t.Run("messages that did not complete, or say nothing, keep the line", func(t *testing.T) {
			for _, status := range []shared.MessageState{shared.MessageFailed, shared.MessageCancelled} {
				msg := mustAppend(t, s, primary, shared.MessageAgent, shared.MessageStreaming, "", "cut off")
				_, err := s.FinishMessage(ctx, msg.ID, status)
				require.NoError(t, err)
			}
			blank := mustAppend(t, s, primary, shared.MessageAgent, shared.MessageStreaming, "", " \n\t")
			_, err := s.FinishMessage(ctx, blank.ID, shared.MessageComplete)
			require.NoError(t, err)
			mustAppend(t, s, primary, shared.MessageThinking, shared.MessageComplete, "", "thinking aloud")
			mustAppend(t, s, primary, shared.MessageToolCall, shared.MessageComplete, "", "Read README.md")
			require.Equal(t, "## Looking into it", agentLine())
		})

		t.Run("another session's messages are not the primary's", func(t *testing.T) {
			mustAppend(t, s, other, shared.MessageAgent, shared.MessageComplete, "", "elsewhere")
			require.Equal(t, "## Looking into it", agentLine())
		})

		t.Run("a complete agent message appended whole counts", func(t *testing.T) {
			mustAppend(t, s, primary, shared.MessageAgent, shared.MessageComplete, "", "Done.\nDetails follow.")
			require.Equal(t, "Done.", agentLine())
		})

		t.Run("a long line is bounded", func(t *testing.T) {
			msg := mustAppend(t, s, primary, shared.MessageAgent, shared.MessageStreaming, "", "")
			require.NoError(t, s.AppendText(ctx, msg.ID, 0, strings.Repeat("日本", 1000)))
			_, err := s.FinishMessage(ctx, msg.ID, shared.MessageComplete)
			require.NoError(t, err)
			got := agentLine()
			require.LessOrEqual(t, len(got), previewSourceChars)
			require.True(t, utf8.ValidString(got))
			require.True(t, strings.HasPrefix(strings.Repeat("日本", 1000), got))
		})

		t.Run("pending requests carry the start of their content", func(t *testing.T) {
			mustAppend(t, s, primary, shared.MessagePermissionRequest, shared.MessagePending, "perm", "Edit notes.txt")
			mustAppend(t, s, primary, shared.MessageClarificationRequest, shared.MessagePending, "ask", strings.Repeat("é", 2000))
			pending := mustSources(t, s, task.ID).Pending
			require.Len(t, pending, 2)
			require.Equal(t, "Edit notes.txt", pending[0].Content)
			require.Equal(t, strings.Repeat("é", previewSourceChars), pending[1].Content, "cut by characters")
		})

		t.Run("the lines follow the primary session", func(t *testing.T) {
			_, err := s.UpdateTask(ctx, shared.TaskUpdateRequest{TaskID: task.ID, PrimarySessionID: &other})
			require.NoError(t, err)
			src := mustSources(t, s, task.ID)
			require.Equal(t, "elsewhere", src.AgentLine)
			require.Empty(t, src.PromptLine)
			empty := ""
			_, err = s.UpdateTask(ctx, shared.TaskUpdateRequest{TaskID: task.ID, PrimarySessionID: &empty})
			require.NoError(t, err)
			src = mustSources(t, s, task.ID)
			require.Empty(t, src.AgentLine, "no primary session, no line")
			require.Empty(t, src.PromptLine)
		})
	})
}

// Migration 7 fills the lines of sessions that existed before it from
// their transcripts.
func TestSessionLinesMigrationFillsExistingSessions(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		task := sourceTask(t, s, mustWorkspace(t, s, "w").ID)
		session := mustSession(t, s, task.ID)
		msg, _, _, err := s.AddAndClaimUserMessage(ctx, session, "p-1", "\n  Please fix it", "token")
		require.NoError(t, err)
		require.NoError(t, s.MarkSent(ctx, msg.ID, "token"))
		_, _, err = s.AddUserMessage(ctx, session, "p-2", "still queued")
		require.NoError(t, err)
		mustAppend(t, s, session, shared.MessageAgent, shared.MessageComplete, "", "older answer")
		mustAppend(t, s, session, shared.MessageAgent, shared.MessageComplete, "", "\n\nFixed.\nThe form keeps focus now.")
		mustAppend(t, s, session, shared.MessageAgent, shared.MessageFailed, "", "cut off")

		p, err := newProvider(s.pools[0], dialect)
		require.NoError(t, err)
		_, err = p.DownTo(ctx, 6)
		require.NoError(t, err)
		// Up to the newest again: the later migrations' columns are read
		// with the lines.
		_, err = p.Up(ctx)
		require.NoError(t, err)

		src := mustSources(t, s, task.ID)
		require.Equal(t, "Fixed.\nThe form keeps focus now.", src.AgentLine, "the newest complete answer, from its first non-blank line")
		require.Equal(t, "Please fix it", src.PromptLine, "the newest sent prompt")
	})
}
