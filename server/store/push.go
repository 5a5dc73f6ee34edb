package store

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"

	"github.com/herd-dev/herd/shared"
)

// DefaultDeviceName names a device subscribed without a name.
const DefaultDeviceName = "This device"

// authSecretBytes is the length of a subscription's auth secret (RFC 8291).
const authSecretBytes = 16

// PushSubscription is what SavePushDevice stores: a browser's push
// subscription for a workspace, and who made it.
type PushSubscription struct {
	WorkspaceID string
	// Name is at most shared.MaxDeviceNameBytes; blank means
	// DefaultDeviceName.
	Name string
	// Endpoint, P256dh and Auth are PushSubscription.toJSON()'s: an
	// https:// URL (http:// only on a loopback host), the browser's P-256
	// public key and its 16-byte auth secret, both base64url.
	Endpoint string
	P256dh   string
	Auth     string
	// Preferences say what notifies the device.
	Preferences shared.PushPreferences
	// CredentialDigest is the digest of the secret of the device's new
	// credential, computed by the caller; the store only keeps and
	// returns it.
	CredentialDigest string
	// TokenDigest names the server token the device is subscribed under.
	TokenDigest string
}

// PushTarget is a device with what sending to it and checking its
// credential need.
type PushTarget struct {
	shared.PushDevice
	// Endpoint, P256dh and Auth are the device's subscription.
	Endpoint string
	P256dh   string
	Auth     string
	// CredentialDigest is the digest of the device's current credential's
	// secret (see PushSubscription).
	CredentialDigest string
	// TokenDigest names the server token the device belongs to.
	TokenDigest string
}

// pushDeviceRow is a row of push_devices.
type pushDeviceRow struct {
	ID                 string     `gorm:"column:id;primaryKey"`
	WorkspaceID        string     `gorm:"column:workspace_id"`
	Name               string     `gorm:"column:name"`
	Endpoint           string     `gorm:"column:endpoint"`
	P256dh             string     `gorm:"column:p256dh"`
	Auth               string     `gorm:"column:auth"`
	CredentialDigest   string     `gorm:"column:credential_digest"`
	TokenDigest        string     `gorm:"column:token_digest"`
	NotifyRequests     bool       `gorm:"column:notify_requests"`
	NotifyErrors       bool       `gorm:"column:notify_errors"`
	NotifyTurns        bool       `gorm:"column:notify_turns"`
	NotifyPullRequests bool       `gorm:"column:notify_pull_requests"`
	CreatedAt          time.Time  `gorm:"column:created_at"`
	UpdatedAt          time.Time  `gorm:"column:updated_at"`
	LastSentAt         *time.Time `gorm:"column:last_sent_at"`
}

// TableName implements gorm's schema.Tabler.
func (pushDeviceRow) TableName() string { return "push_devices" }

// toTarget converts a row to a target.
func (r pushDeviceRow) toTarget() PushTarget {
	d := shared.PushDevice{
		ID:          r.ID,
		WorkspaceID: r.WorkspaceID,
		Name:        r.Name,
		Preferences: shared.PushPreferences{
			Requests:     r.NotifyRequests,
			Errors:       r.NotifyErrors,
			Turns:        r.NotifyTurns,
			PullRequests: r.NotifyPullRequests,
		},
		CreatedAt: r.CreatedAt.UTC(),
	}
	// The endpoint was parsed when it was stored.
	if u, err := url.Parse(r.Endpoint); err == nil {
		d.PushService = u.Hostname()
	}
	if r.LastSentAt != nil {
		at := r.LastSentAt.UTC()
		d.LastSentAt = &at
	}
	return PushTarget{
		PushDevice: d, Endpoint: r.Endpoint, P256dh: r.P256dh, Auth: r.Auth,
		CredentialDigest: r.CredentialDigest, TokenDigest: r.TokenDigest,
	}
}

// vapidKeysRow is the row of vapid_keys.
type vapidKeysRow struct {
	ID         int       `gorm:"column:id;primaryKey"`
	PublicKey  string    `gorm:"column:public_key"`
	PrivateKey string    `gorm:"column:private_key"`
	CreatedAt  time.Time `gorm:"column:created_at"`
}

// TableName implements gorm's schema.Tabler.
func (vapidKeysRow) TableName() string { return "vapid_keys" }

// VAPIDKeys returns the server's VAPID key pair, unpadded base64url (the
// public key is the uncompressed P-256 point, the private key its
// scalar, as webpush-go takes them). The first call makes the pair and
// keeps it; of concurrent first calls, on one server or several sharing
// the database, the first insert wins and every call returns that pair.
func (s *Store) VAPIDKeys(ctx context.Context) (public, private string, err error) {
	if row, ok, err := loadVAPIDKeys(ctx, s.read); err != nil || ok {
		return row.PublicKey, row.PrivateKey, err
	}
	key, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return "", "", fmt.Errorf("generate VAPID keys: %w", err)
	}
	enc := base64.RawURLEncoding
	err = s.write.WithContext(ctx).Exec(`INSERT INTO vapid_keys (id, public_key, private_key, created_at)
		VALUES (1, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		enc.EncodeToString(key.PublicKey().Bytes()), enc.EncodeToString(key.Bytes()), now()).Error
	if err != nil {
		return "", "", fmt.Errorf("store VAPID keys: %w", err)
	}
	// Read back through the writer, which has seen the insert that won.
	row, ok, err := loadVAPIDKeys(ctx, s.write)
	if err == nil && !ok {
		err = errors.New("load VAPID keys: none stored after insert")
	}
	return row.PublicKey, row.PrivateKey, err
}

// loadVAPIDKeys reads the key pair, reporting whether there is one.
func loadVAPIDKeys(ctx context.Context, db *gorm.DB) (vapidKeysRow, bool, error) {
	var rows []vapidKeysRow
	if err := db.WithContext(ctx).Where("id = 1").Find(&rows).Error; err != nil {
		return vapidKeysRow{}, false, fmt.Errorf("load VAPID keys: %w", err)
	}
	if len(rows) == 0 {
		return vapidKeysRow{}, false, nil
	}
	return rows[0], true, nil
}

// SavePushDevice stores a subscription as a device of its workspace and
// returns it. A subscription whose endpoint is stored for the workspace
// already is that device: it keeps its id and created_at, and everything
// else is replaced; the same browser subscribing for another workspace is
// another device. A workspace keeps at most shared.MaxPushDevices devices of one
// token; one more is a conflict. A malformed subscription is a bad
// request, an unknown workspace not found.
func (s *Store) SavePushDevice(ctx context.Context, in PushSubscription) (PushTarget, error) {
	name, err := checkPushSubscription(in)
	if err != nil {
		return PushTarget{}, err
	}
	var row pushDeviceRow
	err = s.write.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// Saves to one workspace take turns, so that two cannot both pass
		// the bound. NO KEY UPDATE leaves the key-share locks of inserts
		// referencing the workspace free; SQLite's single writer already
		// serialises.
		lockWorkspace := "SELECT id FROM workspaces WHERE id = ?"
		if s.dialect == dialectPostgres {
			lockWorkspace += " FOR NO KEY UPDATE"
		}
		var ids []string
		if err := tx.Raw(lockWorkspace, in.WorkspaceID).Scan(&ids).Error; err != nil {
			return fmt.Errorf("lock workspace: %w", err)
		}
		if len(ids) == 0 {
			return shared.Errorf(shared.CodeNotFound, "workspace %q not found", in.WorkspaceID)
		}
		var others int64
		err := tx.Model(&pushDeviceRow{}).
			Where("workspace_id = ? AND token_digest = ? AND endpoint <> ?", in.WorkspaceID, in.TokenDigest, in.Endpoint).
			Count(&others).Error
		if err != nil {
			return fmt.Errorf("count push devices: %w", err)
		}
		if others >= shared.MaxPushDevices {
			return shared.Errorf(shared.CodeConflict, "the workspace has %d devices, the most it keeps: remove one first", others)
		}
		at := now()
		p := in.Preferences
		err = tx.Exec(`INSERT INTO push_devices (id, workspace_id, name, endpoint, p256dh, auth,
				credential_digest, token_digest, notify_requests, notify_errors, notify_turns,
				notify_pull_requests, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (endpoint, workspace_id) DO UPDATE SET
				name = excluded.name, p256dh = excluded.p256dh, auth = excluded.auth,
				credential_digest = excluded.credential_digest, token_digest = excluded.token_digest,
				notify_requests = excluded.notify_requests, notify_errors = excluded.notify_errors,
				notify_turns = excluded.notify_turns, notify_pull_requests = excluded.notify_pull_requests,
				updated_at = excluded.updated_at`,
			NewID(), in.WorkspaceID, name, in.Endpoint, in.P256dh, in.Auth,
			in.CredentialDigest, in.TokenDigest, p.Requests, p.Errors, p.Turns, p.PullRequests, at, at).Error
		if err != nil {
			return fmt.Errorf("save push device: %w", err)
		}
		if err := tx.Where("endpoint = ? AND workspace_id = ?", in.Endpoint, in.WorkspaceID).Take(&row).Error; err != nil {
			return fmt.Errorf("load saved push device: %w", err)
		}
		return nil
	})
	if err != nil {
		return PushTarget{}, err
	}
	return row.toTarget(), nil
}

// checkPushSubscription checks in and returns the device's name.
func checkPushSubscription(in PushSubscription) (string, error) {
	name, err := checkDeviceName(in.Name)
	if err != nil {
		return "", err
	}
	if err := checkPushEndpoint(in.Endpoint); err != nil {
		return "", err
	}
	if key, err := decodeKey(in.P256dh); err != nil {
		return "", shared.Errorf(shared.CodeBadRequest, "keys.p256dh is not base64url")
	} else if _, err := ecdh.P256().NewPublicKey(key); err != nil {
		return "", shared.Errorf(shared.CodeBadRequest, "keys.p256dh is not an uncompressed P-256 point")
	}
	if auth, err := decodeKey(in.Auth); err != nil || len(auth) != authSecretBytes {
		return "", shared.Errorf(shared.CodeBadRequest, "keys.auth is not %d bytes of base64url", authSecretBytes)
	}
	if in.WorkspaceID == "" || in.CredentialDigest == "" || in.TokenDigest == "" {
		return "", shared.Errorf(shared.CodeBadRequest, "a push device needs a workspace, a credential and a token")
	}
	return name, nil
}

// checkDeviceName checks a device's name and returns it as stored.
func checkDeviceName(name string) (string, error) {
	if len(name) > shared.MaxDeviceNameBytes || !utf8.ValidString(name) {
		return "", shared.Errorf(shared.CodeBadRequest, "a device name is UTF-8 of at most %d bytes", shared.MaxDeviceNameBytes)
	}
	if strings.TrimSpace(name) == "" {
		return DefaultDeviceName, nil
	}
	return name, nil
}

// checkPushEndpoint checks that endpoint is an https:// URL, or http://
// on a loopback host (a push service under test), of bounded length.
func checkPushEndpoint(endpoint string) error {
	if len(endpoint) > shared.MaxPushEndpointBytes {
		return shared.Errorf(shared.CodeBadRequest, "the push endpoint is longer than %d bytes", shared.MaxPushEndpointBytes)
	}
	u, err := url.Parse(endpoint)
	ok := err == nil && u.Host != "" && u.User == nil && u.Fragment == "" &&
		(u.Scheme == "https" || u.Scheme == "http" && isLoopback(u.Hostname()))
	if !ok {
		return shared.Errorf(shared.CodeBadRequest, "the push endpoint must be an https:// URL (http:// only on a loopback host)")
	}
	return nil
}

// isLoopback reports whether host names this machine.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// decodeKey decodes a subscription key: base64url, padded or not, as
// browsers and libraries write it.
func decodeKey(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}

// ListPushDevices returns the devices of workspaceID subscribed under
// tokenDigest, oldest first.
func (s *Store) ListPushDevices(ctx context.Context, workspaceID, tokenDigest string) ([]shared.PushDevice, error) {
	targets, err := s.PushTargets(ctx, workspaceID, tokenDigest)
	if err != nil {
		return nil, err
	}
	out := make([]shared.PushDevice, len(targets))
	for i, t := range targets {
		out[i] = t.PushDevice
	}
	return out, nil
}

// PushTargets returns the devices of workspaceID subscribed under
// tokenDigest, oldest first, with what sending to them needs.
func (s *Store) PushTargets(ctx context.Context, workspaceID, tokenDigest string) ([]PushTarget, error) {
	var rows []pushDeviceRow
	err := s.read.WithContext(ctx).
		Where("workspace_id = ? AND token_digest = ?", workspaceID, tokenDigest).
		Order("created_at, id").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("load push devices: %w", err)
	}
	out := make([]PushTarget, len(rows))
	for i, r := range rows {
		out[i] = r.toTarget()
	}
	return out, nil
}

// GetPushDevice returns the device id subscribed under tokenDigest; a
// device of another token is not found, as an unknown one is.
func (s *Store) GetPushDevice(ctx context.Context, id, tokenDigest string) (PushTarget, error) {
	row, err := loadPushDevice(ctx, s.read, id, tokenDigest)
	if err != nil {
		return PushTarget{}, err
	}
	return row.toTarget(), nil
}

// loadPushDevice reads the device id of tokenDigest.
func loadPushDevice(ctx context.Context, db *gorm.DB, id, tokenDigest string) (pushDeviceRow, error) {
	var row pushDeviceRow
	err := db.WithContext(ctx).Where("id = ? AND token_digest = ?", id, tokenDigest).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return row, shared.Errorf(shared.CodeNotFound, "push device %q not found", id)
	}
	if err != nil {
		return row, fmt.Errorf("load push device: %w", err)
	}
	return row, nil
}

// UpdatePushDevice renames the device of tokenDigest that u names or
// changes its preferences; absent fields stay. It returns the device as
// stored.
func (s *Store) UpdatePushDevice(ctx context.Context, tokenDigest string, u shared.PushDeviceUpdateRequest) (shared.PushDevice, error) {
	var name string
	if u.Name != nil {
		var err error
		if name, err = checkDeviceName(*u.Name); err != nil {
			return shared.PushDevice{}, err
		}
	}
	var row pushDeviceRow
	err := s.write.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if row, err = loadPushDevice(ctx, tx, u.DeviceID, tokenDigest); err != nil {
			return err
		}
		if u.Name != nil {
			row.Name = name
		}
		if p := u.Preferences; p != nil {
			row.NotifyRequests, row.NotifyErrors = p.Requests, p.Errors
			row.NotifyTurns, row.NotifyPullRequests = p.Turns, p.PullRequests
		}
		row.UpdatedAt = now()
		err = tx.Model(&pushDeviceRow{}).Where("id = ?", row.ID).Updates(map[string]any{
			"name": row.Name, "notify_requests": row.NotifyRequests, "notify_errors": row.NotifyErrors,
			"notify_turns": row.NotifyTurns, "notify_pull_requests": row.NotifyPullRequests,
			"updated_at": row.UpdatedAt,
		}).Error
		if err != nil {
			return fmt.Errorf("update push device: %w", err)
		}
		return nil
	})
	if err != nil {
		return shared.PushDevice{}, err
	}
	return row.toTarget().PushDevice, nil
}

// RemovePushDevice removes the device id of tokenDigest; a device of
// another token is not found, as an unknown one is.
func (s *Store) RemovePushDevice(ctx context.Context, id, tokenDigest string) error {
	res := s.write.WithContext(ctx).Where("id = ? AND token_digest = ?", id, tokenDigest).Delete(&pushDeviceRow{})
	if res.Error != nil {
		return fmt.Errorf("remove push device: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return shared.Errorf(shared.CodeNotFound, "push device %q not found", id)
	}
	return nil
}

// DropPushDevice removes the device id, whoever subscribed it, because
// its push service no longer knows the subscription at endpoint (404 or
// 410); a device renewed to another endpoint meanwhile stays. It reports
// whether the device was removed.
func (s *Store) DropPushDevice(ctx context.Context, id, endpoint string) (bool, error) {
	res := s.write.WithContext(ctx).Where("id = ? AND endpoint = ?", id, endpoint).Delete(&pushDeviceRow{})
	if res.Error != nil {
		return false, fmt.Errorf("drop push device: %w", res.Error)
	}
	return res.RowsAffected > 0, nil
}

// MarkPushSent records that the push service accepted a push to the
// device id at at. A device removed meanwhile is no error, and last_sent_at
// never moves back.
func (s *Store) MarkPushSent(ctx context.Context, id string, at time.Time) error {
	at = dbTime(at)
	err := s.write.WithContext(ctx).Exec(`UPDATE push_devices SET last_sent_at = ?
		WHERE id = ? AND (last_sent_at IS NULL OR last_sent_at < ?)`, at, id, at).Error
	if err != nil {
		return fmt.Errorf("mark push sent: %w", err)
	}
	return nil
}

// PruneStalePushDevices removes the devices subscribed under a token
// other than tokenDigest, the current one, and returns how many it
// removed. The server calls it at start-up.
func (s *Store) PruneStalePushDevices(ctx context.Context, tokenDigest string) (int64, error) {
	res := s.write.WithContext(ctx).Where("token_digest <> ?", tokenDigest).Delete(&pushDeviceRow{})
	if res.Error != nil {
		return 0, fmt.Errorf("prune push devices: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// MovePushDevice gives the device id of tokenDigest the subscription its
// browser renewed (pushsubscriptionchange) and a new credential digest;
// it keeps its id, name, workspace and preferences. A device stored under
// the new endpoint already is replaced by it. A malformed subscription is
// a bad request.
func (s *Store) MovePushDevice(ctx context.Context, id, tokenDigest, endpoint, p256dh, auth, credentialDigest string) (PushTarget, error) {
	var row pushDeviceRow
	err := s.write.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if row, err = loadPushDevice(ctx, tx, id, tokenDigest); err != nil {
			return err
		}
		_, err = checkPushSubscription(PushSubscription{
			WorkspaceID: row.WorkspaceID, Name: row.Name, Endpoint: endpoint, P256dh: p256dh, Auth: auth,
			CredentialDigest: credentialDigest, TokenDigest: tokenDigest,
		})
		if err != nil {
			return err
		}
		if err := tx.Where("endpoint = ? AND workspace_id = ? AND id <> ?", endpoint, row.WorkspaceID, id).Delete(&pushDeviceRow{}).Error; err != nil {
			return fmt.Errorf("replace push device: %w", err)
		}
		row.Endpoint, row.P256dh, row.Auth, row.CredentialDigest, row.UpdatedAt = endpoint, p256dh, auth, credentialDigest, now()
		err = tx.Model(&pushDeviceRow{}).Where("id = ?", id).Updates(map[string]any{
			"endpoint": endpoint, "p256dh": p256dh, "auth": auth, "credential_digest": credentialDigest,
			"updated_at": row.UpdatedAt,
		}).Error
		if err != nil {
			return fmt.Errorf("move push device: %w", err)
		}
		return nil
	})
	if err != nil {
		return PushTarget{}, err
	}
	return row.toTarget(), nil
}
