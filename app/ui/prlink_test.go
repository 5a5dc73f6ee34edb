package ui

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/app/wsclient"
	"github.com/herd-dev/herd/shared"
)

const prURL = "https://github.com/acme/app/pull/17"

// prShell returns the task view of task a, linked to link ("" for none),
// in a booted shell.
func prShell(link string) *taskView {
	task := newTask("a", "Fix login", 1, &shared.TaskStatusSummary{Revision: 1})
	task.PullRequestURL = link
	s := booted(task)
	s.route = state.Route{TaskID: "a"}
	return s.taskViewOf(task)
}

// linkRequest is the task.update a control of task a sends for link.
func linkRequest(link string) shared.TaskUpdateRequest {
	return shared.TaskUpdateRequest{TaskID: "a", PullRequestURL: &link}
}

func TestTaskWithoutAPullRequestLinkOffersAFieldAndALinkButton(t *testing.T) {
	markup := html(prShell(""))

	input := elementWith(t, markup, idTaskPRURL)
	assert.Regexp(t, `<label[^>]*for="`+idTaskPRURL+`"[^>]*>Pull request URL</label>`, markup)
	assert.Contains(t, input, `placeholder="https://github.com/OWNER/REPO/pull/17"`)
	assert.NotContains(t, input, "aria-invalid")
	link := elementWith(t, markup, idTaskPRLink)
	assert.Contains(t, link, `type="submit"`, "Enter in the field submits too")
	assert.False(t, regexpDisabled.MatchString(link), link)
	assert.Contains(t, markup, ">Link</button>")
	form := tagWithClass(t, markup, "task-pr-form")
	assert.Regexp(t, `^<form `, form)
	assert.Regexp(t, `\bnovalidate\b`, form, "the server's message explains a bad URL, not the browser's")
	assert.NotContains(t, markup, `class="task-pr-url"`, "no link to show")
	assert.NotContains(t, markup, idTaskPRUnlink)
	assert.NotContains(t, markup, "task-pr-error")
}

func TestLinkedTaskShowsItsPullRequestWithAnUnlinkButton(t *testing.T) {
	markup := html(prShell(prURL))

	a := tagWithClass(t, markup, "task-pr-url")
	assert.Regexp(t, `^<a `, a)
	assert.Contains(t, a, `href="`+prURL+`"`)
	assert.Contains(t, a, `target="_blank"`)
	assert.Contains(t, a, `rel="noopener noreferrer"`)
	assert.Regexp(t, `class="task-pr-url"[^>]*>`+regexp.QuoteMeta(prURL)+`</a>`, markup)
	unlink := elementWith(t, markup, idTaskPRUnlink)
	assert.Contains(t, unlink, `aria-label="Remove the pull request link"`)
	assert.False(t, regexpDisabled.MatchString(unlink), unlink)
	assert.Contains(t, markup, ">Unlink</button>")
	assert.NotContains(t, markup, `id="`+idTaskPRURL+`"`)
	assert.NotContains(t, markup, `id="`+idTaskPRLink+`"`)
}

func TestPullRequestLinkWhileInFlight(t *testing.T) {
	tests := []struct {
		name, link, button, text string
	}{
		{"linking", "", idTaskPRLink, "Linking…"},
		{"unlinking", prURL, idTaskPRUnlink, "Unlinking…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := prShell(tt.link)
			s.prLink = prLink{taskID: "a", input: prURL, seq: 1, unlink: tt.link != "", request: request{busy: true}}
			markup := html(s)
			button := elementWith(t, markup, tt.button)
			assert.True(t, regexpDisabled.MatchString(button), button)
			// go-app's server render writes a "true" value as a bare attribute.
			assert.Regexp(t, `\baria-busy\b`, button)
			assert.Contains(t, markup, ">"+tt.text+"</button>")

			s.prLink.taskID = "b"
			button = elementWith(t, html(s), tt.button)
			assert.False(t, regexpDisabled.MatchString(button), "another task's request leaves this control alone: %s", button)
			assert.NotContains(t, button, "aria-busy")
		})
	}
}

func TestFailedPullRequestLinkShowsTheServersMessageAndKeepsTheURL(t *testing.T) {
	s := prShell("")
	s.prLink = prLink{taskID: "a", input: "https://example.com/nope", seq: 1, request: request{busy: true}}
	msg := `pull_request_url "https://example.com/nope" is not a pull request link such as https://github.com/OWNER/REPO/pull/17`

	ok := s.prLinked(linkRequest("https://example.com/nope"), 1, shared.Task{}, s.Shell.store.Mark(), shared.Errorf(shared.CodeBadRequest, "%s", msg))
	assert.False(t, ok)
	markup := html(s)
	failure := tagWithClass(t, markup, "task-pr-error")
	assert.Contains(t, failure, `role="alert"`)
	assert.Regexp(t, `^<p `, failure)
	assert.Contains(t, markup, "Could not link: pull_request_url &#34;https://example.com/nope&#34; is not a pull request link")
	input := elementWith(t, markup, idTaskPRURL)
	assert.Contains(t, input, `value="https://example.com/nope"`, "the URL stays to be corrected")
	assert.Contains(t, input, `aria-describedby="`+idTaskPRError+`"`)
	assert.Contains(t, input, "aria-invalid")
	assert.False(t, regexpDisabled.MatchString(elementWith(t, markup, idTaskPRLink)))
	assert.Contains(t, markup, ">Link</button>")
}

func TestFailedUnlinkSaysWhatToDo(t *testing.T) {
	s := prShell(prURL)
	s.prLink = prLink{taskID: "a", seq: 3, unlink: true, request: request{busy: true}}

	s.prLinked(linkRequest(""), 3, shared.Task{}, s.Shell.store.Mark(), fmt.Errorf("task.update: %w", wsclient.ErrNotConnected))
	markup := html(s)
	assert.Contains(t, tagWithClass(t, markup, "task-pr-error"), `role="alert"`)
	assert.Contains(t, markup, "Could not unlink: not connected to the server.")
	assert.Contains(t, markup, ">Unlink</button>")
	assert.Contains(t, tagWithClass(t, markup, "task-pr-url"), `href="`+prURL+`"`, "the link stays")
}

func TestSuccessfulLinkStoresTheAnsweredTaskAndClearsTheField(t *testing.T) {
	s := prShell("")
	s.prLink = prLink{taskID: "a", input: "  " + prURL + " ", seq: 2, request: request{busy: true, err: "earlier"}}
	sent := s.Shell.store.Mark()
	updated, _ := s.Shell.store.Task("a")
	updated.PullRequestURL, updated.UpdatedAt = prURL, t0.Add(time.Minute)

	require.True(t, s.prLinked(linkRequest(prURL), 2, updated, sent, nil))
	assert.Equal(t, prLink{taskID: "a", seq: 2}, s.prLink)
	markup := rendered(s.Shell, s)
	assert.Contains(t, tagWithClass(t, markup, "task-pr-url"), `href="`+prURL+`"`)
	assert.NotContains(t, markup, "task-pr-error")

	// Unlinking brings back an empty field.
	s.prLink = prLink{taskID: "a", seq: 3, unlink: true, request: request{busy: true}}
	updated.PullRequestURL, updated.UpdatedAt = "", t0.Add(2*time.Minute)
	require.True(t, s.prLinked(linkRequest(""), 3, updated, s.Shell.store.Mark(), nil))
	markup = rendered(s.Shell, s)
	assert.NotContains(t, elementWith(t, markup, idTaskPRURL), "value=")
	assert.NotContains(t, markup, `class="task-pr-url"`)
}

func TestAnswerToAnOlderPullRequestLinkLeavesTheControlAlone(t *testing.T) {
	s := prShell("")
	s.prLink = prLink{taskID: "b", input: "typed in b", seq: 5}
	updated, _ := s.Shell.store.Task("a")
	updated.PullRequestURL, updated.UpdatedAt = prURL, t0.Add(time.Minute)

	assert.False(t, s.prLinked(linkRequest(prURL), 4, updated, s.Shell.store.Mark(), nil))
	assert.Equal(t, prLink{taskID: "b", input: "typed in b", seq: 5}, s.prLink)
	stored, _ := s.Shell.store.Task("a")
	assert.Equal(t, prURL, stored.PullRequestURL, "the answer is stored all the same")
}

func TestPullRequestLinkNeverEndsItsAttribute(t *testing.T) {
	tests := []struct {
		name, link, tag, href string
	}{
		{"quote in the path is escaped", `https://github.com/a"onmouseover="alert(1)/b/pull/1`, "a", `https://github.com/a%22onmouseover=%22alert%281%29/b/pull/1`},
		{"quote in the host is shown as text", `https://a"onmouseover="alert(1)/o/r/pull/1`, "span", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			markup := html(prShell(tt.link))
			for _, tag := range regexp.MustCompile(`<[a-z]+[^>]*>`).FindAllString(markup, -1) {
				assert.NotContains(t, tag, `\"`, "an attribute holds a quote: %s", tag)
			}
			a := tagWithClass(t, markup, "task-pr-url")
			assert.Regexp(t, `^<`+tt.tag+` `, a)
			if tt.href != "" {
				assert.Contains(t, a, `href="`+tt.href+`"`)
			}
			assert.Contains(t, markup, "onmouseover=&#34;alert(1)/", "the link is shown as text")
		})
	}
}

func TestStylesheetCoversThePullRequestLinkControl(t *testing.T) {
	assertStyled(t, stylesheet(t), "task-pr", "task-pr-row", "task-pr-url", "task-pr-error")
}
