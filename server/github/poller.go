package github

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/herd-dev/herd/server/gitcli"
	"github.com/herd-dev/herd/server/store"
)

// Poller defaults.
const (
	// DefaultBaseURL is GitHub's REST API.
	DefaultBaseURL = "https://api.github.com"
	// DefaultPollInterval is the pause between two poll rounds.
	DefaultPollInterval = time.Minute
	// DefaultPollConcurrency bounds the pull requests polled, and the
	// branches looked for, at once.
	DefaultPollConcurrency = 4
	// defaultRequestTimeout bounds one API request of the default client.
	defaultRequestTimeout = 30 * time.Second
)

// PollStore is what the Poller needs of the store; *store.Store is one.
type PollStore interface {
	LinkedPullRequestURLs(ctx context.Context) ([]string, error)
	OpenPullRequests(ctx context.Context) ([]store.PullRequest, error)
	BranchesToDiscover(ctx context.Context) ([]store.BranchToDiscover, error)
	UpdatePullRequests(ctx context.Context, apply func(*store.PullRequestTx) error) (changedTasks []string, err error)
}

// PollerConfig configures a Poller.
type PollerConfig struct {
	// Token authenticates every request (a personal access token or an
	// installation token with read access to pull requests, checks and
	// commit statuses); required.
	Token string
	// BaseURL is the REST API's root; empty means DefaultBaseURL. GitHub
	// Enterprise Server serves it at https://HOST/api/v3. It also names
	// the host whose origin remotes the Poller looks up pull requests for:
	// github.com for api.github.com, HOST for https://HOST/api/v3.
	BaseURL string
	// Interval is the pause between two rounds; zero means
	// DefaultPollInterval.
	Interval time.Duration
	// Concurrency bounds the pull requests polled, and the branches looked
	// for, at once; zero means DefaultPollConcurrency.
	Concurrency int
	// Client sends the requests; nil means a client with a 30-second
	// timeout.
	Client *http.Client
	// Store names what to poll and keeps what was found; required.
	Store PollStore
	// Marker is told which tasks changed; required.
	Marker Marker
	// Logger receives failed polls; nil discards them.
	Logger *slog.Logger
}

// Poller polls GitHub's REST API for the pull requests of herd's tasks,
// for servers GitHub cannot deliver webhooks to.
type Poller struct {
	api         *api
	origins     *origins
	store       PollStore
	marker      Marker
	log         *slog.Logger
	interval    time.Duration
	concurrency int
}

// target names a pull request to poll.
type target struct {
	repository string
	number     int
}

// checkRunsJSON is the REST API's list of a commit's check runs.
type checkRunsJSON struct {
	CheckRuns []checkRunJSON `json:"check_runs"`
}

// combinedStatusJSON is the REST API's combined status of a commit: the
// latest status of each context.
type combinedStatusJSON struct {
	Statuses []statusJSON `json:"statuses"`
}

// reviewJSON is one review of the REST API's list of a pull request's
// reviews.
type reviewJSON struct {
	User *struct {
		Login string `json:"login"`
	} `json:"user"`
	State string `json:"state"`
}

// NewPoller returns a Poller; Run runs it.
func NewPoller(cfg PollerConfig) (*Poller, error) {
	switch {
	case cfg.Token == "":
		return nil, errors.New("github poller: a token is required")
	case cfg.Store == nil:
		return nil, errors.New("github poller: a store is required")
	case cfg.Marker == nil:
		return nil, errors.New("github poller: a marker is required")
	case cfg.Interval < 0:
		return nil, fmt.Errorf("github poller: interval %v is negative", cfg.Interval)
	case cfg.Concurrency < 0:
		return nil, fmt.Errorf("github poller: concurrency %d is negative", cfg.Concurrency)
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("github poller: base URL %q is not an http(s) URL", base)
	}
	p := &Poller{
		api: &api{
			base: strings.TrimSuffix(base, "/"), token: cfg.Token, client: cfg.Client,
			cache: make(map[string]cached),
		},
		store: cfg.Store, marker: cfg.Marker, log: cfg.Logger,
		interval: cfg.Interval, concurrency: cfg.Concurrency,
		origins: &origins{host: webHost(u), git: gitcli.Run, byPath: make(map[string]*origin)},
	}
	if p.api.client == nil {
		p.api.client = &http.Client{Timeout: defaultRequestTimeout}
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.interval == 0 {
		p.interval = DefaultPollInterval
	}
	if p.concurrency == 0 {
		p.concurrency = DefaultPollConcurrency
	}
	return p, nil
}

// Run polls a round at once and then one round per interval, until ctx
// ends. A round's polls finish (or see ctx end) before Run returns.
func (p *Poller) Run(ctx context.Context) {
	for {
		p.round(ctx)
		t := time.NewTimer(p.interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// round looks for the pull requests of the branches to discover, then
// polls every target once, those just found included, at most
// p.concurrency at a time.
func (p *Poller) round(ctx context.Context) {
	defer p.api.endRound()
	p.discover(ctx)
	targets, err := p.targets(ctx)
	if err != nil {
		if ctx.Err() == nil {
			p.log.Error("github poller: could not list the pull requests to poll", "err", err)
		}
		return
	}
	fanOut(ctx, p.concurrency, targets, func(t target) {
		if err := p.poll(ctx, t); err != nil && ctx.Err() == nil {
			p.log.Warn("github poller: could not poll a pull request",
				"repository", t.repository, "number", t.number, "err", err)
		}
	})
}

// fanOut calls fn with each item, each on a goroutine of its own and at
// most limit at once, and returns once every call returned. It starts no
// call after ctx ended.
func fanOut[T any](ctx context.Context, limit int, items []T, fn func(T)) {
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, it := range items {
		if ctx.Err() != nil {
			return
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		wg.Go(func() {
			defer func() { <-sem }()
			fn(it)
		})
	}
}

// targets lists the pull requests to poll: those tasks link to explicitly
// and the stored open ones, each once.
func (p *Poller) targets(ctx context.Context) ([]target, error) {
	urls, err := p.store.LinkedPullRequestURLs(ctx)
	if err != nil {
		return nil, err
	}
	open, err := p.store.OpenPullRequests(ctx)
	if err != nil {
		return nil, err
	}
	seen := make(map[target]bool, len(urls)+len(open))
	out := make([]target, 0, len(urls)+len(open))
	add := func(t target) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	for _, u := range urls {
		if t, ok := parsePullRequestURL(u); ok {
			add(t)
		}
	}
	for _, pr := range open {
		add(target{repository: pr.Repository, number: pr.Number})
	}
	return out, nil
}

// poll fetches one pull request and, while it is open, its head commit's
// checks and its reviews, and stores them unless GitHub reported every
// one of them unchanged.
func (p *Poller) poll(ctx context.Context, t target) error {
	repo := repoPath(t.repository)
	paths := []string{fmt.Sprintf("/repos/%s/pulls/%d", repo, t.number)}
	pr, changed, err := get[pullRequestJSON](ctx, p.api, paths[0])
	if err != nil {
		return err
	}
	c, err := newPullRequestChange(&repositoryJSON{FullName: t.repository}, &pr)
	if err != nil {
		return err
	}
	pc := pollChange{pr: c}
	if pr.State == store.PullRequestOpen && pr.Head.SHA != "" {
		sha := url.PathEscape(pr.Head.SHA)
		paths = append(paths,
			fmt.Sprintf("/repos/%s/commits/%s/check-runs?filter=latest&per_page=100", repo, sha),
			fmt.Sprintf("/repos/%s/commits/%s/status?per_page=100", repo, sha),
			fmt.Sprintf("/repos/%s/pulls/%d/reviews?per_page=100", repo, t.number))
		runs, runsChanged, err := get[checkRunsJSON](ctx, p.api, paths[1])
		if err != nil {
			return err
		}
		status, statusChanged, err := get[combinedStatusJSON](ctx, p.api, paths[2])
		if err != nil {
			return err
		}
		reviews, reviewsChanged, err := get[[]reviewJSON](ctx, p.api, paths[3])
		if err != nil {
			return err
		}
		changed = changed || runsChanged || statusChanged || reviewsChanged
		pc.checks = observations(t.repository, pr.Head.SHA, runs, status)
		pc.pr.review = new(reviewDecision(reviews, len(pr.RequestedReviewers)+len(pr.RequestedTeams) > 0))
	}
	if !changed {
		return nil
	}
	return p.update(ctx, pc.apply, paths...)
}

// update stores what the answers to paths said and marks the tasks it
// changed. When storing fails it forgets the answers: unless they are
// fetched in full again, the next round would find them unchanged and
// never store them.
func (p *Poller) update(ctx context.Context, apply func(*store.PullRequestTx) error, paths ...string) error {
	tasks, err := p.store.UpdatePullRequests(ctx, apply)
	if err != nil {
		p.api.forget(paths...)
		return err
	}
	for _, id := range tasks {
		p.marker.Mark(id)
	}
	return nil
}

// observations maps a commit's check runs and statuses to check
// observations, leaving out those herd cannot read.
func observations(repository, sha string, runs checkRunsJSON, status combinedStatusJSON) []store.CheckObservation {
	var out []store.CheckObservation
	for _, run := range runs.CheckRuns {
		if obs, ok, err := runObservation(repository, run); err == nil && ok {
			out = append(out, obs)
		}
	}
	for _, st := range status.Statuses {
		st.SHA = sha
		if obs, ok, err := statusObservation(repository, st); err == nil && ok {
			out = append(out, obs)
		}
	}
	return out
}

// reviewDecision is the review state of a pull request with the given
// reviews, oldest first: each reviewer counts with their latest approval,
// change request or dismissal; any change request outranks any approval;
// without either, review is required when reviewers are requested.
func reviewDecision(reviews []reviewJSON, requested bool) string {
	latest := make(map[string]string)
	for _, r := range reviews {
		login := ""
		if r.User != nil {
			login = r.User.Login
		}
		switch state := strings.ToLower(r.State); state {
		case "approved", "changes_requested", "dismissed":
			latest[login] = state
		}
	}
	approved := false
	for _, state := range latest {
		if state == "changes_requested" {
			return store.ReviewChangesRequested
		}
		approved = approved || state == "approved"
	}
	switch {
	case approved:
		return store.ReviewApproved
	case requested:
		return store.ReviewRequired
	}
	return ""
}

// parsePullRequestURL reads a pull request's web address,
// https://HOST/OWNER/REPO/pull/NUMBER.
func parsePullRequestURL(raw string) (target, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return target{}, false
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) != 4 || parts[0] == "" || parts[1] == "" || parts[2] != "pull" {
		return target{}, false
	}
	n, err := strconv.Atoi(parts[3])
	if err != nil || n <= 0 {
		return target{}, false
	}
	return target{repository: parts[0] + "/" + parts[1], number: n}, true
}

// repoPath is a repository's full name as a URL path.
func repoPath(fullName string) string {
	owner, name, _ := strings.Cut(fullName, "/")
	return url.PathEscape(owner) + "/" + url.PathEscape(name)
}
