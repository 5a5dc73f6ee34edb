package ui

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"

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
