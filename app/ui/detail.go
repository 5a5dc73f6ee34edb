package ui

import (
	"strconv"
	"strings"
	"time"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/herd-dev/herd/app/state"
	"github.com/herd-dev/herd/shared"
)

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
