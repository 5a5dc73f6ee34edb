package pushtest

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	webpush "github.com/SherClockHolmes/webpush-go"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var b64 = base64.RawURLEncoding

// The example of RFC 8291 section 5, with the keys of its appendix A.
const (
	rfcUAPrivate = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
	rfcAuth      = "BTBZMqHH6r4Tts7J_aSIgg"
	rfcBody      = "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
	rfcPlaintext = "When I grow up, I want to be a watermelon"
)

func TestDecryptOpensTheExampleOfRFC8291(t *testing.T) {
	priv, err := b64.DecodeString(rfcUAPrivate)
	require.NoError(t, err)
	ua, err := ecdh.P256().NewPrivateKey(priv)
	require.NoError(t, err)
	auth, _ := b64.DecodeString(rfcAuth)
	body, _ := b64.DecodeString(rfcBody)

	got, err := decrypt(body, ua, auth)
	require.NoError(t, err)
	require.Equal(t, rfcPlaintext, string(got))

	// Any flipped bit of the record, or another auth secret, fails.
	tampered := bytes.Clone(body)
	tampered[len(tampered)-20] ^= 1
	_, err = decrypt(tampered, ua, auth)
	require.ErrorContains(t, err, "does not decrypt")
	_, err = decrypt(body, ua, make([]byte, 16))
	require.ErrorContains(t, err, "does not decrypt")
}

func TestDecryptRefusesARecordWithoutTheLastRecordDelimiter(t *testing.T) {
	ua, err := ecdh.P256().GenerateKey(rand.Reader)
	require.NoError(t, err)
	auth := make([]byte, 16)
	rand.Read(auth)

	got, err := decrypt(seal(t, ua.PublicKey(), auth, []byte("hi\x02\x00\x00")), ua, auth)
	require.NoError(t, err)
	require.Equal(t, "hi", string(got))

	for name, record := range map[string][]byte{
		"a record delimiter that is not the last": []byte("hi\x01\x00"),
		"no delimiter at all":                     []byte("hi"),
		"only padding":                            {0, 0, 0},
	} {
		_, err := decrypt(seal(t, ua.PublicKey(), auth, record), ua, auth)
		require.ErrorContains(t, err, "delimiter", name)
	}
}

// seal encrypts record (data, delimiter and padding as given) for ua and
// auth as one aes128gcm record, so that a test can make records that
// webpush-go would not.
func seal(t *testing.T, ua *ecdh.PublicKey, auth, record []byte) []byte {
	t.Helper()
	as, err := ecdh.P256().GenerateKey(rand.Reader)
	require.NoError(t, err)
	secret, err := as.ECDH(ua)
	require.NoError(t, err)
	salt := make([]byte, 16)
	rand.Read(salt)
	ikm, err := hkdf.Key(sha256.New, secret, auth, "WebPush: info\x00"+string(ua.Bytes())+string(as.PublicKey().Bytes()), 32)
	require.NoError(t, err)
	cek, _ := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: aes128gcm\x00", 16)
	nonce, _ := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: nonce\x00", 12)
	block, _ := aes.NewCipher(cek)
	gcm, _ := cipher.NewGCM(block)
	header := binary.BigEndian.AppendUint32(salt, 4096)
	header = append(header, 65)
	header = append(header, as.PublicKey().Bytes()...)
	return gcm.Seal(header, nonce, record, nil)
}

// vapidPair is an application server's VAPID key pair as webpush-go
// takes it.
type vapidPair struct{ public, private string }

func newVAPID(t *testing.T) vapidPair {
	t.Helper()
	private, public, err := webpush.GenerateVAPIDKeys()
	require.NoError(t, err)
	return vapidPair{public: public, private: private}
}

// capturing answers every request with 201 without sending it, keeping
// the last one: a push as webpush-go makes it, to replay or tamper with.
type capturing struct {
	header http.Header
	body   []byte
}

func (c *capturing) RoundTrip(r *http.Request) (*http.Response, error) {
	c.header = r.Header.Clone()
	c.body, _ = io.ReadAll(r.Body)
	return &http.Response{StatusCode: http.StatusCreated, Body: http.NoBody, Request: r}, nil
}

// pushOf returns the request webpush-go makes to push payload to sub,
// signed with keys.
func pushOf(t *testing.T, sub *Subscription, keys vapidPair, payload string) (http.Header, []byte) {
	t.Helper()
	c := &capturing{}
	resp, err := webpush.SendNotificationWithContext(context.Background(), []byte(payload),
		&webpush.Subscription{Endpoint: sub.Endpoint, Keys: webpush.Keys{P256dh: sub.P256dh, Auth: sub.Auth}},
		&webpush.Options{
			HTTPClient: &http.Client{Transport: c}, Subscriber: "herd@localhost", TTL: 60,
			Urgency: webpush.UrgencyHigh, Topic: "task-topic", VAPIDPublicKey: keys.public, VAPIDPrivateKey: keys.private,
		})
	require.NoError(t, err)
	resp.Body.Close()
	return c.header, c.body
}

// post sends a push request to endpoint and returns the status.
func post(t *testing.T, endpoint string, header http.Header, body []byte) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header = header
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

func TestAPushFromWebPushGoIsDecryptedWithItsHeaders(t *testing.T) {
	s := New(t)
	keys := newVAPID(t)
	s.ExpectApplicationKey(keys.public)
	sub := s.NewSubscription()
	header, body := pushOf(t, sub, keys, `{"kind":"test"}`)

	require.Equal(t, http.StatusCreated, post(t, sub.Endpoint, header, body))
	msgs, err := sub.WaitMessages(t.Context(), 1)
	require.NoError(t, err)
	m := msgs[0]
	require.Equal(t, `{"kind":"test"}`, string(m.Plaintext))
	require.Equal(t, 60, m.TTL)
	require.Equal(t, "high", m.Urgency)
	require.Equal(t, "task-topic", m.Topic)
	require.Equal(t, "mailto:herd@localhost", m.Subscriber)
	require.False(t, m.At.IsZero())

	j, err := json.Marshal(sub.ToJSON())
	require.NoError(t, err)
	require.JSONEq(t, `{"endpoint":"`+sub.Endpoint+`","expirationTime":null,"keys":{"p256dh":"`+sub.P256dh+`","auth":"`+sub.Auth+`"}}`, string(j))
	require.True(t, strings.HasPrefix(sub.Endpoint, "http://127.0.0.1:"), sub.Endpoint)
}

// token signs claims as an ES256 JWT with key and returns the
// Authorization header naming key.
func token(t *testing.T, key *ecdsa.PrivateKey, claims map[string]any) string {
	t.Helper()
	head := b64.EncodeToString([]byte(`{"typ":"JWT","alg":"ES256"}`))
	c, err := json.Marshal(claims)
	require.NoError(t, err)
	input := head + "." + b64.EncodeToString(c)
	digest := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, key, digest[:])
	require.NoError(t, err)
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	pub, err := key.PublicKey.Bytes()
	require.NoError(t, err)
	return "vapid t=" + input + "." + b64.EncodeToString(sig) + ", k=" + b64.EncodeToString(pub)
}

func TestRequestsThatFailAPushServicesChecksAreRefusedAndRecorded(t *testing.T) {
	s := New(t)
	keys := newVAPID(t)
	sub := s.NewSubscription()
	signer, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	claims := func(change func(map[string]any)) map[string]any {
		c := map[string]any{"aud": s.Origin(), "exp": time.Now().Add(time.Hour).Unix(), "sub": "mailto:herd@localhost"}
		change(c)
		return c
	}
	other := newVAPID(t)
	_, otherKey, _ := strings.Cut(func() string { h, _ := pushOf(t, sub, other, "x"); return h.Get("Authorization") }(), ", k=")

	cases := []struct {
		name   string
		change func(h http.Header, body []byte) []byte
		status int
		reason string
	}{
		{"no Authorization", func(h http.Header, b []byte) []byte { h.Del("Authorization"); return b }, 401, "no vapid"},
		{"a signature that is not the key's", func(h http.Header, b []byte) []byte {
			a := h.Get("Authorization")
			i := strings.Index(a, ", k=") - 2
			flip := byte('A')
			if a[i] == 'A' {
				flip = 'B'
			}
			h.Set("Authorization", a[:i]+string(flip)+a[i+1:])
			return b
		}, 401, "signature"},
		{"a key other than the one that signed", func(h http.Header, b []byte) []byte {
			a, _, _ := strings.Cut(h.Get("Authorization"), ", k=")
			h.Set("Authorization", a+", k="+otherKey)
			return b
		}, 401, "does not verify"},
		{"a tampered body", func(h http.Header, b []byte) []byte { b[len(b)-1] ^= 0x80; return b }, 400, "does not decrypt"},
		{"a body cut short", func(h http.Header, b []byte) []byte { return b[:30] }, 400, "keyid"},
		{"a body larger than 4 KiB", func(h http.Header, b []byte) []byte { return append(b, 0) }, 413, "larger"},
		{"no TTL", func(h http.Header, b []byte) []byte { h.Del("TTL"); return b }, 400, "TTL"},
		{"an unknown Urgency", func(h http.Header, b []byte) []byte { h.Set("Urgency", "urgent"); return b }, 400, "Urgency"},
		{"a Topic of 33 characters", func(h http.Header, b []byte) []byte { h.Set("Topic", strings.Repeat("t", 33)); return b }, 400, "Topic"},
		{"another content coding", func(h http.Header, b []byte) []byte { h.Set("Content-Encoding", "aesgcm"); return b }, 400, "aes128gcm"},
		{"an aud of another origin", func(h http.Header, b []byte) []byte {
			h.Set("Authorization", token(t, signer, claims(func(c map[string]any) { c["aud"] = "https://fcm.googleapis.com" })))
			return b
		}, 401, "aud"},
		{"an expired token", func(h http.Header, b []byte) []byte {
			h.Set("Authorization", token(t, signer, claims(func(c map[string]any) { c["exp"] = time.Now().Add(-time.Minute).Unix() })))
			return b
		}, 401, "expired"},
		{"a token for more than a day", func(h http.Header, b []byte) []byte {
			h.Set("Authorization", token(t, signer, claims(func(c map[string]any) { c["exp"] = time.Now().Add(25 * time.Hour).Unix() })))
			return b
		}, 401, "24 hours"},
		{"no sub", func(h http.Header, b []byte) []byte {
			h.Set("Authorization", token(t, signer, claims(func(c map[string]any) { delete(c, "sub") })))
			return b
		}, 401, "sub"},
		{"a sub of mailto: twice", func(h http.Header, b []byte) []byte {
			h.Set("Authorization", token(t, signer, claims(func(c map[string]any) { c["sub"] = "mailto:mailto:herd@localhost" })))
			return b
		}, 401, "sub"},
	}
	for _, c := range cases {
		header, body := pushOf(t, sub, keys, "payload")
		before := len(s.Requests())
		require.Equal(t, c.status, post(t, sub.Endpoint, header, c.change(header, body)), c.name)
		log := s.Requests()
		require.Len(t, log, before+1, c.name)
		got := log[before]
		require.Equal(t, c.status, got.Status, c.name)
		require.Contains(t, got.Reason, c.reason, c.name)
		require.Nil(t, got.Message, c.name)
	}

	// A token of the right shape from a key herd did not subscribe with
	// is forbidden once the service knows the subscription's key.
	header, body := pushOf(t, sub, keys, "payload")
	require.Equal(t, http.StatusCreated, post(t, sub.Endpoint, header, body))
	s.ExpectApplicationKey(keys.public)
	header, body = pushOf(t, sub, other, "payload")
	require.Equal(t, http.StatusForbidden, post(t, sub.Endpoint, header, body))
	require.Len(t, sub.Messages(), 1)

	// An endpoint the service never made is not found.
	header, body = pushOf(t, sub, keys, "payload")
	require.Equal(t, http.StatusNotFound, post(t, s.Origin()+"/push/unknown", header, body))
}

func TestScriptedAnswersComeAfterTheAuthorizationCheck(t *testing.T) {
	s := New(t)
	keys := newVAPID(t)
	sub := s.NewSubscription()
	s.Script(sub, Answer{Status: http.StatusTooManyRequests, RetryAfter: "7"}, 2)
	s.Script(sub, Answer{Status: http.StatusGone}, 1)

	bad, body := pushOf(t, sub, keys, "x")
	bad.Del("Authorization")
	require.Equal(t, http.StatusUnauthorized, post(t, sub.Endpoint, bad, body))

	for _, want := range []int{429, 429, 410, 201} {
		header, body := pushOf(t, sub, keys, "x")
		require.Equal(t, want, post(t, sub.Endpoint, header, body))
	}
	got, err := sub.WaitRequests(t.Context(), 5)
	require.NoError(t, err)
	var statuses []int
	for _, r := range got {
		statuses = append(statuses, r.Status)
	}
	require.Equal(t, []int{401, 429, 429, 410, 201}, statuses)

	s.Script(sub, Answer{Status: http.StatusNotFound}, Always)
	for range 3 {
		header, body := pushOf(t, sub, keys, "x")
		require.Equal(t, http.StatusNotFound, post(t, sub.Endpoint, header, body))
	}
}

func TestWaitEndsWithItsContext(t *testing.T) {
	s := New(t)
	sub := s.NewSubscription()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := sub.WaitMessages(ctx, 1)
	require.ErrorIs(t, err, context.Canceled)
}
