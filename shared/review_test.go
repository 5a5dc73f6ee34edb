package shared_test

import (
	"strings"
	"testing"

	"github.com/herd-dev/herd/shared"
)

func TestReviewPromptNamesEachCommentsFileLinesCodeAndText(t *testing.T) {
	got, err := shared.ReviewPrompt([]shared.ReviewComment{
		{Path: "server/main.go", Side: shared.SideNew, StartLine: 12, EndLine: 14,
			Code: "+\tif err != nil {\n+\t\treturn nil\n+\t}\n", Body: "  Return the error, not nil.  "},
		{Path: "README.md", Side: shared.SideOld, StartLine: 3, EndLine: 3, Code: "-Run `make` first.", Body: "Keep this line."},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "Please address these 2 review comments on your changes.\n" +
		"\n1. server/main.go, lines 12-14\n```diff\n+\tif err != nil {\n+\t\treturn nil\n+\t}\n```\nReturn the error, not nil.\n" +
		"\n2. README.md, line 3 (before the change)\n```diff\n-Run `make` first.\n```\nKeep this line.\n"
	if got != want {
		t.Fatalf("prompt:\n%s\nwant:\n%s", got, want)
	}
}

func TestReviewPromptOfOneCommentWithoutCode(t *testing.T) {
	got, err := shared.ReviewPrompt([]shared.ReviewComment{{Path: "a.txt", Side: shared.SideNew, StartLine: 1, EndLine: 1, Body: "Why?"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "Please address this review comment on your changes.\n\n1. a.txt, line 1\nWhy?\n"; got != want {
		t.Fatalf("prompt %q, want %q", got, want)
	}
}

func TestReviewPromptFenceOutgrowsTheQuotedCodesBackticks(t *testing.T) {
	got, err := shared.ReviewPrompt([]shared.ReviewComment{{Path: "doc.md", Side: shared.SideNew, StartLine: 1, EndLine: 2,
		Code: "+```go\n+````", Body: "Close the fence."}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "`````diff\n+```go\n+````\n`````\n") {
		t.Fatalf("the quoted code's fences close the prompt's:\n%s", got)
	}
}

func TestReviewPromptRefusesWhatCannotBeSent(t *testing.T) {
	ok := shared.ReviewComment{Path: "a.go", Side: shared.SideNew, StartLine: 1, EndLine: 1, Body: "x"}
	with := func(edit func(*shared.ReviewComment)) []shared.ReviewComment {
		c := ok
		edit(&c)
		return []shared.ReviewComment{c}
	}
	many := make([]shared.ReviewComment, shared.MaxReviewComments+1)
	for i := range many {
		many[i] = ok
	}
	for name, comments := range map[string][]shared.ReviewComment{
		"none":          nil,
		"too many":      many,
		"no path":       with(func(c *shared.ReviewComment) { c.Path = " " }),
		"unknown side":  with(func(c *shared.ReviewComment) { c.Side = "left" }),
		"line zero":     with(func(c *shared.ReviewComment) { c.StartLine, c.EndLine = 0, 0 }),
		"reversed":      with(func(c *shared.ReviewComment) { c.StartLine, c.EndLine = 5, 4 }),
		"no text":       with(func(c *shared.ReviewComment) { c.Body = "\n\t" }),
		"long text":     with(func(c *shared.ReviewComment) { c.Body = strings.Repeat("x", shared.MaxReviewCommentBytes+1) }),
		"long quote":    with(func(c *shared.ReviewComment) { c.Code = strings.Repeat("x", shared.MaxReviewQuoteBytes+1) }),
		"long path":     with(func(c *shared.ReviewComment) { c.Path = strings.Repeat("p", shared.MaxReviewPathBytes+1) }),
		"second is bad": append([]shared.ReviewComment{ok}, with(func(c *shared.ReviewComment) { c.Body = "" })...),
	} {
		if _, err := shared.ReviewPrompt(comments); shared.ErrorCode(err) != shared.CodeBadRequest {
			t.Errorf("%s: err = %v, want bad_request", name, err)
		}
	}
}

// Comments within their own bounds can still add up to more than a
// prompt takes; that is refused with a reason, not cut.
func TestReviewPromptRefusesMoreThanAMessageTakes(t *testing.T) {
	comment := shared.ReviewComment{Path: strings.Repeat("p", shared.MaxReviewPathBytes), Side: shared.SideNew, StartLine: 1, EndLine: 1,
		Code: strings.Repeat("+x\n", shared.MaxReviewQuoteBytes/3), Body: strings.Repeat("b", shared.MaxReviewCommentBytes)}
	comments := make([]shared.ReviewComment, shared.MaxReviewComments)
	for i := range comments {
		comments[i] = comment
	}
	fits := shared.MaxPromptBytes / (len(comment.Path) + len(comment.Code) + len(comment.Body) + 64)
	if _, err := shared.ReviewPrompt(comments[:fits]); err != nil {
		t.Fatalf("%d comments: %v", fits, err)
	}
	_, err := shared.ReviewPrompt(comments)
	if shared.ErrorCode(err) != shared.CodeBadRequest || !strings.Contains(err.Error(), "send them in parts") {
		t.Fatalf("%d comments: err = %v, want bad_request saying to send them in parts", len(comments), err)
	}
}
