package github

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/herd-dev/herd/server/store"
)

// Events the webhook answers; every other event is accepted and ignored.
const (
	eventPing        = "ping"
	eventPullRequest = "pull_request"
	eventReview      = "pull_request_review"
	eventCheckSuite  = "check_suite"
	eventCheckRun    = "check_run"
	eventStatus      = "status"
)

// decoders turn the payload of each event herd acts on into the change it
// makes. A nil change with a nil error means the delivery changes nothing
// (an action herd does not track).
var decoders = map[string]func([]byte) (change, error){
	eventPullRequest: decodePullRequest,
	eventReview:      decodeReview,
	eventCheckSuite:  decodeCheckSuite,
	eventCheckRun:    decodeCheckRun,
	eventStatus:      decodeStatus,
}

// repositoryJSON is the repository object of a payload.
type repositoryJSON struct {
	FullName string `json:"full_name"`
}

// pullRequestJSON is a pull request as webhook payloads and the REST API
// carry it. Review payloads omit merged and carry merged_at.
type pullRequestJSON struct {
	Number    int        `json:"number"`
	HTMLURL   string     `json:"html_url"`
	State     string     `json:"state"`
	Draft     bool       `json:"draft"`
	Merged    bool       `json:"merged"`
	MergedAt  *time.Time `json:"merged_at"`
	UpdatedAt time.Time  `json:"updated_at"`
	Head      struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	} `json:"head"`
	RequestedReviewers []json.RawMessage `json:"requested_reviewers"`
	RequestedTeams     []json.RawMessage `json:"requested_teams"`
}

// checkRunJSON is a check run as webhook payloads and the REST API carry
// it.
type checkRunJSON struct {
	Name        string     `json:"name"`
	HeadSHA     string     `json:"head_sha"`
	Status      string     `json:"status"`
	Conclusion  string     `json:"conclusion"`
	StartedAt   *time.Time `json:"started_at"`
	CompletedAt *time.Time `json:"completed_at"`
	CheckSuite  struct {
		ID int64 `json:"id"`
	} `json:"check_suite"`
}

// statusJSON is one commit status, the status event's payload and an
// element of the REST API's combined status.
type statusJSON struct {
	SHA        string          `json:"sha"`
	State      string          `json:"state"`
	Context    string          `json:"context"`
	UpdatedAt  time.Time       `json:"updated_at"`
	Repository *repositoryJSON `json:"repository"`
}

// decodePullRequest reads a pull_request delivery.
func decodePullRequest(payload []byte) (change, error) {
	var ev struct {
		Action      string           `json:"action"`
		PullRequest *pullRequestJSON `json:"pull_request"`
		Repository  *repositoryJSON  `json:"repository"`
	}
	if err := unmarshal(eventPullRequest, payload, &ev); err != nil {
		return nil, err
	}
	c, err := newPullRequestChange(ev.Repository, ev.PullRequest)
	if err != nil {
		return nil, err
	}
	if ev.Action == "review_requested" {
		c.review = new(store.ReviewRequired)
	}
	return c, nil
}

// decodeReview reads a pull_request_review delivery: a submitted approval
// or change request sets the review state, a dismissal asks for review
// again, and a comment leaves it.
func decodeReview(payload []byte) (change, error) {
	var ev struct {
		Action string `json:"action"`
		Review *struct {
			State string `json:"state"`
		} `json:"review"`
		PullRequest *pullRequestJSON `json:"pull_request"`
		Repository  *repositoryJSON  `json:"repository"`
	}
	if err := unmarshal(eventReview, payload, &ev); err != nil {
		return nil, err
	}
	if ev.Review == nil {
		return nil, errors.New("pull_request_review payload has no review")
	}
	c, err := newPullRequestChange(ev.Repository, ev.PullRequest)
	if err != nil {
		return nil, err
	}
	switch ev.Action {
	case "submitted":
		if state := reviewState(ev.Review.State); state != "" {
			c.review = new(state)
		}
	case "dismissed":
		c.review = new(store.ReviewRequired)
	}
	return c, nil
}

// decodeCheckSuite reads a check_suite delivery: a requested suite is
// pending, a completed one has its conclusion's state.
func decodeCheckSuite(payload []byte) (change, error) {
	var ev struct {
		Action     string `json:"action"`
		CheckSuite *struct {
			ID         int64     `json:"id"`
			HeadSHA    string    `json:"head_sha"`
			Conclusion string    `json:"conclusion"`
			UpdatedAt  time.Time `json:"updated_at"`
		} `json:"check_suite"`
		Repository *repositoryJSON `json:"repository"`
	}
	if err := unmarshal(eventCheckSuite, payload, &ev); err != nil {
		return nil, err
	}
	suite := ev.CheckSuite
	switch {
	case suite == nil:
		return nil, errors.New("check_suite payload has no check_suite")
	case suite.ID <= 0 || suite.HeadSHA == "":
		return nil, errors.New("check_suite payload has no check_suite.id or check_suite.head_sha")
	}
	repo, err := repositoryName(eventCheckSuite, ev.Repository)
	if err != nil {
		return nil, err
	}
	var state string
	switch ev.Action {
	case "completed":
		state = conclusionState(suite.Conclusion)
	case "requested", "rerequested":
		state = store.ChecksPending
	}
	if state == "" {
		return nil, nil
	}
	return checkChange{store.CheckObservation{
		Repository: repo, HeadSHA: suite.HeadSHA, Source: suiteSource(suite.ID), State: state, ObservedAt: suite.UpdatedAt,
	}}, nil
}

// decodeCheckRun reads a check_run delivery.
func decodeCheckRun(payload []byte) (change, error) {
	var ev struct {
		CheckRun   *checkRunJSON   `json:"check_run"`
		Repository *repositoryJSON `json:"repository"`
	}
	if err := unmarshal(eventCheckRun, payload, &ev); err != nil {
		return nil, err
	}
	if ev.CheckRun == nil {
		return nil, errors.New("check_run payload has no check_run")
	}
	repo, err := repositoryName(eventCheckRun, ev.Repository)
	if err != nil {
		return nil, err
	}
	obs, ok, err := runObservation(repo, *ev.CheckRun)
	if err != nil || !ok {
		return nil, err
	}
	return checkChange{obs}, nil
}

// decodeStatus reads a status delivery.
func decodeStatus(payload []byte) (change, error) {
	var ev statusJSON
	if err := unmarshal(eventStatus, payload, &ev); err != nil {
		return nil, err
	}
	repo, err := repositoryName(eventStatus, ev.Repository)
	if err != nil {
		return nil, err
	}
	obs, ok, err := statusObservation(repo, ev)
	if err != nil || !ok {
		return nil, err
	}
	return checkChange{obs}, nil
}

// newPullRequestChange validates the repository and pull request of a
// payload and returns the change they describe.
func newPullRequestChange(repo *repositoryJSON, pr *pullRequestJSON) (pullRequestChange, error) {
	name, err := repositoryName("pull request", repo)
	if err != nil {
		return pullRequestChange{}, err
	}
	switch {
	case pr == nil:
		return pullRequestChange{}, errors.New("payload has no pull_request")
	case pr.Number <= 0:
		return pullRequestChange{}, errors.New("payload has no pull_request.number")
	case pr.State != store.PullRequestOpen && pr.State != store.PullRequestClosed:
		return pullRequestChange{}, fmt.Errorf("pull_request.state %q is not open or closed", pr.State)
	case pr.UpdatedAt.IsZero():
		return pullRequestChange{}, errors.New("payload has no pull_request.updated_at")
	}
	return pullRequestChange{repository: name, pr: *pr}, nil
}

// runObservation maps a check run to the observation of its source; ok is
// false for a completed run whose conclusion herd does not know.
func runObservation(repo string, run checkRunJSON) (obs store.CheckObservation, ok bool, err error) {
	if run.HeadSHA == "" || run.Name == "" {
		return obs, false, errors.New("check_run has no head_sha or name")
	}
	obs = store.CheckObservation{
		Repository: repo, HeadSHA: run.HeadSHA, State: store.ChecksPending,
		Source: "run:" + strconv.FormatInt(run.CheckSuite.ID, 10) + ":" + run.Name,
	}
	if run.StartedAt != nil {
		obs.ObservedAt = *run.StartedAt
	}
	if run.Status == "completed" {
		if obs.State = conclusionState(run.Conclusion); obs.State == "" {
			return obs, false, nil
		}
		if run.CompletedAt != nil {
			obs.ObservedAt = *run.CompletedAt
		}
	}
	return obs, true, nil
}

// statusObservation maps a commit status to the observation of its
// context; ok is false for a state herd does not know.
func statusObservation(repo string, st statusJSON) (obs store.CheckObservation, ok bool, err error) {
	if st.SHA == "" || st.Context == "" {
		return obs, false, errors.New("status has no sha or context")
	}
	obs = store.CheckObservation{Repository: repo, HeadSHA: st.SHA, Source: "status:" + st.Context, ObservedAt: st.UpdatedAt}
	switch st.State {
	case "success":
		obs.State = store.ChecksSuccess
	case "pending":
		obs.State = store.ChecksPending
	case "failure", "error":
		obs.State = store.ChecksFailure
	default:
		return obs, false, nil
	}
	return obs, true, nil
}

// conclusionState maps a check conclusion to a checks state; "" for a
// conclusion herd does not know (or none).
func conclusionState(conclusion string) string {
	switch conclusion {
	case "success", "neutral", "skipped":
		return store.ChecksSuccess
	case "failure", "timed_out", "cancelled", "action_required", "startup_failure", "stale":
		return store.ChecksFailure
	}
	return ""
}

// reviewState maps a submitted review's state (lowercase in webhooks,
// uppercase in the REST API) to a review state; "" for a comment.
func reviewState(state string) string {
	switch strings.ToLower(state) {
	case "approved":
		return store.ReviewApproved
	case "changes_requested":
		return store.ReviewChangesRequested
	}
	return ""
}

// suiteSource names a check suite as a check source.
func suiteSource(id int64) string { return "suite:" + strconv.FormatInt(id, 10) }

// repositoryName returns the repository's full name, or an error naming
// what lacks it.
func repositoryName(what string, repo *repositoryJSON) (string, error) {
	if repo == nil || repo.FullName == "" {
		return "", fmt.Errorf("%s payload has no repository.full_name", what)
	}
	return repo.FullName, nil
}

// unmarshal decodes an event's payload.
func unmarshal(event string, payload []byte, v any) error {
	if err := json.Unmarshal(payload, v); err != nil {
		return fmt.Errorf("%s payload is not valid JSON: %w", event, err)
	}
	return nil
}
