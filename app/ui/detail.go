package ui

import (
	"strconv"
	"strings"
	"time"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/shared"
)

// renderDetail draws the selected task: what it is, its active error, the
// git state of its repositories (once a session of it is open), its
// session pane (nil in the server's render, which then says what the
// summary knows), where it works, what its summary says, and the control
// that links a pull request to it by hand.
func (s *shell) renderDetail(t shared.Task, sessions app.UI) app.UI {
	row := state.RowOf(t)
	sum := t.StatusSummary
	git := s.gitPanel(t.ID)
	return app.Article().Class("task-detail").Aria("labelledby", "detail-title").Body(
		app.Header().Class("detail-head").Body(
			app.H1().ID("detail-title").Class("detail-title").Text(titleOrPlaceholder(t.Title)),
			app.Span().Class("state-chip").Body(
				stateIconBeside(row.Indicator),
				app.Span().Text(row.Indicator.Label()),
			),
		),
		app.P().Class("detail-created").Body(
			app.Text("Created "),
			app.Time().
				DateTime(t.CreatedAt.UTC().Format(time.RFC3339)).
				Title(t.CreatedAt.UTC().Format(time.RFC3339)).
				Text(t.CreatedAt.Local().Format("2 Jan 2006, 15:04")),
		),
		app.If(sum != nil && sum.ActiveError != nil, func() app.UI { return s.renderErrorBanner(t.ID, *sum.ActiveError) }),
		app.If(git != nil, func() app.UI { return git }),
		app.Section().Class("detail-section", "detail-sessions").Aria("labelledby", "detail-session").Body(
			app.H2().ID("detail-session").Class("visually-hidden").Text("Session"),
			app.If(sessions != nil, func() app.UI { return sessions }).
				Else(func() app.UI { return renderSession(row) }),
		),
		app.Section().Class("detail-section").Aria("labelledby", "detail-description").Body(
			app.H2().ID("detail-description").Text("Description"),
			app.If(t.Description != "", func() app.UI {
				return app.P().Class("description").Text(t.Description)
			}).Else(func() app.UI {
				return app.P().Class("muted").Text("No description.")
			}),
		),
		app.Section().Class("detail-section").Aria("labelledby", "detail-repositories").Body(
			app.H2().ID("detail-repositories").Text("Repositories"),
			renderRepositories(t.Repositories),
			app.If(row.HasGit, func() app.UI {
				return app.P().Class("detail-git").Body(
					app.Text("Changes: "),
					gitTotals(row.Additions, row.Deletions, row.ChangedFiles),
					app.If(row.NoBase, noBaseMark),
				)
			}),
			app.If(sum != nil && sum.PullRequest != nil, func() app.UI { return renderPullRequest(row, sum.PullRequest) }),
			s.renderPRLink(t),
		),
	)
}

// renderRepositories lists the task's repositories with their branches
// and where the agent works in each: in place, or in its worktree.
func renderRepositories(repos []shared.TaskRepository) app.UI {
	if len(repos) == 0 {
		return app.P().Class("muted").Text("No repositories.")
	}
	return app.Ul().Class("repo-list").Body(
		app.Range(repos).Slice(func(i int) app.UI {
			r := repos[i]
			return app.Li().Class("repo").Body(
				app.Code().Class("repo-path").Text(r.Path),
				app.If(r.BaseBranch != "", func() app.UI {
					return app.Span().Class("repo-branch").Text("base " + r.BaseBranch)
				}),
				app.If(r.Branch != "", func() app.UI {
					return app.Span().Class("repo-branch").Text("branch " + r.Branch)
				}),
				app.If(r.RunInPlace, func() app.UI {
					return app.Span().Class("repo-in-place").Text("in place")
				}).ElseIf(r.WorktreePath != "", func() app.UI {
					return app.Span().Class("repo-worktree").Body(
						app.Text("worktree "),
						app.Code().Class("repo-path").Text(r.WorktreePath),
					)
				}),
			)
		}),
	)
}

// renderPullRequest links the task's representative pull request.
func renderPullRequest(row state.Row, pr *shared.PullRequestSummary) app.UI {
	badge := prBadge(row)
	return app.P().Class("detail-pr").Body(
		app.Text("Pull request: "),
		app.If(pr.URL != "", func() app.UI {
			return app.A().Href(pr.URL).Target("_blank").Rel("noopener noreferrer").Body(badge)
		}).Else(func() app.UI { return badge }),
	)
}

// renderSession says honestly what is known about the task's session.
func renderSession(row state.Row) app.UI {
	if row.Indicator == state.IndicatorNoSession {
		return app.P().Class("muted").Text("No session yet.")
	}
	return app.Div().Body(
		app.P().Body(
			app.Text("Primary session: "),
			app.Strong().Text(row.Indicator.Label()),
			app.If(row.Queued > 0, func() app.UI {
				return app.Text(" · " + queuedPrompts(row.Queued))
			}),
		),
	)
}

// gitPanel is the git panel of task taskID: the open session's latest
// observation of each repository. It is nil in the server's render, while
// no session of the task is open, and for a task without repositories.
func (s *shell) gitPanel(taskID string) app.UI {
	v := s.sessions
	if v == nil || v.taskID != taskID || v.detail == nil || len(v.detail.Git()) == 0 {
		return nil
	}
	return v.renderGitPanel()
}

// renderGitPanel draws the repositories' git state with the button that
// asks for a fresh observation. Paths and branch names are only ever
// rendered as text.
func (v *sessionView) renderGitPanel() app.UI {
	repos := v.detail.Git()
	var r request
	if v.refresh.sessionID == v.openID {
		r = v.refresh.request
	}
	return app.Section().ID("git-panel").Class("detail-section", "git-panel").Aria("labelledby", "git-panel-title").Body(
		app.Div().Class("git-panel-head").Body(
			app.H2().ID("git-panel-title").Text("Git"),
			busyButton("git-refresh", "Refresh", "Refreshing…", r.busy).
				Class("git-refresh").
				Aria("label", "Refresh git status").
				OnClick(v.onGitRefresh),
		),
		app.If(r.err != "", func() app.UI {
			return app.P().Class("git-refresh-error").Role("alert").Text("Could not refresh: " + r.err)
		}),
		app.Ul().Class("git-repos").Body(
			app.Range(repos).Slice(func(i int) app.UI { return renderRepositoryGit(repos[i]) }),
		),
	)
}

// renderRepositoryGit draws one repository's observation. Before the
// first observation there are no totals to show, only that; a failed
// observation shows its error beside the last good totals.
func renderRepositoryGit(r shared.RepositoryGit) app.UI {
	return app.Li().Class("git-repo").DataSet("repository-id", r.RepositoryID).Body(
		app.Div().Class("git-repo-head").Body(
			app.Code().Class("repo-path").Text(r.Path),
			app.If(r.Branch != "", func() app.UI { return app.Span().Class("git-branch").Text(r.Branch) }),
		),
		app.If(r.ObservedAt != nil, func() app.UI {
			at := r.ObservedAt.UTC().Format(time.RFC3339)
			return app.Div().Class("git-repo-state").Body(
				gitTotals(r.Additions, r.Deletions, r.ChangedFiles).Class("git-totals"),
				app.If(r.ComparisonUnavailable, func() app.UI {
					return app.Span().Class("git-no-base").Text("no base to compare")
				}).Else(func() app.UI {
					return app.Span().Class("git-base").Body(
						aheadBehind(&r.Ahead, &r.Behind),
						app.Text(" vs "+orText(r.BaseBranch, "base")),
					)
				}),
				app.If(r.UpstreamAhead != nil || r.UpstreamBehind != nil, func() app.UI {
					return app.Span().Class("git-upstream").Body(
						app.Text("upstream "),
						aheadBehind(r.UpstreamAhead, r.UpstreamBehind),
					)
				}),
				app.Time().Class("git-observed").DateTime(at).Title(at).Text("observed "+r.ObservedAt.Local().Format("15:04:05")),
			)
		}).Else(func() app.UI {
			return app.P().Class("git-unobserved").Text("not observed yet")
		}),
		app.If(r.Error != "", func() app.UI {
			return app.P().Class("git-error").Body(
				app.Span().Class("git-error-label").Text("Last observation failed: "),
				app.Span().Class("git-error-text").Text(r.Error),
			)
		}),
	)
}

// aheadBehind shows commit counts as "↑ahead ↓behind", named in words for
// assistive technology and in its tooltip; a nil count is left out.
func aheadBehind(ahead, behind *int) app.UI {
	var text, words []string
	if ahead != nil {
		text = append(text, "↑"+strconv.Itoa(*ahead))
		words = append(words, plural(*ahead, "commit", "commits")+" ahead")
	}
	if behind != nil {
		text = append(text, "↓"+strconv.Itoa(*behind))
		if ahead != nil {
			words = append(words, strconv.Itoa(*behind)+" behind")
		} else {
			words = append(words, plural(*behind, "commit", "commits")+" behind")
		}
	}
	label := strings.Join(words, ", ")
	return namedSpan(label).Class("ahead-behind").Text(strings.Join(text, " "))
}
