package state

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

func commentIDs() func() string {
	n := 0
	return func() string { n++; return "c" + strconv.Itoa(n) }
}

// onLine is a comment on line n of main.go's new side.
func onLine(n int, body string) shared.ReviewComment {
	return shared.ReviewComment{Path: "main.go", Side: shared.SideNew, StartLine: n, EndLine: n, Code: "+x", Body: body}
}

func bodies(ps []PendingComment) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Body)
	}
	return out
}

func TestPendingCommentsSurviveAReloadPerTask(t *testing.T) {
	kv := MapKV{}
	c := NewReviewComments(kv, "t1", commentIDs())
	_, err := c.Add("r1", onLine(3, "  Return the error.  "))
	require.NoError(t, err)
	_, err = c.Add("r1", onLine(9, "Name this better."))
	require.NoError(t, err)
	NewReviewComments(kv, "t2", commentIDs()).Add("r9", onLine(1, "elsewhere"))

	again := NewReviewComments(kv, "t1", commentIDs())
	assert.Equal(t, []string{"Return the error.", "Name this better."}, bodies(again.Pending()),
		"a reload reads them back, in the order written, their text trimmed")
	assert.Equal(t, "r1", again.Pending()[0].RepositoryID)
	assert.Equal(t, []string{"elsewhere"}, bodies(NewReviewComments(kv, "t2", commentIDs()).Pending()), "each task keeps its own")

	again.Delete(again.Pending()[0].ID)
	again.Delete(again.Pending()[0].ID)
	assert.NotContains(t, kv, "herd.review.t1", "no comment left, no key left")
}

func TestACommentIsEditedAndRefusedWithAReason(t *testing.T) {
	c := NewReviewComments(MapKV{}, "t1", commentIDs())
	p, err := c.Add("r1", onLine(3, "first"))
	require.NoError(t, err)
	require.NoError(t, c.Edit(p.ID, "second thoughts"))
	assert.Equal(t, []string{"second thoughts"}, bodies(c.Pending()))

	assert.Equal(t, shared.CodeBadRequest, shared.ErrorCode(c.Edit(p.ID, "   ")), "a comment needs its text")
	assert.Equal(t, shared.CodeBadRequest, shared.ErrorCode(c.Edit(p.ID, strings.Repeat("x", shared.MaxReviewCommentBytes+1))))
	assert.Equal(t, []string{"second thoughts"}, bodies(c.Pending()), "a refused edit keeps the text")
	_, err = c.Add("r1", onLine(0, "no line"))
	assert.Equal(t, shared.CodeBadRequest, shared.ErrorCode(err))
	assert.Len(t, c.Pending(), 1)
}

func TestNoMoreCommentsWaitThanOnePromptCarries(t *testing.T) {
	c := NewReviewComments(MapKV{}, "t1", commentIDs())
	for i := range shared.MaxReviewComments {
		_, err := c.Add("r1", onLine(i+1, "fix"))
		require.NoError(t, err)
	}
	_, err := c.Add("r1", onLine(99, "one too many"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "send them first")
	_, err = c.Prompt(nil)
	require.NoError(t, err, "the most that may wait fits one prompt")
}

func TestSendingCommentsMakesOnePromptWithEachFileRangeQuoteAndText(t *testing.T) {
	c := NewReviewComments(MapKV{}, "t1", commentIDs())
	_, _ = c.Add("r1", shared.ReviewComment{Path: "server/main.go", Side: shared.SideNew, StartLine: 12, EndLine: 14,
		Code: "+\tif err != nil {\n+\t\treturn nil\n+\t}", Body: "Return the error, not nil."})
	_, _ = c.Add("r2", shared.ReviewComment{Path: "README.md", Side: shared.SideOld, StartLine: 3, EndLine: 3,
		Code: "-Run `make` first.", Body: "Keep this line."})

	prompt, err := c.Prompt(nil)
	require.NoError(t, err)
	assert.Equal(t, "Please address these 2 review comments on your changes.\n"+
		"\n1. server/main.go, lines 12-14\n```diff\n+\tif err != nil {\n+\t\treturn nil\n+\t}\n```\nReturn the error, not nil.\n"+
		"\n2. README.md, line 3 (before the change)\n```diff\n-Run `make` first.\n```\nKeep this line.\n", prompt)

	dirs := map[string]string{"r1": "/work/api", "r2": "/work/docs"}
	prompt, err = c.Prompt(func(p PendingComment) string { return dirs[p.RepositoryID] + "/" + p.Path })
	require.NoError(t, err)
	assert.Contains(t, prompt, "1. /work/api/server/main.go, lines 12-14")
	assert.Contains(t, prompt, "2. /work/docs/README.md, line 3")

	_, err = NewReviewComments(MapKV{}, "t9", commentIDs()).Prompt(nil)
	assert.Equal(t, shared.CodeBadRequest, shared.ErrorCode(err), "no comments, no prompt")
}

func TestSentCommentsWaitForTheirPromptsConfirmation(t *testing.T) {
	kv := MapKV{}
	c := NewReviewComments(kv, "t1", commentIDs())
	_, _ = c.Add("r1", onLine(1, "one"))
	_, _ = c.Add("r1", onLine(2, "two"))
	assert.Equal(t, 2, c.Sent("cm-1", "s1"))
	assert.Empty(t, c.Pending(), "sent comments are not pending: a second send would not repeat them")
	_, _ = c.Add("r1", onLine(3, "written meanwhile"))

	reloaded := NewReviewComments(kv, "t1", commentIDs())
	assert.Equal(t, []string{"one", "two"}, bodies(reloaded.Sending("cm-1")), "a reload remembers what is on its way")
	assert.Equal(t, []SentPrompt{{ClientMessageID: "cm-1", SessionID: "s1"}}, reloaded.Prompts())

	assert.Equal(t, 2, reloaded.Delivered("cm-1"))
	assert.Equal(t, []string{"written meanwhile"}, bodies(reloaded.Pending()), "only the sent ones are forgotten")
	assert.Empty(t, reloaded.Prompts())
}

func TestCommentsOfARefusedPromptCanBeSentAgain(t *testing.T) {
	c := NewReviewComments(MapKV{}, "t1", commentIDs())
	_, _ = c.Add("r1", onLine(1, "one"))
	c.Sent("cm-1", "s1")
	c.Unsent("cm-1")
	assert.Equal(t, []string{"one"}, bodies(c.Pending()))
	assert.Empty(t, c.Prompts())
	require.NoError(t, c.Edit(c.Pending()[0].ID, "one, rephrased"), "pending again, so editable again")
}

// A prompt confirmed while the review was not looking (the session's
// page confirmed it after a reload) is not waited for forever.
func TestCommentsWhosePromptTheOutboxNoLongerHoldsWereDelivered(t *testing.T) {
	kv := MapKV{}
	outbox := NewOutbox(kv, "s1", counter())
	c := NewReviewComments(kv, "t1", commentIDs())
	_, _ = c.Add("r1", onLine(1, "one"))
	first := outbox.Add("prompt one")
	c.Sent(first.ClientMessageID, "s1")
	_, _ = c.Add("r1", onLine(2, "two"))
	second := outbox.Add("prompt two")
	c.Sent(second.ClientMessageID, "s1")
	_, _ = c.Add("r1", onLine(3, "to another session"))
	c.Sent("cm-elsewhere", "s2")

	assert.Zero(t, c.Reconcile("s1", outbox), "both prompts are still on their way")
	outbox.Confirmed(first.ClientMessageID)
	assert.Equal(t, 1, c.Reconcile("s1", NewOutbox(kv, "s1", counter())))
	assert.Equal(t, []string{"two"}, bodies(c.Sending(second.ClientMessageID)))
	assert.Equal(t, []string{"to another session"}, bodies(c.Sending("cm-elsewhere")), "another session's outbox is not this one")
}
