package store

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herd-dev/herd/shared"
)

// testSubscription returns a well-formed subscription of workspaceID at a
// fresh https endpoint, under token "token-a".
func testSubscription(tb testing.TB, workspaceID string) PushSubscription {
	tb.Helper()
	key, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	auth := make([]byte, 16)
	rand.Read(auth)
	enc := base64.RawURLEncoding
	return PushSubscription{
		WorkspaceID: workspaceID,
		Name:        "Phone",
		Endpoint:    "https://push.example.com/send/" + NewID(),
		P256dh:      enc.EncodeToString(key.PublicKey().Bytes()),
		Auth:        enc.EncodeToString(auth),
		Preferences: shared.DefaultPushPreferences,
		// The store keeps digests opaque; any distinct strings do.
		CredentialDigest: "credential-" + NewID(),
		TokenDigest:      "token-a",
	}
}

// mustSavePushDevice saves in or fails tb.
func mustSavePushDevice(tb testing.TB, s *Store, in PushSubscription) PushTarget {
	tb.Helper()
	d, err := s.SavePushDevice(context.Background(), in)
	if err != nil {
		tb.Fatalf("save push device: %v", err)
	}
	return d
}

func TestVAPIDKeysAreMadeOnceAndKeptAcrossRestarts(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		cfg := MustConfig(t, dialect)
		s := mustOpenConfig(t, cfg)
		public, private, err := s.VAPIDKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The pair is a P-256 key whose private scalar gives its public
		// point, in the encodings the Push API and webpush-go take.
		priv, err := base64.RawURLEncoding.DecodeString(private)
		if err != nil {
			t.Fatalf("private key %q is not unpadded base64url: %v", private, err)
		}
		key, err := ecdh.P256().NewPrivateKey(priv)
		if err != nil {
			t.Fatalf("private key is not a P-256 scalar: %v", err)
		}
		if want := base64.RawURLEncoding.EncodeToString(key.PublicKey().Bytes()); public != want {
			t.Fatalf("public key %q is not the private key's point %q", public, want)
		}

		again := mustOpenConfig(t, cfg)
		public2, private2, err := again.VAPIDKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if public2 != public || private2 != private {
			t.Fatal("a restarted server made a new VAPID key pair; subscriptions would stop working")
		}
	})
}

func TestVAPIDKeysOfTwoReplicasStartingTogetherAreOnePair(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		cfg := MustConfig(t, dialect)
		replicas := []*Store{mustOpenConfig(t, cfg), mustOpenConfig(t, cfg)}
		const callers = 8
		got := make([]string, callers)
		errs := make([]error, callers)
		var wg sync.WaitGroup
		for i := range callers {
			wg.Go(func() {
				public, private, err := replicas[i%2].VAPIDKeys(context.Background())
				got[i], errs[i] = public+" "+private, err
			})
		}
		wg.Wait()
		for i := range callers {
			if errs[i] != nil {
				t.Fatalf("caller %d: %v", i, errs[i])
			}
			if got[i] != got[0] {
				t.Fatalf("caller %d got another key pair than caller 0", i)
			}
		}
	})
}

func TestPushDeviceSubscribingTheSameEndpointAgainIsTheSameDevice(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		w := mustWorkspace(t, s, "w")
		first := testSubscription(t, w.ID)
		saved := mustSavePushDevice(t, s, first)
		if saved.ID == "" || saved.Name != "Phone" || saved.PushService != "push.example.com" ||
			saved.Preferences != shared.DefaultPushPreferences || saved.LastSentAt != nil {
			t.Fatalf("saved device %+v", saved.PushDevice)
		}

		again := testSubscription(t, w.ID)
		again.Endpoint = first.Endpoint
		again.Name = "Work phone"
		again.Preferences = shared.PushPreferences{Errors: true, Turns: true}
		again.TokenDigest = "token-b"
		replaced := mustSavePushDevice(t, s, again)

		if replaced.ID != saved.ID || !replaced.CreatedAt.Equal(saved.CreatedAt) {
			t.Fatalf("resubscribing made device %s created %v, want %s created %v",
				replaced.ID, replaced.CreatedAt, saved.ID, saved.CreatedAt)
		}
		want := PushTarget{
			PushDevice: shared.PushDevice{
				ID: saved.ID, WorkspaceID: w.ID, Name: "Work phone", Preferences: again.Preferences,
				PushService: "push.example.com", CreatedAt: saved.CreatedAt,
			},
			Endpoint: first.Endpoint, P256dh: again.P256dh, Auth: again.Auth,
			CredentialDigest: again.CredentialDigest, TokenDigest: "token-b",
		}
		if replaced != want {
			t.Fatalf("resubscribed device\n%+v, want\n%+v", replaced, want)
		}
		got, err := s.GetPushDevice(ctx, saved.ID, "token-b")
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("GetPushDevice\n%+v, want\n%+v", got, want)
		}
		if _, err := s.GetPushDevice(ctx, saved.ID, "token-a"); shared.ErrorCode(err) != shared.CodeNotFound {
			t.Fatalf("the device under its old token: %v, want not_found", err)
		}
	})
}

func TestPushDevicesOfAWorkspaceAreBounded(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		w := mustWorkspace(t, s, "w")
		var subs []PushSubscription
		for range shared.MaxPushDevices {
			in := testSubscription(t, w.ID)
			mustSavePushDevice(t, s, in)
			subs = append(subs, in)
		}
		_, err := s.SavePushDevice(ctx, testSubscription(t, w.ID))
		if shared.ErrorCode(err) != shared.CodeConflict {
			t.Fatalf("device %d: %v, want conflict", shared.MaxPushDevices+1, err)
		}
		// A device at the bound may still resubscribe, another token's
		// devices do not count, and neither do another workspace's.
		mustSavePushDevice(t, s, subs[3])
		other := testSubscription(t, w.ID)
		other.TokenDigest = "token-b"
		mustSavePushDevice(t, s, other)
		mustSavePushDevice(t, s, testSubscription(t, mustWorkspace(t, s, "w2").ID))

		if err := s.RemovePushDevice(ctx, mustDeviceID(t, s, subs[0]), "token-a"); err != nil {
			t.Fatal(err)
		}
		mustSavePushDevice(t, s, testSubscription(t, w.ID))
	})
}

// mustDeviceID returns the id of the device of in's endpoint.
func mustDeviceID(tb testing.TB, s *Store, in PushSubscription) string {
	tb.Helper()
	targets, err := s.PushTargets(context.Background(), in.WorkspaceID, in.TokenDigest)
	if err != nil {
		tb.Fatal(err)
	}
	for _, d := range targets {
		if d.Endpoint == in.Endpoint {
			return d.ID
		}
	}
	tb.Fatalf("no device of endpoint %s", in.Endpoint)
	return ""
}

func TestPushDevicesConcurrentSubscribersNeverPassTheBound(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		w := mustWorkspace(t, s, "w")
		for range shared.MaxPushDevices - 2 {
			mustSavePushDevice(t, s, testSubscription(t, w.ID))
		}
		const racers = 6
		var wg sync.WaitGroup
		var mu sync.Mutex
		saved, conflicts := 0, 0
		for range racers {
			in := testSubscription(t, w.ID)
			wg.Go(func() {
				_, err := s.SavePushDevice(ctx, in)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					saved++
				case shared.ErrorCode(err) == shared.CodeConflict:
					conflicts++
				default:
					t.Errorf("save: %v", err)
				}
			})
		}
		wg.Wait()
		if saved != 2 || conflicts != racers-2 {
			t.Fatalf("%d saved and %d conflicts, want 2 and %d", saved, conflicts, racers-2)
		}
		devices, err := s.ListPushDevices(ctx, w.ID, "token-a")
		if err != nil {
			t.Fatal(err)
		}
		if len(devices) != shared.MaxPushDevices {
			t.Fatalf("%d devices stored, want %d", len(devices), shared.MaxPushDevices)
		}
	})
}

func TestPushDevicesListGetUpdateRemoveByToken(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		w := mustWorkspace(t, s, "w")
		a := mustSavePushDevice(t, s, testSubscription(t, w.ID))
		b := mustSavePushDevice(t, s, testSubscription(t, w.ID))
		foreign := testSubscription(t, w.ID)
		foreign.TokenDigest = "token-b"
		c := mustSavePushDevice(t, s, foreign)

		list, err := s.ListPushDevices(ctx, w.ID, "token-a")
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 2 || list[0] != a.PushDevice || list[1] != b.PushDevice {
			t.Fatalf("ListPushDevices = %+v, want a then b", list)
		}

		name := "Tablet"
		prefs := shared.PushPreferences{Requests: false, PullRequests: true}
		updated, err := s.UpdatePushDevice(ctx, "token-a", shared.PushDeviceUpdateRequest{DeviceID: a.ID, Name: &name})
		if err != nil {
			t.Fatal(err)
		}
		if updated.Name != "Tablet" || updated.Preferences != shared.DefaultPushPreferences {
			t.Fatalf("renamed device %+v: name or preferences wrong", updated)
		}
		updated, err = s.UpdatePushDevice(ctx, "token-a", shared.PushDeviceUpdateRequest{DeviceID: a.ID, Preferences: &prefs})
		if err != nil {
			t.Fatal(err)
		}
		if updated.Name != "Tablet" || updated.Preferences != prefs {
			t.Fatalf("device after a preferences update %+v", updated)
		}
		blank := "  "
		updated, err = s.UpdatePushDevice(ctx, "token-a", shared.PushDeviceUpdateRequest{DeviceID: a.ID, Name: &blank})
		if err != nil || updated.Name != DefaultDeviceName {
			t.Fatalf("blank name: %+v, %v; want %q", updated, err, DefaultDeviceName)
		}
		got, err := s.GetPushDevice(ctx, a.ID, "token-a")
		if err != nil || got.PushDevice != updated {
			t.Fatalf("GetPushDevice after updates = %+v, %v; want %+v", got.PushDevice, err, updated)
		}

		// Another token's device is not there for token-a.
		if _, err := s.UpdatePushDevice(ctx, "token-a", shared.PushDeviceUpdateRequest{DeviceID: c.ID, Name: &name}); shared.ErrorCode(err) != shared.CodeNotFound {
			t.Fatalf("updating another token's device: %v, want not_found", err)
		}
		if err := s.RemovePushDevice(ctx, c.ID, "token-a"); shared.ErrorCode(err) != shared.CodeNotFound {
			t.Fatalf("removing another token's device: %v, want not_found", err)
		}

		if err := s.RemovePushDevice(ctx, a.ID, "token-a"); err != nil {
			t.Fatal(err)
		}
		if err := s.RemovePushDevice(ctx, a.ID, "token-a"); shared.ErrorCode(err) != shared.CodeNotFound {
			t.Fatalf("removing twice: %v, want not_found", err)
		}
		if _, err := s.GetPushDevice(ctx, a.ID, "token-a"); shared.ErrorCode(err) != shared.CodeNotFound {
			t.Fatalf("a removed device: %v, want not_found", err)
		}
		targets, err := s.PushTargets(ctx, w.ID, "token-a")
		if err != nil {
			t.Fatal(err)
		}
		if len(targets) != 1 || targets[0].ID != b.ID || targets[0].Endpoint == "" || targets[0].P256dh == "" || targets[0].Auth == "" {
			t.Fatalf("PushTargets after removal = %+v, want b with its subscription", targets)
		}
	})
}

func TestPushDeviceMarkSentNeverMovesBack(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		d := mustSavePushDevice(t, s, testSubscription(t, mustWorkspace(t, s, "w").ID))
		later := time.Date(2026, 5, 1, 12, 0, 0, 123456789, time.FixedZone("CEST", 2*3600))
		for _, at := range []time.Time{later, later.Add(-time.Hour)} {
			if err := s.MarkPushSent(ctx, d.ID, at); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.GetPushDevice(ctx, d.ID, "token-a")
		if err != nil {
			t.Fatal(err)
		}
		if want := dbTime(later); got.LastSentAt == nil || !got.LastSentAt.Equal(want) || got.LastSentAt.Location() != time.UTC {
			t.Fatalf("last_sent_at %v, want %v in UTC", got.LastSentAt, want)
		}
		if err := s.MarkPushSent(ctx, "gone", later); err != nil {
			t.Fatalf("marking a removed device: %v, want no error", err)
		}
	})
}

func TestPushDevicesDroppedByTheirServiceAndPrunedByToken(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		w := mustWorkspace(t, s, "w")
		keep := mustSavePushDevice(t, s, testSubscription(t, w.ID))
		old := testSubscription(t, w.ID)
		old.TokenDigest = "old-token"
		stale := mustSavePushDevice(t, s, old)
		expired := mustSavePushDevice(t, s, testSubscription(t, w.ID))

		for _, want := range []bool{true, false} {
			dropped, err := s.DropPushDevice(ctx, expired.ID, expired.Endpoint)
			if err != nil || dropped != want {
				t.Fatalf("DropPushDevice = %v, %v; want %v", dropped, err, want)
			}
		}
		n, err := s.PruneStalePushDevices(ctx, "token-a")
		if err != nil || n != 1 {
			t.Fatalf("PruneStalePushDevices = %d, %v; want 1", n, err)
		}
		if _, err := s.GetPushDevice(ctx, stale.ID, "old-token"); shared.ErrorCode(err) != shared.CodeNotFound {
			t.Fatalf("the old token's device after pruning: %v, want not_found", err)
		}
		if _, err := s.GetPushDevice(ctx, keep.ID, "token-a"); err != nil {
			t.Fatalf("the current token's device after pruning: %v", err)
		}
	})
}

func TestPushDevicesGoWithTheirWorkspace(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		w := mustWorkspace(t, s, "w")
		d := mustSavePushDevice(t, s, testSubscription(t, w.ID))
		if err := s.write.Exec("DELETE FROM workspaces WHERE id = ?", w.ID).Error; err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetPushDevice(ctx, d.ID, "token-a"); shared.ErrorCode(err) != shared.CodeNotFound {
			t.Fatalf("a device of a deleted workspace: %v, want not_found", err)
		}
	})
}

func TestPushDeviceBadSubscriptionsAreRefused(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		w := mustWorkspace(t, s, "w")
		cases := []struct {
			name   string
			change func(*PushSubscription)
			code   shared.Code
		}{
			{"a name longer than the bound", func(in *PushSubscription) { in.Name = strings.Repeat("n", shared.MaxDeviceNameBytes+1) }, shared.CodeBadRequest},
			{"a name that is not UTF-8", func(in *PushSubscription) { in.Name = "\xff" }, shared.CodeBadRequest},
			{"an http endpoint off loopback", func(in *PushSubscription) { in.Endpoint = "http://push.example.com/x" }, shared.CodeBadRequest},
			{"an endpoint that is no URL", func(in *PushSubscription) { in.Endpoint = "push.example.com/x" }, shared.CodeBadRequest},
			{"an endpoint with credentials", func(in *PushSubscription) { in.Endpoint = "https://u:p@push.example.com/x" }, shared.CodeBadRequest},
			{"an endpoint longer than the bound", func(in *PushSubscription) {
				in.Endpoint = "https://push.example.com/" + strings.Repeat("x", shared.MaxPushEndpointBytes)
			}, shared.CodeBadRequest},
			{"a p256dh that is not base64url", func(in *PushSubscription) { in.P256dh = "not base64!" }, shared.CodeBadRequest},
			{"a p256dh off the curve", func(in *PushSubscription) {
				in.P256dh = base64.RawURLEncoding.EncodeToString(append([]byte{4}, make([]byte, 64)...))
			}, shared.CodeBadRequest},
			{"an auth secret of 15 bytes", func(in *PushSubscription) { in.Auth = base64.RawURLEncoding.EncodeToString(make([]byte, 15)) }, shared.CodeBadRequest},
			{"no token", func(in *PushSubscription) { in.TokenDigest = "" }, shared.CodeBadRequest},
			{"an unknown workspace", func(in *PushSubscription) { in.WorkspaceID = "missing" }, shared.CodeNotFound},
		}
		for _, c := range cases {
			in := testSubscription(t, w.ID)
			c.change(&in)
			if _, err := s.SavePushDevice(ctx, in); shared.ErrorCode(err) != c.code {
				t.Errorf("%s: %v, want %s", c.name, err, c.code)
			}
		}
		devices, err := s.ListPushDevices(ctx, w.ID, "token-a")
		if err != nil || len(devices) != 0 {
			t.Fatalf("devices after refused subscriptions: %v, %v; want none", devices, err)
		}

		// What is accepted: a loopback http endpoint (a push service under
		// test), padded base64url keys, and a blank name.
		in := testSubscription(t, w.ID)
		in.Endpoint = fmt.Sprintf("http://127.0.0.1:%d/push/x", 4000)
		in.P256dh += strings.Repeat("=", (4-len(in.P256dh)%4)%4)
		in.Name = ""
		if d := mustSavePushDevice(t, s, in); d.Name != DefaultDeviceName || d.PushService != "127.0.0.1" {
			t.Fatalf("accepted device %+v", d.PushDevice)
		}
	})
}

// A browser's one subscription is a device of each workspace that turned
// notifications on; renewing it keeps the device, replaces its credential
// and leaves the other workspace's device alone, and the push service's
// "gone" for the old endpoint no longer removes the renewed device.
func TestPushDeviceIsPerWorkspaceAndMovesToItsRenewedSubscription(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s := MustOpen(t, dialect)
		w1, w2 := mustWorkspace(t, s, "one"), mustWorkspace(t, s, "two")
		in := testSubscription(t, w1.ID)
		first := mustSavePushDevice(t, s, in)
		in.WorkspaceID = w2.ID
		second := mustSavePushDevice(t, s, in)
		if first.ID == second.ID {
			t.Fatalf("one device %s for two workspaces", first.ID)
		}
		for _, w := range []string{w1.ID, w2.ID} {
			if ds, err := s.ListPushDevices(ctx, w, "token-a"); err != nil || len(ds) != 1 {
				t.Fatalf("devices of %s = %v, %v; want one", w, ds, err)
			}
		}

		renewed := testSubscription(t, w1.ID)
		moved, err := s.MovePushDevice(ctx, first.ID, "token-a", renewed.Endpoint, renewed.P256dh, renewed.Auth, "credential-new")
		if err != nil {
			t.Fatal(err)
		}
		if moved.ID != first.ID || moved.Endpoint != renewed.Endpoint || moved.CredentialDigest != "credential-new" || moved.Name != first.Name {
			t.Fatalf("moved = %+v; want %s at %s", moved, first.ID, renewed.Endpoint)
		}
		if _, err := s.MovePushDevice(ctx, first.ID, "token-b", renewed.Endpoint, renewed.P256dh, renewed.Auth, "x"); shared.ErrorCode(err) != shared.CodeNotFound {
			t.Fatalf("another token's move = %v; want not_found", err)
		}
		if _, err := s.MovePushDevice(ctx, first.ID, "token-a", "http://example.com/push", renewed.P256dh, renewed.Auth, "x"); shared.ErrorCode(err) != shared.CodeBadRequest {
			t.Fatalf("a bad endpoint = %v; want bad_request", err)
		}
		if dropped, err := s.DropPushDevice(ctx, first.ID, first.Endpoint); err != nil || dropped {
			t.Fatalf("drop at the old endpoint = %v, %v; want kept", dropped, err)
		}
		if dropped, err := s.DropPushDevice(ctx, second.ID, second.Endpoint); err != nil || !dropped {
			t.Fatalf("drop of the other workspace's device = %v, %v; want dropped", dropped, err)
		}
		if got, err := s.GetPushDevice(ctx, first.ID, "token-a"); err != nil || got.Endpoint != renewed.Endpoint {
			t.Fatalf("renewed device = %+v, %v", got, err)
		}
	})
}
