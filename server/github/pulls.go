package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// createTimeout bounds opening one pull request, whatever the client's
// own timeout: GitHub answers in a second or two.
const createTimeout = 30 * time.Second

// maxErrorBytes bounds the body of an error answer that is read.
const maxErrorBytes = 64 << 10

// PullRequestClient opens pull requests through GitHub's REST API. It is
// safe for concurrent use.
type PullRequestClient struct {
	// Token authenticates the requests; it needs write access to the
	// repository's pull requests (a fine-grained token's "Pull requests:
	// Read and write", a classic token's repo scope).
	Token string
	// BaseURL is the REST API's root; empty means DefaultBaseURL. GitHub
	// Enterprise Server serves it at https://HOST/api/v3.
	BaseURL string
	// Client sends the requests; nil means http.DefaultClient. Each
	// request is bounded by 30 seconds either way.
	Client *http.Client
}

// NewPullRequest is a pull request to open.
type NewPullRequest struct {
	// Repository is the repository's full name, OWNER/NAME.
	Repository string
	// Title is required, at most shared.MaxPullRequestTitleBytes; Body is
	// at most shared.MaxPullRequestBodyBytes.
	Title, Body string
	// Head is the branch with the changes, in Repository; Base the branch
	// they are to be merged into.
	Head, Base string
	// Draft opens the pull request as a draft.
	Draft bool
}

// CreatedPullRequest is a pull request GitHub opened.
type CreatedPullRequest struct {
	// Repository is the repository's full name as GitHub spells it, which
	// is how webhooks and polls store it: the name Create was given may
	// differ in case, or be one the repository had before a rename.
	Repository string
	Number     int
	// URL is the pull request's web address (html_url).
	URL        string
	HeadBranch string
	HeadSHA    string
	// State is store.PullRequestOpen.
	State     string
	Draft     bool
	UpdatedAt time.Time
}

// Create opens the pull request in on GitHub. Input that cannot be a pull
// request is shared.CodeBadRequest, and sends nothing. GitHub's refusals
// come back coded, with GitHub's own message: a pull request that cannot
// be opened (422: one already exists for the branch, no commits between
// the branches, an unknown branch) and a token refused (401, 403) are
// shared.CodeConflict; a repository the token cannot see (404) is
// shared.CodeNotFound; a rate limit, an error of GitHub's or a GitHub that
// cannot be reached is shared.CodeUnavailable. A client without a token
// is shared.CodeConflict.
func (c *PullRequestClient) Create(ctx context.Context, in NewPullRequest) (CreatedPullRequest, error) {
	if err := in.check(); err != nil {
		return CreatedPullRequest{}, err
	}
	if c.Token == "" {
		return CreatedPullRequest{}, shared.Errorf(shared.CodeConflict,
			"herd has no GitHub token to open pull requests with; start it with --github-token (HERD_GITHUB_TOKEN)")
	}
	base := c.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	if u, err := url.Parse(base); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return CreatedPullRequest{}, fmt.Errorf("open a pull request: GitHub API URL %q is not an http(s) URL", base)
	}
	body, err := json.Marshal(struct {
		Title string `json:"title"`
		Head  string `json:"head"`
		Base  string `json:"base"`
		Body  string `json:"body,omitempty"`
		Draft bool   `json:"draft"`
	}{in.Title, in.Head, in.Base, in.Body, in.Draft})
	if err != nil {
		return CreatedPullRequest{}, fmt.Errorf("open a pull request: %w", err)
	}

	reqCtx, cancel := context.WithTimeout(ctx, createTimeout)
	defer cancel()
	endpoint := strings.TrimSuffix(base, "/") + "/repos/" + repoPath(in.Repository) + "/pulls"
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return CreatedPullRequest{}, fmt.Errorf("open a pull request: %w", err)
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("User-Agent", "herd")
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set("Content-Type", "application/json")
	client := c.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	switch {
	case err != nil && ctx.Err() != nil:
		return CreatedPullRequest{}, fmt.Errorf("open a pull request in %s: %w", in.Repository, ctx.Err())
	case errors.Is(err, context.DeadlineExceeded):
		return CreatedPullRequest{}, shared.Errorf(shared.CodeUnavailable, "GitHub did not answer within %v", createTimeout)
	case err != nil:
		return CreatedPullRequest{}, shared.Errorf(shared.CodeUnavailable, "GitHub could not be reached: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return CreatedPullRequest{}, refusal(resp, in.Repository)
	}
	var pr listedPullRequestJSON
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxResponseBytes)).Decode(&pr); err != nil {
		return CreatedPullRequest{}, fmt.Errorf("open a pull request in %s: decode GitHub's answer: %w", in.Repository, err)
	}
	repo := pr.Base.Repo
	if repo == nil || repo.FullName == "" {
		repo = &repositoryJSON{FullName: in.Repository}
	}
	if _, err := newPullRequestChange(repo, &pr.pullRequestJSON); err != nil {
		return CreatedPullRequest{}, fmt.Errorf("open a pull request in %s: GitHub's answer: %w", in.Repository, err)
	}
	if pr.HTMLURL == "" {
		// The task links to its pull request by this address.
		return CreatedPullRequest{}, fmt.Errorf("open a pull request in %s: GitHub's answer has no html_url", in.Repository)
	}
	return CreatedPullRequest{
		Repository: repo.FullName, Number: pr.Number, URL: pr.HTMLURL,
		HeadBranch: pr.Head.Ref, HeadSHA: pr.Head.SHA,
		State: pr.State, Draft: pr.Draft, UpdatedAt: pr.UpdatedAt,
	}, nil
}

// check returns a shared.CodeBadRequest error unless in can be opened.
func (in NewPullRequest) check() error {
	owner, name, _ := strings.Cut(in.Repository, "/")
	switch {
	case owner == "" || name == "" || strings.Contains(name, "/"):
		return shared.Errorf(shared.CodeBadRequest, "repository %q is not OWNER/NAME", in.Repository)
	case strings.TrimSpace(in.Title) == "":
		return shared.Errorf(shared.CodeBadRequest, "a pull request needs a title")
	case len(in.Title) > shared.MaxPullRequestTitleBytes:
		return shared.Errorf(shared.CodeBadRequest, "the title is %d bytes; the limit is %d",
			len(in.Title), shared.MaxPullRequestTitleBytes)
	case len(in.Body) > shared.MaxPullRequestBodyBytes:
		return shared.Errorf(shared.CodeBadRequest, "the description is %d bytes; the limit is %d",
			len(in.Body), shared.MaxPullRequestBodyBytes)
	case in.Head == "":
		return shared.Errorf(shared.CodeBadRequest, "a pull request needs the branch with the changes")
	case in.Base == "":
		return shared.Errorf(shared.CodeBadRequest, "a pull request needs the branch to merge into")
	}
	return nil
}

// refusal turns GitHub's answer other than 201 to opening a pull request
// in repository into a coded error carrying GitHub's message.
func refusal(resp *http.Response, repository string) error {
	var body struct {
		Message string `json:"message"`
		// Errors are objects in validation failures, strings elsewhere.
		Errors []json.RawMessage `json:"errors"`
	}
	_ = json.NewDecoder(io.LimitReader(resp.Body, maxErrorBytes)).Decode(&body)
	said := body.Message
	if details := errorDetails(body.Errors); details != "" {
		said += ": " + details
	}
	if said == "" {
		said = "no message"
	}
	status := resp.Status
	lower := strings.ToLower(body.Message)
	switch code := resp.StatusCode; {
	case code == http.StatusUnprocessableEntity:
		return shared.Errorf(shared.CodeConflict, "GitHub did not open the pull request: %s", said)
	case code == http.StatusTooManyRequests || code == http.StatusForbidden && strings.Contains(lower, "rate limit"):
		return shared.Errorf(shared.CodeUnavailable, "GitHub's rate limit holds herd back (%s: %s); try again later", status, said)
	case code == http.StatusUnauthorized:
		return shared.Errorf(shared.CodeConflict, "GitHub refused herd's token (%s: %s); check --github-token (HERD_GITHUB_TOKEN)", status, said)
	case code == http.StatusForbidden:
		return shared.Errorf(shared.CodeConflict,
			"GitHub refused herd's token to open pull requests in %s (%s: %s); it needs write access to pull requests",
			repository, status, said)
	case code == http.StatusNotFound:
		return shared.Errorf(shared.CodeNotFound,
			"GitHub has no repository %s that herd's token can see (%s: %s)", repository, status, said)
	}
	return shared.Errorf(shared.CodeUnavailable, "GitHub answered %s to opening a pull request in %s: %s", status, repository, said)
}

// errorDetails joins the errors of a GitHub error answer: each one's
// message, or its field and code ("base invalid") when it has none.
func errorDetails(raw []json.RawMessage) string {
	var parts []string
	for _, r := range raw {
		var s string
		if json.Unmarshal(r, &s) == nil {
			if s != "" {
				parts = append(parts, s)
			}
			continue
		}
		var e struct {
			Message, Field, Code string
		}
		if json.Unmarshal(r, &e) != nil {
			continue
		}
		if e.Message != "" {
			parts = append(parts, e.Message)
		} else if e.Field != "" || e.Code != "" {
			parts = append(parts, strings.TrimSpace(e.Field+" "+e.Code))
		}
	}
	return strings.Join(parts, "; ")
}

// Apply stores p in tx as a poll of it would be stored: linked to the
// task whose pull_request_url is p.URL, else to the task working on
// p.HeadBranch, with the checks already recorded on p.HeadSHA; unchanged
// when a newer state of it is stored already (a webhook delivery that
// came first), and not stored at all when no task owns it. Pass it to
// store.UpdatePullRequests and mark the tasks that returns.
func (p CreatedPullRequest) Apply(tx *store.PullRequestTx) error {
	pr := pullRequestJSON{Number: p.Number, HTMLURL: p.URL, State: p.State, Draft: p.Draft, UpdatedAt: p.UpdatedAt}
	pr.Head.Ref, pr.Head.SHA = p.HeadBranch, p.HeadSHA
	c, err := newPullRequestChange(&repositoryJSON{FullName: p.Repository}, &pr)
	if err != nil {
		return fmt.Errorf("store pull request %s#%d: %w", p.Repository, p.Number, err)
	}
	return c.apply(tx)
}

// RepositoryOf returns the full name OWNER/NAME of the repository that
// remoteURL names on the GitHub whose REST API is at apiBaseURL (empty
// means DefaultBaseURL): https://HOST/OWNER/NAME, ssh://USER@HOST/OWNER/NAME
// or USER@HOST:OWNER/NAME, each with or without .git, where HOST is
// github.com for api.github.com and HOST for https://HOST/api/v3. ok is
// false for a remote elsewhere or of another shape.
func RepositoryOf(remoteURL, apiBaseURL string) (fullName string, ok bool) {
	if apiBaseURL == "" {
		apiBaseURL = DefaultBaseURL
	}
	u, err := url.Parse(apiBaseURL)
	if err != nil || u.Host == "" {
		return "", false
	}
	return remoteRepository(remoteURL, webHost(u))
}
