package ui

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/herd-dev/herd/shared"
)

func TestNewTaskFormStartsWithoutRepositoriesAndOffersToAddOne(t *testing.T) {
	markup := html(booted())
	assert.Contains(t, elementWith(t, markup, idNewTaskRepoAdd), `type="button"`)
	assert.Contains(t, markup, "Add repository")
	assert.Contains(t, markup, "Without one the agent works in a scratch directory.")
	assert.NotContains(t, markup, `id="new-task-repo-path-0"`)
}

func TestNewTaskRepositoryRowsAreLabelled(t *testing.T) {
	s := booted()
	s.draft = draft{title: "x", repos: []repoDraft{{path: "/src/app", baseBranch: "main"}, {path: "/src/lib", inPlace: true}}}
	markup := html(s)

	for _, kind := range []string{"path", "base", "in-place"} {
		for row := range 2 {
			id := repoInputID(kind, row)
			elementWith(t, markup, id)
			assert.Regexp(t, `<label[^>]*for="`+id+`"`, markup, "the %s input of row %d has a label", kind, row)
		}
	}
	assert.Contains(t, elementWith(t, markup, "new-task-repo-path-0"), `value="/src/app"`)
	assert.Contains(t, elementWith(t, markup, "new-task-repo-base-0"), `value="main"`)
	assert.NotRegexp(t, `\bchecked\b`, elementWith(t, markup, "new-task-repo-in-place-0"), "run in place is off by default")
	assert.Regexp(t, `\bchecked\b`, elementWith(t, markup, "new-task-repo-in-place-1"))
	assert.Contains(t, markup, `aria-label="Remove repository 2"`)
	assert.Len(t, regexp.MustCompile(`<legend[^>]*>\s*Repository \d`).FindAllString(markup, -1), 2)
	assert.NotContains(t, markup, "Without one the agent works in a scratch directory.")
}

func TestNewTaskRepositoriesAreSentTrimmedWithTheirChoices(t *testing.T) {
	tests := []struct {
		name    string
		repos   []repoDraft
		want    []shared.RepositoryInput
		problem string
	}{
		{name: "no rows sends none"},
		{
			name:  "rows in order, trimmed, with run in place",
			repos: []repoDraft{{path: " /src/app ", baseBranch: " main "}, {path: "/src/lib", inPlace: true}},
			want:  []shared.RepositoryInput{{Path: "/src/app", BaseBranch: "main"}, {Path: "/src/lib", RunInPlace: true}},
		},
		{
			name:    "a row without a path is named",
			repos:   []repoDraft{{path: "/src/app"}, {path: "  ", baseBranch: "main"}},
			problem: "Repository 2 needs a path: enter one or remove the row.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, problem := draft{title: "x", repos: tt.repos}.repositories()
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.problem, problem)
		})
	}
}

func TestARefusedRepositoryPathShowsAtItsFieldWithTheResolvedPath(t *testing.T) {
	s := booted()
	s.draft = draft{title: "Fix login", busy: true, repos: []repoDraft{{path: "./repo"}, {path: "./data/demo-repo"}}}
	refusal := &shared.Error{Code: shared.CodeBadRequest, Message: "repositories[1].path: not a git repository",
		Details: map[string]any{"field": "repositories[1].path", "resolved": "/srv/herd/data/demo-repo"}}
	assert.False(t, s.created(shared.Task{}, s.store.Mark(), refusal))

	markup := html(s)
	input := elementWith(t, markup, repoInputID("path", 1))
	assert.Regexp(t, `\baria-invalid\b`, input, "go-app writes a true attribute bare")
	assert.Contains(t, input, `aria-describedby="`+repoInputID("path", 1)+`-error"`)
	assert.NotContains(t, elementWith(t, markup, repoInputID("path", 0)), "aria-invalid", "only the refused row")
	errorAt := markup[strings.Index(markup, `id="`+repoInputID("path", 1)+`-error"`):]
	assert.Contains(t, errorAt, "not a git repository")
	assert.Contains(t, errorAt, "<code>/srv/herd/data/demo-repo</code>")
	formError := regexp.MustCompile(`(?s)<p[^>]*id="new-task-error"[^>]*>(.*?)</p>`).FindStringSubmatch(markup)
	require.Len(t, formError, 2)
	assert.NotContains(t, formError[1], "not a git repository", "the message shows at the field, not twice")
}
