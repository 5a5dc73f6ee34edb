package projector

import (
	"context"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// pending is an open request of a session.
func pending(sessionID string, typ shared.MessageType, seq int64, content string) store.PendingRequest {
	return store.PendingRequest{SessionID: sessionID, MessageID: "m", PendingID: "p", Type: typ, Seq: seq, Content: content}
}

func TestDerivePreviewPrecedence(t *testing.T) {
	const (
		perm    = shared.MessagePermissionRequest
		clarify = shared.MessageClarificationRequest
	)
	tests := []struct {
		name string
		src  store.SummarySource
		want string
	}{
		{"nothing said yet", store.SummarySource{PrimarySessionID: "a"}, ""},
		{"no primary session: no preview", store.SummarySource{AgentLine: "stray", PromptLine: "stray"}, ""},
		{"only a prompt: the person's own words", store.SummarySource{PrimarySessionID: "a", PromptLine: "Fix the login bug"}, "You: Fix the login bug"},
		{"an agent answer outranks the prompt", store.SummarySource{PrimarySessionID: "a", AgentLine: "Looking into it", PromptLine: "Fix it"}, "Looking into it"},
		{
			"an open question outranks the answer",
			store.SummarySource{PrimarySessionID: "a", AgentLine: "Looking", Pending: []store.PendingRequest{pending("a", clarify, 4, "Which branch should I use?")}},
			"Which branch should I use?",
		},
		{
			"a permission request outranks a question, whatever their order",
			store.SummarySource{PrimarySessionID: "a", AgentLine: "Looking", Pending: []store.PendingRequest{
				pending("a", clarify, 4, "Which branch?"), pending("a", perm, 7, "Edit notes.txt"),
			}},
			"Edit notes.txt",
		},
		{
			"the oldest of two permission requests",
			store.SummarySource{PrimarySessionID: "a", Pending: []store.PendingRequest{
				pending("a", perm, 3, "Edit a.txt"), pending("a", perm, 8, "Edit b.txt"),
			}},
			"Edit a.txt",
		},
		{
			"another session's requests are not the primary's",
			store.SummarySource{PrimarySessionID: "a", AgentLine: "Looking", Pending: []store.PendingRequest{
				pending("b", perm, 1, "Edit notes.txt"), pending("b", clarify, 2, "Which branch?"),
			}},
			"Looking",
		},
		{
			"a request with nothing to show gives way",
			store.SummarySource{PrimarySessionID: "a", AgentLine: "Looking", Pending: []store.PendingRequest{
				pending("a", perm, 1, " \n\x00 "), pending("a", clarify, 2, "Which branch?"),
			}},
			"Which branch?",
		},
		{"an answer of markup only gives way to the prompt", store.SummarySource{PrimarySessionID: "a", AgentLine: "```", PromptLine: "Fix it"}, "You: Fix it"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Derive(tc.src).Preview)
		})
	}
}

func TestPreviewLineIsOneCleanBoundedLine(t *testing.T) {
	const limit = shared.MaxPreviewBytes
	tests := []struct {
		name, text, want string
	}{
		{"one line", "Looking into it", "Looking into it"},
		{"the first line only", "First.\nSecond.", "First."},
		{"blank lines are skipped", "\n\n  \t \r\n\u00a0\nHello", "Hello"},
		{"carriage returns end lines", "\r\rone\rtwo", "one"},
		{"white space collapses", "  a \t  b\u00a0\u00a0c\u2028d  ", "a b c d"},
		{"control characters are removed", "a\x00b\x1b[31mc\x7fd\u009be", "ab[31mcde"},
		{"a line of control characters is blank", "\x00\x1b\x7f\nnext", "next"},
		{"each run of invalid UTF-8 becomes one replacement character", "ok\xff\xfe then\xc3", "ok\uFFFD then\uFFFD"},
		{"headings", "## Plan", "Plan"},
		{"quotes", "> quoted", "quoted"},
		{"a quote without a space", ">quoted", "quoted"},
		{"list items", "- item", "item"},
		{"starred list items", "* item", "item"},
		{"numbered items", "12. twelfth", "twelfth"},
		{"markers nest", "> - **Note**", "Note"},
		{"bold around the line", "**Done.**", "Done."},
		{"code around the line", "`make test`", "make test"},
		{"bold inside the line stays", "**Done.** Next I will test.", "**Done.** Next I will test."},
		{"a hashtag is no heading", "#hashtag", "#hashtag"},
		{"a negative number is no list item", "-1 degrees", "-1 degrees"},
		{"a number is no list item", "2026 was long", "2026 was long"},
		{"a fence alone is blank", "```\ncode", "code"},
		{"a lone heading marker is blank", "#\nTitle", "Title"},
		{"nothing at all", " \n\t ", ""},
		{"a line that fits is whole", strings.Repeat("a", limit), strings.Repeat("a", limit)},
		{"a long line is cut with an ellipsis", strings.Repeat("a", limit+1), strings.Repeat("a", limit-3) + "…"},
		{"two-byte characters are never split", strings.Repeat("é", 100), strings.Repeat("é", 58) + "…"},
		{"three-byte characters are never split", strings.Repeat("日", 50), strings.Repeat("日", 39) + "…"},
		{"four-byte characters are never split", strings.Repeat("🐑", 40), strings.Repeat("🐑", 29) + "…"},
		{"no space before the ellipsis", strings.Repeat("a", limit-4) + " bbbbbb", strings.Repeat("a", limit-4) + "…"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := previewLine(tc.text, limit)
			require.Equal(t, tc.want, got)
			require.LessOrEqual(t, len(got), limit)
			require.True(t, utf8.ValidString(got))
			require.NotContains(t, got, "\n")
		})
	}
}

func TestPreviewOfALongPromptFitsWithItsPrefix(t *testing.T) {
	got := Derive(store.SummarySource{PrimarySessionID: "a", PromptLine: strings.Repeat("é", 200)}).Preview
	require.LessOrEqual(t, len(got), shared.MaxPreviewBytes)
	require.True(t, strings.HasPrefix(got, "You: é"))
	require.True(t, strings.HasSuffix(got, "…"))
	require.True(t, utf8.ValidString(got))
}

// FuzzPreviewLine checks the bounds of a preview whatever an agent writes.
func FuzzPreviewLine(f *testing.F) {
	for _, seed := range []string{"", "## Plan\nnext", "\xff\xfe", strings.Repeat("日本 ", 80), "> - **`x`**", "\x00\r\n\t"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got := previewLine(text, shared.MaxPreviewBytes)
		if len(got) > shared.MaxPreviewBytes || !utf8.ValidString(got) || strings.ContainsAny(got, "\n\r\t") ||
			strings.HasPrefix(got, " ") || strings.HasSuffix(got, " ") || strings.Contains(got, "  ") {
			t.Fatalf("previewLine(%q) = %q", text, got)
		}
		for _, r := range got {
			if unicode.IsControl(r) {
				t.Fatalf("previewLine(%q) = %q holds control character %U", text, got, r)
			}
		}
	})
}

// A preview that changes is a new revision, published; marks that leave
// it as it was publish nothing.
func TestPreviewChangeIsANewRevisionAndOnlyThen(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *testDB) {
		ctx := context.Background()
		pub := &recorder{}
		p := start(t, db, pub)
		task := db.task(t)
		session := db.session(t, task.ID).ID
		markAndFlush(t, p, task.ID)
		before := db.stored(t, task.ID)
		require.Empty(t, before.Preview)

		answer := db.message(t, session, shared.MessageAgent, shared.MessageStreaming, "", "# Looking ")
		require.NoError(t, db.AppendText(ctx, answer.ID, len(answer.Content), "into it\nDetails."))
		markAndFlush(t, p, task.ID)
		require.Equal(t, before, db.stored(t, task.ID), "a streaming answer is no preview")

		_, err := db.FinishMessage(ctx, answer.ID, shared.MessageComplete)
		require.NoError(t, err)
		markAndFlush(t, p, task.ID)
		answered := db.stored(t, task.ID)
		require.Equal(t, "Looking into it", answered.Preview)
		require.Equal(t, before.Revision+1, answered.Revision)

		// Sources that change nothing the row shows: no new revision.
		db.message(t, session, shared.MessageToolCall, shared.MessageComplete, "", "Read README.md")
		db.message(t, session, shared.MessageAgent, shared.MessageComplete, "", "\n  \n")
		markAndFlush(t, p, task.ID)
		require.Equal(t, answered, db.stored(t, task.ID))

		db.message(t, session, shared.MessagePermissionRequest, shared.MessagePending, "perm", "Edit notes.txt")
		markAndFlush(t, p, task.ID)
		asking := db.stored(t, task.ID)
		require.Equal(t, "Edit notes.txt", asking.Preview)
		require.Equal(t, shared.PendingPermission, asking.PendingAction)

		_, err = db.ResolveRequest(ctx, session, "perm", shared.MessageResolved, nil)
		require.NoError(t, err)
		markAndFlush(t, p, task.ID)
		require.Equal(t, "Looking into it", db.stored(t, task.ID).Preview, "back to the agent's line")

		previews := []string{}
		for _, s := range pub.forTask(task.ID) {
			previews = append(previews, s.Preview)
		}
		require.Equal(t, []string{"", "Looking into it", "Edit notes.txt", "Looking into it"}, previews)
	})
}
