package attention

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"log/slog"
	"strings"
	"time"

	"github.com/herd-dev/herd/server/push"
	"github.com/herd-dev/herd/server/store"
	"github.com/herd-dev/herd/shared"
)

// Service serves the gateway's inbox and push actions, delivers the
// pushes attention decides on to the devices that take them, and checks
// the credentials of decisions. It belongs to one server token: devices
// made under another are invisible to it.
type Service struct {
	st          *store.Store
	sender      *push.Sender
	tokenDigest string
	now         func() time.Time
	log         *slog.Logger
	// loopbackHTTP lets devices push to http:// on loopback: a push
	// service under test. Real push services are https.
	loopbackHTTP bool
}

// NewService returns the service of the server token whose digest is
// tokenDigest (see TokenDigest), sending through sender.
// With loopbackHTTP, a device may push to http:// on a loopback host
// (tests); otherwise only https:// endpoints are taken, so that a device
// cannot aim the server's requests at a plain service of its own machine.
func NewService(st *store.Store, sender *push.Sender, tokenDigest string, loopbackHTTP bool, log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{st: st, sender: sender, tokenDigest: tokenDigest, now: time.Now, log: log, loopbackHTTP: loopbackHTTP}
}

// checkEndpoint refuses a plain http endpoint unless loopbackHTTP; the
// store checks the rest.
func (d *Service) checkEndpoint(endpoint string) error {
	if !d.loopbackHTTP && !strings.HasPrefix(endpoint, "https://") {
		return shared.Errorf(shared.CodeBadRequest, "the push endpoint must be an https:// URL")
	}
	return nil
}

// Inbox answers inbox.list.
func (d *Service) Inbox(ctx context.Context, workspaceID string) (shared.InboxListResponse, error) {
	reqs, more, err := d.st.OpenRequests(ctx, workspaceID, shared.MaxInboxRequests)
	if err != nil {
		return shared.InboxListResponse{}, err
	}
	return shared.InboxListResponse{Requests: reqs, Truncated: more}, nil
}

// TokenDigest names a server token without keeping it: the devices a
// token made belong to it. No token (a loopback server) has a name too.
func TokenDigest(token string) string {
	d := sha256.Sum256([]byte("herd push devices\x00" + token))
	return hex.EncodeToString(d[:])
}

// PushConfig answers push.config.get.
func (d *Service) PushConfig(ctx context.Context) (shared.PushConfig, error) {
	public, _, err := d.st.VAPIDKeys(ctx)
	if err != nil {
		return shared.PushConfig{}, err
	}
	return shared.PushConfig{PublicKey: public}, nil
}

// Subscribe answers push.subscribe: it stores the device with a new
// credential, which it returns this once.
func (d *Service) Subscribe(ctx context.Context, req shared.PushSubscribeRequest) (shared.PushSubscribeResponse, error) {
	if err := d.checkEndpoint(req.Endpoint); err != nil {
		return shared.PushSubscribeResponse{}, err
	}
	secret, digest, err := newSecret()
	if err != nil {
		return shared.PushSubscribeResponse{}, err
	}
	prefs := shared.DefaultPushPreferences
	if req.Preferences != nil {
		prefs = *req.Preferences
	}
	t, err := d.st.SavePushDevice(ctx, store.PushSubscription{
		WorkspaceID: req.WorkspaceID, Name: req.Name, Endpoint: req.Endpoint,
		P256dh: req.Keys.P256dh, Auth: req.Keys.Auth, Preferences: prefs,
		CredentialDigest: digest, TokenDigest: d.tokenDigest,
	})
	if err != nil {
		return shared.PushSubscribeResponse{}, err
	}
	return shared.PushSubscribeResponse{Device: t.PushDevice, Credential: t.ID + "." + secret}, nil
}

// Resubscribe moves an authenticated device to the subscription its
// browser renewed (pushsubscriptionchange): the device keeps its id, name
// and preferences and gets a new credential, returned this once.
func (d *Service) Resubscribe(ctx context.Context, device store.PushTarget, req shared.PushResubscribeRequest) (shared.PushSubscribeResponse, error) {
	if err := d.checkEndpoint(req.Endpoint); err != nil {
		return shared.PushSubscribeResponse{}, err
	}
	secret, digest, err := newSecret()
	if err != nil {
		return shared.PushSubscribeResponse{}, err
	}
	t, err := d.st.MovePushDevice(ctx, device.ID, d.tokenDigest, req.Endpoint, req.Keys.P256dh, req.Keys.Auth, digest)
	if err != nil {
		return shared.PushSubscribeResponse{}, err
	}
	return shared.PushSubscribeResponse{Device: t.PushDevice, Credential: t.ID + "." + secret}, nil
}

// Devices answers push.device.list.
func (d *Service) Devices(ctx context.Context, workspaceID string) ([]shared.PushDevice, error) {
	return d.st.ListPushDevices(ctx, workspaceID, d.tokenDigest)
}

// UpdateDevice answers push.device.update.
func (d *Service) UpdateDevice(ctx context.Context, req shared.PushDeviceUpdateRequest) (shared.PushDevice, error) {
	return d.st.UpdatePushDevice(ctx, d.tokenDigest, req)
}

// RemoveDevice answers push.device.remove.
func (d *Service) RemoveDevice(ctx context.Context, deviceID string) error {
	return d.st.RemovePushDevice(ctx, deviceID, d.tokenDigest)
}

// TestDevice answers push.test: a test notification, sent now, whose
// failure is the push service's own reason.
func (d *Service) TestDevice(ctx context.Context, deviceID string) error {
	t, err := d.st.GetPushDevice(ctx, deviceID, d.tokenDigest)
	if err != nil {
		return err
	}
	pending, err := d.st.CountOpenRequests(ctx, t.WorkspaceID)
	if err != nil {
		return err
	}
	msg := shared.PushMessage{
		Kind: shared.PushTest, Tag: "test:" + t.ID, WorkspaceID: t.WorkspaceID,
		Title: "herd notifications work", Body: "This device (" + t.Name + ") will be told when an agent needs you.",
		URL: "/", Pending: pending, SentAt: d.now().UTC(),
	}
	return d.sender.SendNow(ctx, t, push.NewMessage(msg), d.now())
}

// Push implements Pusher: the message goes to every device of the
// workspace whose preferences take its kind, but except.
func (d *Service) Push(ctx context.Context, workspaceID string, msg shared.PushMessage, since time.Time, except string) error {
	targets, err := d.st.PushTargets(ctx, workspaceID, d.tokenDigest)
	if err != nil {
		return err
	}
	m := push.NewMessage(msg)
	for _, t := range targets {
		if t.ID == except || !takes(t.Preferences, msg.Kind) {
			continue
		}
		if err := d.sender.Send(t, m, since); err != nil {
			// Too large a payload is herd's bug, and after Close nothing
			// is sent: neither is worth retrying the pass for.
			d.log.Error("push", "device_id", t.ID, "kind", msg.Kind, "err", err)
		}
	}
	return nil
}

// Authenticate returns the device a decision's credential names. Every
// failure is the same unauthorized error, so that an answer tells nothing
// of which part was wrong.
func (d *Service) Authenticate(ctx context.Context, credential string) (store.PushTarget, error) {
	refused := shared.Errorf(shared.CodeUnauthorized, "this device's credential is not valid: turn notifications on again")
	id, secret, ok := strings.Cut(credential, ".")
	if !ok || id == "" || secret == "" {
		return store.PushTarget{}, refused
	}
	t, err := d.st.GetPushDevice(ctx, id, d.tokenDigest)
	if shared.ErrorCode(err) == shared.CodeNotFound {
		return store.PushTarget{}, refused
	}
	if err != nil {
		return store.PushTarget{}, err
	}
	got := digestOf(secret)
	if subtle.ConstantTimeCompare([]byte(got), []byte(t.CredentialDigest)) != 1 {
		return store.PushTarget{}, refused
	}
	return t, nil
}

// newSecret makes a credential's secret and its digest.
func newSecret() (secret, digest string, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	secret = base64.RawURLEncoding.EncodeToString(b)
	return secret, digestOf(secret), nil
}

func digestOf(secret string) string {
	d := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(d[:])
}

// takes reports whether preferences take a kind of message. A close goes
// where requests go, since it takes back a request's notification.
func takes(p shared.PushPreferences, kind shared.PushKind) bool {
	switch kind {
	case shared.PushPermission, shared.PushClarification, shared.PushClose:
		return p.Requests
	case shared.PushError:
		return p.Errors
	case shared.PushTurn:
		return p.Turns
	case shared.PushPullRequest:
		return p.PullRequests
	}
	return true
}
