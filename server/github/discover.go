package github

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/herd-dev/herd/server/store"
)

// discoverPerPage bounds the pull requests one discovery lists: a branch
// has one in practice, a few when some were closed and opened again.
const discoverPerPage = 10

// listedPullRequestJSON is an element of the REST API's list of pull
// requests. Its base repository's full name is the one webhooks carry:
// a remote URL may spell it in another case, or name the repository by
// a name it had before a rename (GitHub redirects).
type listedPullRequestJSON struct {
	pullRequestJSON
	Base struct {
		Repo *repositoryJSON `json:"repo"`
	} `json:"base"`
}

// gitFunc runs git with args in dir and returns its standard output, as
// gitcli.Run does.
type gitFunc func(ctx context.Context, dir string, args ...string) ([]byte, error)

// origins resolves local repositories to the GitHub repositories their
// origin remotes name, asking git once per path for the Poller's life.
// It holds one entry per repository path of a task, which the tasks bound.
type origins struct {
	// host is the web host of the GitHub the Poller's API serves (see
	// webHost); remotes on other hosts are not GitHub's.
	host string
	git  gitFunc

	mu sync.Mutex
	// byPath holds what is known of each path asked about. Guarded by mu.
	byPath map[string]*origin
}

// origin is what is known of one path's origin remote.
type origin struct {
	// mu is held while git is asked, so that the discoveries of several
	// branches of one repository wait for one answer rather than each ask.
	mu sync.Mutex
	// known reports whether repo is git's answer. Guarded by mu.
	known bool
	// repo is the full name OWNER/REPO, or "" when the path has no origin
	// on host. Guarded by mu.
	repo string
}

// repository returns the full name of the GitHub repository that path's
// origin remote names, or "" when the path has none: no origin, an origin
// on another host, or no repository at all. The answer is kept for good,
// "" included, so that a repository that is not on GitHub costs one git
// call; only a git that did not answer (it timed out, or ctx ended) is
// asked again next time. An origin changed later is seen by the next
// Poller.
func (o *origins) repository(ctx context.Context, path string) (string, error) {
	o.mu.Lock()
	e, ok := o.byPath[path]
	if !ok {
		e = &origin{}
		o.byPath[path] = e
	}
	o.mu.Unlock()

	e.mu.Lock()
	defer e.mu.Unlock()
	if e.known {
		return e.repo, nil
	}
	out, err := o.git(ctx, path, "remote", "get-url", "origin")
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return "", fmt.Errorf("read the origin remote of %s: %w", path, err)
	}
	if err == nil {
		e.repo, _ = remoteRepository(string(out), o.host)
	}
	e.known = true
	return e.repo, nil
}

// webHost is the host of the GitHub whose REST API is at base: github.com
// for api.github.com, HOST for GitHub Enterprise Server's
// https://HOST/api/v3, SUBDOMAIN.ghe.com for GitHub Enterprise Cloud's
// api.SUBDOMAIN.ghe.com, and else base's own host.
func webHost(base *url.URL) string {
	host := strings.ToLower(base.Hostname())
	if strings.TrimSuffix(base.Path, "/") == "/api/v3" {
		return host
	}
	return strings.TrimPrefix(host, "api.")
}

// remoteRepository returns the full name OWNER/REPO of the repository a
// remote URL names on host: https://HOST/OWNER/REPO, ssh://USER@HOST/OWNER/REPO
// or USER@HOST:OWNER/REPO, each with or without .git. ok is false for a
// remote on another host or of another shape.
func remoteRepository(remote, host string) (fullName string, ok bool) {
	remote = strings.TrimSpace(remote)
	var h, path string
	if strings.Contains(remote, "://") {
		u, err := url.Parse(remote)
		if err != nil || (u.Scheme != "https" && u.Scheme != "ssh") {
			return "", false
		}
		h, path = u.Hostname(), u.Path
	} else {
		// git's scp-like syntax: [USER@]HOST:PATH, where HOST has no slash
		// (a local path with a colon has one before it).
		before, after, found := strings.Cut(remote, ":")
		if !found || strings.Contains(before, "/") {
			return "", false
		}
		h, path = before, after
		if i := strings.LastIndexByte(before, '@'); i >= 0 {
			h = before[i+1:]
		}
	}
	if h == "" || !strings.EqualFold(h, host) {
		return "", false
	}
	path = strings.TrimSuffix(strings.Trim(path, "/"), ".git")
	owner, name, found := strings.Cut(path, "/")
	if !found || owner == "" || name == "" || strings.Contains(name, "/") {
		return "", false
	}
	return owner + "/" + name, true
}

// discover looks for the pull requests of the branches that no stored
// pull request has as head (store.BranchesToDiscover), at most
// p.concurrency branches at once, and stores those it finds.
func (p *Poller) discover(ctx context.Context) {
	branches, err := p.store.BranchesToDiscover(ctx)
	if err != nil {
		if ctx.Err() == nil {
			p.log.Error("github poller: could not list the branches to discover", "err", err)
		}
		return
	}
	// Tasks working on one branch of one repository share its discovery.
	type key struct{ path, branch string }
	seen := make(map[key]bool, len(branches))
	distinct := make([]store.BranchToDiscover, 0, len(branches))
	for _, b := range branches {
		if k := (key{b.Path, b.Branch}); !seen[k] {
			seen[k] = true
			distinct = append(distinct, b)
		}
	}
	fanOut(ctx, p.concurrency, distinct, func(b store.BranchToDiscover) {
		if err := p.discoverBranch(ctx, b); err != nil && ctx.Err() == nil {
			p.log.Warn("github poller: could not look for the pull requests of a branch",
				"path", b.Path, "branch", b.Branch, "err", err)
		}
	})
}

// discoverBranch lists the pull requests, open or closed, whose head is
// b's branch in the GitHub repository b's origin names, and stores them
// as a poll does unless GitHub reported the list unchanged. A repository
// whose origin is not on GitHub is not asked about.
func (p *Poller) discoverBranch(ctx context.Context, b store.BranchToDiscover) error {
	repo, err := p.origins.repository(ctx, b.Path)
	if err != nil || repo == "" {
		return err
	}
	owner, _, _ := strings.Cut(repo, "/")
	path := fmt.Sprintf("/repos/%s/pulls?head=%s&state=all&per_page=%d",
		repoPath(repo), url.QueryEscape(owner+":"+b.Branch), discoverPerPage)
	prs, changed, err := get[[]listedPullRequestJSON](ctx, p.api, path)
	if err != nil || !changed || len(prs) == 0 {
		return err
	}
	changes := make([]pollChange, 0, len(prs))
	for i := range prs {
		base := prs[i].Base.Repo
		if base == nil || base.FullName == "" {
			base = &repositoryJSON{FullName: repo}
		}
		c, err := newPullRequestChange(base, &prs[i].pullRequestJSON)
		if err != nil {
			p.api.forget(path)
			return fmt.Errorf("pull request of %s in %s: %w", b.Branch, repo, err)
		}
		changes = append(changes, pollChange{pr: c})
	}
	return p.update(ctx, func(tx *store.PullRequestTx) error {
		for _, c := range changes {
			if err := c.apply(tx); err != nil {
				return err
			}
		}
		return nil
	}, path)
}
