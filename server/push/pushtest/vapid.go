package pushtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/mail"
	"net/url"
	"strings"
	"time"
)

// maxTokenLifetime is the furthest exp RFC 8292 section 2 allows.
const maxTokenLifetime = 24 * time.Hour

// authError is a refused Authorization header: the status a push service
// answers and why.
type authError struct {
	status int
	reason string
}

func (e *authError) Error() string { return e.reason }

// unauthorized is a 401 with reason.
func unauthorized(format string, args ...any) *authError {
	return &authError{status: http.StatusUnauthorized, reason: fmt.Sprintf(format, args...)}
}

// checkVAPID checks a request's Authorization header ("vapid t=<JWT>,
// k=<key>", RFC 8292 section 3): the JWT is ES256-signed by k, k is want
// when want is set, aud is audience, exp is in the future and at most a
// day away, and sub is a mailto: address or an https: URL. It returns the
// sub.
func checkVAPID(header, want, audience string, now time.Time) (string, *authError) {
	scheme, params, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "vapid") {
		return "", unauthorized("no vapid Authorization")
	}
	var token, key string
	for p := range strings.SplitSeq(params, ",") {
		name, value, _ := strings.Cut(strings.TrimSpace(p), "=")
		switch name {
		case "t":
			token = value
		case "k":
			key = value
		}
	}
	if token == "" || key == "" {
		return "", unauthorized("the vapid Authorization lacks t or k")
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(key, "="))
	if err != nil {
		return "", unauthorized("k is not base64url")
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), raw)
	if err != nil {
		return "", unauthorized("k is not a P-256 public key")
	}
	if want != "" && base64.RawURLEncoding.EncodeToString(raw) != strings.TrimRight(want, "=") {
		return "", &authError{status: http.StatusForbidden, reason: "k is not the application server key of the subscription"}
	}

	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", unauthorized("t is not a JWS compact serialisation")
	}
	var head struct {
		Alg string `json:"alg"`
		Typ string `json:"typ"`
	}
	if err := decodeSegment(parts[0], &head); err != nil || head.Alg != "ES256" || head.Typ != "" && head.Typ != "JWT" {
		return "", unauthorized("the JWT header is not ES256")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return "", unauthorized("the JWT signature is not 64 bytes of base64url")
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	if !ecdsa.Verify(pub, digest[:], r, s) {
		return "", unauthorized("the JWT signature does not verify with k")
	}

	var claims struct {
		Aud string  `json:"aud"`
		Exp float64 `json:"exp"`
		Sub string  `json:"sub"`
	}
	if err := decodeSegment(parts[1], &claims); err != nil {
		return "", unauthorized("the JWT claims are not JSON")
	}
	if claims.Aud != audience {
		return "", unauthorized("aud %q is not the push service's origin %q", claims.Aud, audience)
	}
	exp := time.Unix(int64(claims.Exp), 0)
	if !exp.After(now) {
		return "", unauthorized("the JWT expired at %s", exp.UTC().Format(time.RFC3339))
	}
	if exp.After(now.Add(maxTokenLifetime)) {
		return "", unauthorized("exp %s is more than 24 hours away", exp.UTC().Format(time.RFC3339))
	}
	if !validSubscriber(claims.Sub) {
		return "", unauthorized("sub %q is neither a mailto: address nor an https: URL", claims.Sub)
	}
	return claims.Sub, nil
}

// decodeSegment decodes a JWT segment's JSON into v.
func decodeSegment(seg string, v any) error {
	raw, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}

// validSubscriber reports whether sub is a contact RFC 8292 section 2.1
// describes: a mailto: URI of one address or an https: URL.
func validSubscriber(sub string) bool {
	if addr, ok := strings.CutPrefix(sub, "mailto:"); ok {
		a, err := mail.ParseAddress(addr)
		return err == nil && a.Name == "" && a.Address == addr
	}
	u, err := url.Parse(sub)
	return err == nil && u.Scheme == "https" && u.Host != ""
}
