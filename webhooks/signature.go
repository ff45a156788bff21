package webhooks

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The headers of a signed request.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// SecretPrefix starts every secret; the rest is the base64 of the HMAC key.
const SecretPrefix = "whsec_"

// Tolerance is how far a request's timestamp may be from the receiver's clock, either way.
const Tolerance = 5 * time.Minute

// secretBytes is the size of the keys NewSecret makes.
const secretBytes = 32

// Errors of Verify and of the functions that take a secret.
var (
	// ErrSecret: the secret is not "whsec_" and the standard base64 of 24 to 64 bytes.
	ErrSecret = errors.New("webhooks: the secret is not whsec_ and the base64 of 24 to 64 bytes")
	// ErrMissingHeaders: webhook-id, webhook-timestamp or webhook-signature is absent or
	// empty, or given more than once.
	ErrMissingHeaders = errors.New("webhooks: webhook-id, webhook-timestamp and webhook-signature are each required once")
	// ErrTimestamp: webhook-timestamp is not Unix seconds, or is more than Tolerance from now.
	ErrTimestamp = errors.New("webhooks: webhook-timestamp is malformed or too far from the current time")
	// ErrSignature: no v1 signature of the request matches the secret.
	ErrSignature = errors.New("webhooks: no signature matches")
)

// NewSecret returns a new endpoint secret: "whsec_" and the standard base64 of 32 random bytes.
func NewSecret() (string, error) {
	var key [secretBytes]byte
	if _, err := rand.Read(key[:]); err != nil {
		return "", fmt.Errorf("webhooks: random secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(key[:]), nil
}

// key returns the HMAC key of secret.
func key(secret string) ([]byte, error) {
	enc, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return nil, ErrSecret
	}
	k, err := base64.StdEncoding.DecodeString(enc)
	if err != nil || len(k) < 24 || len(k) > 64 {
		return nil, ErrSecret
	}
	return k, nil
}

// CheckSecret reports whether secret is one NewSecret could have made: ErrSecret if not.
func CheckSecret(secret string) error {
	_, err := key(secret)
	return err
}

// Sign returns the webhook-signature value ("v1," and the base64 HMAC-SHA256) of a request
// with the given id, timestamp and body.
func Sign(secret, id string, timestamp time.Time, body []byte) (string, error) {
	k, err := key(secret)
	if err != nil {
		return "", err
	}
	return "v1," + base64.StdEncoding.EncodeToString(mac(k, id, strconv.FormatInt(timestamp.Unix(), 10), body)), nil
}

// SetHeaders sets the three headers of a request with id and body, sent at timestamp, signed
// with each of secrets (one, or two during a rotation).
func SetHeaders(h http.Header, id string, timestamp time.Time, body []byte, secrets ...string) error {
	if len(secrets) == 0 {
		return ErrSecret
	}
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		sig, err := Sign(s, id, timestamp, body)
		if err != nil {
			return err
		}
		sigs = append(sigs, sig)
	}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(timestamp.Unix(), 10))
	h.Set(HeaderSignature, strings.Join(sigs, " "))
	return nil
}

// Verify checks a received request: its headers h and its body exactly as received (before any
// JSON decoding). It returns nil when webhook-timestamp is within Tolerance of now and one of
// the v1 signatures of webhook-signature is the HMAC of secret; otherwise ErrSecret,
// ErrMissingHeaders, ErrTimestamp or ErrSignature. Signatures of other versions are skipped.
// The comparison takes the same time wherever the signatures differ.
func Verify(secret string, h http.Header, body []byte, now time.Time) error {
	k, err := key(secret)
	if err != nil {
		return err
	}
	id, okID := one(h, HeaderID)
	ts, okTS := one(h, HeaderTimestamp)
	sigs, okSig := one(h, HeaderSignature)
	if !okID || !okTS || !okSig {
		return ErrMissingHeaders
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(ts) > 12 {
		return ErrTimestamp
	}
	if d := now.Sub(time.Unix(sec, 0)); d > Tolerance || d < -Tolerance {
		return ErrTimestamp
	}
	want := mac(k, id, ts, body)
	match := false
	for _, s := range strings.Fields(sigs) {
		enc, ok := strings.CutPrefix(s, "v1,")
		if !ok {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(enc)
		if err != nil {
			continue
		}
		// Every signature is compared, so the time taken does not tell which one matched.
		if hmac.Equal(got, want) {
			match = true
		}
	}
	if !match {
		return ErrSignature
	}
	return nil
}

// one returns the single non-empty value of header name.
func one(h http.Header, name string) (string, bool) {
	v := h.Values(name)
	if len(v) != 1 || v[0] == "" {
		return "", false
	}
	return v[0], true
}

// mac is the HMAC-SHA256 with k of "<id>.<timestamp>.<body>".
func mac(k []byte, id, timestamp string, body []byte) []byte {
	m := hmac.New(sha256.New, k)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write([]byte(timestamp))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}
