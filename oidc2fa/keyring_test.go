package oidc2fa_test

import (
	"context"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/internal/testclock"
	"github.com/visid/visid/oidc2fa"
)

// RFC 8037 appendix A.1 and A.3: an Ed25519 private key and its JWK thumbprint.
const (
	rfc8037D   = "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"
	rfc8037X   = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
	rfc8037KID = "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
)

// RFC 8410 §10.3: an Ed25519 private key in PKCS #8, as openssl writes it.
const rfc8410PEM = `-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC
-----END PRIVATE KEY-----
`

// ringClock is a settable clock for KeyRingConfig.Now.
type ringClock = testclock.Clock

func newRingClock() *ringClock { return testclock.At(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)) }

func rfc8037Key(t *testing.T) ed25519.PrivateKey {
	t.Helper()
	seed, err := base64.RawURLEncoding.DecodeString(rfc8037D)
	require.NoError(t, err)
	return ed25519.NewKeyFromSeed(seed)
}

func ringTestKey(t testing.TB) ed25519.PrivateKey {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	return priv
}

// ringJWSHeader is the protected header of a compact JWS.
type ringJWSHeader struct {
	Alg string `json:"alg"`
	Typ string `json:"typ"`
	KID string `json:"kid"`
}

func ringHeaderOf(t *testing.T, token string) ringJWSHeader {
	t.Helper()
	b64, _, ok := strings.Cut(token, ".")
	require.True(t, ok, "token %q has no dot", token)
	raw, err := base64.RawURLEncoding.DecodeString(b64)
	require.NoError(t, err)
	var h ringJWSHeader
	require.NoError(t, json.Unmarshal(raw, &h))
	return h
}

// ringVerify verifies token with jwx against the key of keys whose kid its header names and
// returns the payload.
func ringVerify(t *testing.T, token string, keys []oidc2fa.PublicKey) ([]byte, error) {
	t.Helper()
	kid := ringHeaderOf(t, token).KID
	for _, k := range keys {
		if k.KID == kid {
			return jws.Verify([]byte(token), jws.WithKey(jwa.EdDSA, k.Key))
		}
	}
	return nil, fmt.Errorf("no key with kid %q among %d", kid, len(keys))
}

func ringKIDs(keys []oidc2fa.PublicKey) []string {
	kids := make([]string, len(keys))
	for i, k := range keys {
		kids[i] = k.KID
	}
	return kids
}

func TestKeyRingSignVerify(t *testing.T) {
	ctx := context.Background()
	ring, err := oidc2fa.NewKeyRing(oidc2fa.KeyRingConfig{})
	require.NoError(t, err)
	keys, err := ring.Keys(ctx, "acme")
	require.NoError(t, err)
	require.Len(t, keys, 1, "a zero config makes one key")
	assert.True(t, keys[0].Retired.IsZero())

	for _, payload := range []string{
		`{}`,
		`{"sub":"user_1","aud":"client_1"}`,
		`{"name":"` + strings.Repeat("ü", 500) + `"}`,
	} {
		token, err := ring.Sign(ctx, "acme", []byte(payload))
		require.NoError(t, err)
		assert.Equal(t, 2, strings.Count(token, "."), "compact serialization")

		got, err := ringVerify(t, token, keys)
		require.NoError(t, err)
		assert.Equal(t, payload, string(got))

		msg, err := jws.Parse([]byte(token))
		require.NoError(t, err)
		require.Len(t, msg.Signatures(), 1)
		h := msg.Signatures()[0].ProtectedHeaders()
		assert.Equal(t, jwa.EdDSA, h.Algorithm())
		assert.Equal(t, "JWT", h.Type())
		assert.Equal(t, keys[0].KID, h.KeyID())
		assert.Equal(t, ringJWSHeader{Alg: "EdDSA", Typ: "JWT", KID: keys[0].KID}, ringHeaderOf(t, token))
	}

	// Another key does not verify the token.
	token, err := ring.Sign(ctx, "acme", []byte(`{}`))
	require.NoError(t, err)
	other := ringTestKey(t).Public().(ed25519.PublicKey)
	_, err = jws.Verify([]byte(token), jws.WithKey(jwa.EdDSA, other))
	assert.Error(t, err)
}

// Each tenant signs with keys of its own, and its JWKS lists only those: a token of one tenant
// never verifies with another's keys. Keys given in the config are shared by every tenant.
func TestKeyRingKeysPerTenant(t *testing.T) {
	ctx := context.Background()
	ring, err := oidc2fa.NewKeyRing(oidc2fa.KeyRingConfig{})
	require.NoError(t, err)
	a, err := ring.Keys(ctx, "acme")
	require.NoError(t, err)
	b, err := ring.Keys(ctx, "globex")
	require.NoError(t, err)
	require.Len(t, a, 1)
	require.Len(t, b, 1)
	assert.NotEqual(t, a[0].KID, b[0].KID)
	tok, err := ring.Sign(ctx, "acme", []byte(`{}`))
	require.NoError(t, err)
	_, err = ringVerify(t, tok, a)
	assert.NoError(t, err)
	_, err = ringVerify(t, tok, b)
	assert.Error(t, err, "an acme token does not verify with globex's JWKS")
	_, err = ring.Sign(ctx, "", []byte(`{}`))
	assert.Error(t, err, "a token is always some tenant's")

	shared, err := oidc2fa.NewKeyRing(oidc2fa.KeyRingConfig{Keys: []ed25519.PrivateKey{ringTestKey(t)}})
	require.NoError(t, err)
	a, err = shared.Keys(ctx, "acme")
	require.NoError(t, err)
	b, err = shared.Keys(ctx, "globex")
	require.NoError(t, err)
	assert.Equal(t, a, b, "configured keys are shared")
}

func TestKeyRingKIDIsThumbprint(t *testing.T) {
	ctx := context.Background()
	ring, err := oidc2fa.NewKeyRing(oidc2fa.KeyRingConfig{Keys: []ed25519.PrivateKey{rfc8037Key(t)}})
	require.NoError(t, err)
	keys, err := ring.Keys(ctx, "")
	require.NoError(t, err)
	require.Len(t, keys, 1)
	assert.Equal(t, rfc8037KID, keys[0].KID, "RFC 8037 A.3")
	assert.Equal(t, rfc8037X, base64.RawURLEncoding.EncodeToString(keys[0].Key.(ed25519.PublicKey)))

	// Deterministic: another ring with the same key agrees, and so does Add.
	again, err := oidc2fa.NewKeyRing(oidc2fa.KeyRingConfig{})
	require.NoError(t, err)
	kid, err := again.Add(rfc8037Key(t))
	require.NoError(t, err)
	assert.Equal(t, rfc8037KID, kid)
}

func TestKeyRingRotate(t *testing.T) {
	ctx := context.Background()
	clock := newRingClock()
	ring, err := oidc2fa.NewKeyRing(oidc2fa.KeyRingConfig{Now: clock.Now, Retain: time.Hour, RotationDelay: 5 * time.Minute})
	require.NoError(t, err)
	before, err := ring.Keys(ctx, "acme")
	require.NoError(t, err)
	oldKID := before[0].KID
	oldToken, err := ring.Sign(ctx, "acme", []byte(`{"n":1}`))
	require.NoError(t, err)

	clock.Advance(10 * time.Minute)
	rotatedAt := clock.Now()
	newKIDs, err := ring.Rotate(ctx)
	require.NoError(t, err)
	require.Len(t, newKIDs, 1, "acme's one key")
	newKID := newKIDs[0]
	require.NotEqual(t, oldKID, newKID)

	// Published at once, signing after RotationDelay.
	keys, err := ring.Keys(ctx, "acme")
	require.NoError(t, err)
	assert.Equal(t, []string{oldKID, newKID}, ringKIDs(keys), "the signing key first, then the next one")
	assert.True(t, keys[0].Retired.IsZero() && keys[1].Retired.IsZero())
	tok, err := ring.Sign(ctx, "acme", []byte(`{"n":2}`))
	require.NoError(t, err)
	assert.Equal(t, oldKID, ringHeaderOf(t, tok).KID, "the old key signs until the delay has passed")

	clock.Advance(5*time.Minute - time.Nanosecond)
	tok, err = ring.Sign(ctx, "acme", []byte(`{"n":2}`))
	require.NoError(t, err)
	assert.Equal(t, oldKID, ringHeaderOf(t, tok).KID, "just before the delay has passed")
	clock.Advance(time.Nanosecond)
	newToken, err := ring.Sign(ctx, "acme", []byte(`{"n":2}`))
	require.NoError(t, err)
	assert.Equal(t, newKID, ringHeaderOf(t, newToken).KID, "the new key signs")
	activated := rotatedAt.Add(5 * time.Minute)

	keys, err = ring.Keys(ctx, "acme")
	require.NoError(t, err)
	assert.Equal(t, []string{newKID, oldKID}, ringKIDs(keys), "signing key first, then the retired one")
	assert.True(t, keys[0].Retired.IsZero())
	assert.Equal(t, activated, keys[1].Retired, "the old key stopped signing when the new one started")
	for _, tok := range []string{oldToken, newToken} {
		_, err := ringVerify(t, tok, keys)
		assert.NoError(t, err, "a token signed before or after the rotation verifies")
	}

	clock.Advance(time.Hour - time.Nanosecond)
	keys, err = ring.Keys(ctx, "acme")
	require.NoError(t, err)
	assert.Equal(t, []string{newKID, oldKID}, ringKIDs(keys), "still published just before Retain has passed")

	clock.Advance(time.Nanosecond)
	keys, err = ring.Keys(ctx, "acme")
	require.NoError(t, err)
	assert.Equal(t, []string{newKID}, ringKIDs(keys), "gone once Retain has passed")
	_, err = ringVerify(t, oldToken, keys)
	assert.Error(t, err)
	_, err = ringVerify(t, newToken, keys)
	assert.NoError(t, err)
}

// A negative RotationDelay makes a rotated key sign at once; a tenant's first key always does.
func TestKeyRingRotateAtOnce(t *testing.T) {
	ctx := context.Background()
	clock := newRingClock()
	ring, err := oidc2fa.NewKeyRing(oidc2fa.KeyRingConfig{Now: clock.Now, RotationDelay: -1})
	require.NoError(t, err)
	first, err := ring.RotateTenant(ctx, "acme")
	require.NoError(t, err)
	tok, err := ring.Sign(ctx, "acme", []byte(`{}`))
	require.NoError(t, err)
	assert.Equal(t, first[0], ringHeaderOf(t, tok).KID, "a tenant's first key signs at once")
	next, err := ring.RotateTenant(ctx, "acme")
	require.NoError(t, err)
	tok, err = ring.Sign(ctx, "acme", []byte(`{}`))
	require.NoError(t, err)
	assert.Equal(t, next[0], ringHeaderOf(t, tok).KID, "a negative delay: at once")
}

func TestKeyRingRotateTwice(t *testing.T) {
	ctx := context.Background()
	clock := newRingClock()
	ring, err := oidc2fa.NewKeyRing(oidc2fa.KeyRingConfig{Now: clock.Now}) // DefaultKeyRetention, DefaultRotationDelay
	require.NoError(t, err)
	k0, err := ring.Keys(ctx, "acme")
	require.NoError(t, err)
	clock.Advance(time.Hour)
	k1, err := ring.RotateTenant(ctx, "acme")
	require.NoError(t, err)
	clock.Advance(time.Hour)
	k2, err := ring.RotateTenant(ctx, "acme")
	require.NoError(t, err)
	keys, err := ring.Keys(ctx, "acme")
	require.NoError(t, err)
	assert.Equal(t, []string{k1[0], k2[0], k0[0].KID}, ringKIDs(keys), "signing, next, retired")

	clock.Advance(oidc2fa.DefaultRotationDelay)
	keys, err = ring.Keys(ctx, "acme")
	require.NoError(t, err)
	assert.Equal(t, []string{k2[0], k1[0], k0[0].KID}, ringKIDs(keys), "newest first")

	clock.Advance(oidc2fa.DefaultKeyRetention - time.Hour)
	keys, err = ring.Keys(ctx, "acme")
	require.NoError(t, err)
	assert.Equal(t, []string{k2[0], k1[0]}, ringKIDs(keys), "k0 was retired DefaultKeyRetention ago")

	clock.Advance(time.Hour)
	keys, err = ring.Keys(ctx, "acme")
	require.NoError(t, err)
	assert.Equal(t, []string{k2[0]}, ringKIDs(keys))
}

func TestKeyRingAdd(t *testing.T) {
	ctx := context.Background()
	clock := newRingClock()
	first, second := ringTestKey(t), ringTestKey(t)
	ring, err := oidc2fa.NewKeyRing(oidc2fa.KeyRingConfig{Now: clock.Now, Retain: time.Hour, Keys: []ed25519.PrivateKey{first}})
	require.NoError(t, err)
	keys, err := ring.Keys(ctx, "")
	require.NoError(t, err)
	firstKID := keys[0].KID

	kid, err := ring.Add(second)
	require.NoError(t, err)
	tok, err := ring.Sign(ctx, "", []byte(`{}`))
	require.NoError(t, err)
	assert.Equal(t, kid, ringHeaderOf(t, tok).KID)
	_, err = jws.Verify([]byte(tok), jws.WithKey(jwa.EdDSA, second.Public()))
	assert.NoError(t, err, "the added key signs")
	keys, err = ring.Keys(ctx, "")
	require.NoError(t, err)
	assert.Equal(t, []string{kid, firstKID}, ringKIDs(keys))

	t.Run("the signing key again changes nothing", func(t *testing.T) {
		again, err := ring.Add(second)
		require.NoError(t, err)
		assert.Equal(t, kid, again)
		after, err := ring.Keys(ctx, "")
		require.NoError(t, err)
		assert.Equal(t, keys, after)
	})

	t.Run("a retired key signs again", func(t *testing.T) {
		clock.Advance(time.Minute)
		back, err := ring.Add(first)
		require.NoError(t, err)
		assert.Equal(t, firstKID, back)
		after, err := ring.Keys(ctx, "")
		require.NoError(t, err)
		assert.Equal(t, []string{firstKID, kid}, ringKIDs(after), "listed once")
		assert.True(t, after[0].Retired.IsZero())
		assert.Equal(t, clock.Now(), after[1].Retired)
	})

	t.Run("invalid keys leave the ring unchanged", func(t *testing.T) {
		before, err := ring.Keys(ctx, "")
		require.NoError(t, err)
		bad := append(ed25519.PrivateKey(nil), second...)
		bad[40] ^= 1 // public half no longer matches the seed
		for name, k := range map[string]ed25519.PrivateKey{
			"nil":          nil,
			"short":        second[:32],
			"mismatched":   bad,
			"public bytes": append(ed25519.PrivateKey(nil), second[32:]...),
		} {
			_, err := ring.Add(k)
			assert.ErrorIs(t, err, oidc2fa.ErrInvalidKey, name)
		}
		after, err := ring.Keys(ctx, "")
		require.NoError(t, err)
		assert.Equal(t, before, after)
	})
}

func TestKeyRingConfig(t *testing.T) {
	ctx := context.Background()
	a, b := ringTestKey(t), ringTestKey(t)
	kidOf := func(priv ed25519.PrivateKey) string {
		r, err := oidc2fa.NewKeyRing(oidc2fa.KeyRingConfig{Keys: []ed25519.PrivateKey{priv}})
		require.NoError(t, err)
		keys, err := r.Keys(ctx, "")
		require.NoError(t, err)
		return keys[0].KID
	}
	tests := []struct {
		name     string
		cfg      oidc2fa.KeyRingConfig
		wantKIDs []string
		wantErr  error
	}{
		{name: "last key signs", cfg: oidc2fa.KeyRingConfig{Keys: []ed25519.PrivateKey{a, b}}, wantKIDs: []string{kidOf(b), kidOf(a)}},
		{name: "duplicate counts once", cfg: oidc2fa.KeyRingConfig{Keys: []ed25519.PrivateKey{a, b, a}}, wantKIDs: []string{kidOf(a), kidOf(b)}},
		{name: "invalid key", cfg: oidc2fa.KeyRingConfig{Keys: []ed25519.PrivateKey{a, a[:10]}}, wantErr: oidc2fa.ErrInvalidKey},
		{name: "negative retain", cfg: oidc2fa.KeyRingConfig{Retain: -time.Second}, wantErr: errRingAny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ring, err := oidc2fa.NewKeyRing(tt.cfg)
			if tt.wantErr != nil {
				require.Error(t, err)
				if tt.wantErr != errRingAny {
					assert.ErrorIs(t, err, tt.wantErr)
				}
				return
			}
			require.NoError(t, err)
			keys, err := ring.Keys(ctx, "")
			require.NoError(t, err)
			assert.Equal(t, tt.wantKIDs, ringKIDs(keys))
		})
	}

	t.Run("keys are copied", func(t *testing.T) {
		priv := append(ed25519.PrivateKey(nil), a...)
		ring, err := oidc2fa.NewKeyRing(oidc2fa.KeyRingConfig{Keys: []ed25519.PrivateKey{priv}})
		require.NoError(t, err)
		clear(priv)
		tok, err := ring.Sign(ctx, "", []byte(`{}`))
		require.NoError(t, err)
		_, err = jws.Verify([]byte(tok), jws.WithKey(jwa.EdDSA, a.Public()))
		assert.NoError(t, err)

		keys, err := ring.Keys(ctx, "")
		require.NoError(t, err)
		clear(keys[0].Key.(ed25519.PublicKey))
		keys, err = ring.Keys(ctx, "")
		require.NoError(t, err)
		assert.Equal(t, a.Public(), keys[0].Key, "Keys returns copies")
	})

	t.Run("canceled context", func(t *testing.T) {
		ring, err := oidc2fa.NewKeyRing(oidc2fa.KeyRingConfig{})
		require.NoError(t, err)
		canceled, cancel := context.WithCancel(ctx)
		cancel()
		_, err = ring.Sign(canceled, "", []byte(`{}`))
		assert.ErrorIs(t, err, context.Canceled)
		_, err = ring.Keys(canceled, "")
		assert.ErrorIs(t, err, context.Canceled)
		_, err = ring.Rotate(canceled)
		assert.ErrorIs(t, err, context.Canceled)
	})
}

// errRingAny in a table means: any error.
var errRingAny = errors.New("any error")

func ringPEMBlock(t *testing.T, typ string, der []byte) string {
	t.Helper()
	return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}))
}

func ringPKCS8(t *testing.T, key any) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	return der
}

func TestKeyRingParsePrivateKeysPEM(t *testing.T) {
	a, b := ringTestKey(t), ringTestKey(t)
	pemA, err := oidc2fa.MarshalPrivateKeyPEM(a)
	require.NoError(t, err)
	pemB, err := oidc2fa.MarshalPrivateKeyPEM(b)
	require.NoError(t, err)

	rsaKey, err := rsa.GenerateKey(rand.Reader, 1024)
	require.NoError(t, err)
	p256, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	x25519, err := ecdh.X25519().GenerateKey(rand.Reader)
	require.NoError(t, err)
	pubDER, err := x509.MarshalPKIXPublicKey(a.Public())
	require.NoError(t, err)
	ecDER, err := x509.MarshalECPrivateKey(p256)
	require.NoError(t, err)

	tests := []struct {
		name    string
		data    string
		want    []ed25519.PrivateKey
		wantErr error
	}{
		{name: "one key", data: string(pemA), want: []ed25519.PrivateKey{a}},
		{name: "two keys in order", data: string(pemA) + "\n" + string(pemB), want: []ed25519.PrivateKey{a, b}},
		{name: "text around blocks", data: "# signing keys\n" + string(pemA) + "comment\n" + string(pemB) + "\n\n", want: []ed25519.PrivateKey{a, b}},
		{name: "RFC 8410 openssl output", data: rfc8410PEM, want: []ed25519.PrivateKey{ed25519.NewKeyFromSeed(ringRFC8410Seed(t))}},
		{name: "RSA", data: ringPEMBlock(t, "PRIVATE KEY", ringPKCS8(t, rsaKey)), wantErr: oidc2fa.ErrInvalidKey},
		{name: "P-256", data: ringPEMBlock(t, "PRIVATE KEY", ringPKCS8(t, p256)), wantErr: oidc2fa.ErrInvalidKey},
		{name: "X25519", data: ringPEMBlock(t, "PRIVATE KEY", ringPKCS8(t, x25519)), wantErr: oidc2fa.ErrInvalidKey},
		{name: "P-256 SEC 1", data: ringPEMBlock(t, "EC PRIVATE KEY", ecDER), wantErr: oidc2fa.ErrInvalidKey},
		{name: "public key", data: ringPEMBlock(t, "PUBLIC KEY", pubDER), wantErr: oidc2fa.ErrInvalidKey},
		{name: "good then bad", data: string(pemA) + ringPEMBlock(t, "PRIVATE KEY", ringPKCS8(t, rsaKey)), wantErr: oidc2fa.ErrInvalidKey},
		{name: "corrupt DER", data: ringPEMBlock(t, "PRIVATE KEY", []byte("not DER")), wantErr: oidc2fa.ErrInvalidKey},
		{name: "garbage", data: "this is not PEM", wantErr: errRingAny},
		{name: "empty", data: "", wantErr: errRingAny},
		{name: "a JWK", data: `{"kty":"OKP","crv":"Ed25519","d":"` + rfc8037D + `","x":"` + rfc8037X + `"}`, wantErr: errRingAny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := oidc2fa.ParsePrivateKeysPEM([]byte(tt.data))
			if tt.wantErr != nil {
				require.Error(t, err)
				if tt.wantErr != errRingAny {
					assert.ErrorIs(t, err, tt.wantErr)
				}
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}

	t.Run("MarshalPrivateKeyPEM rejects a short key", func(t *testing.T) {
		_, err := oidc2fa.MarshalPrivateKeyPEM(a[:32])
		assert.ErrorIs(t, err, oidc2fa.ErrInvalidKey)
	})
}

// ringRFC8410Seed is the seed inside rfc8410PEM: the last 32 bytes of its DER.
func ringRFC8410Seed(t *testing.T) []byte {
	t.Helper()
	block, _ := pem.Decode([]byte(rfc8410PEM))
	require.NotNil(t, block)
	return block.Bytes[len(block.Bytes)-32:]
}

func TestKeyRingParsePrivateKeysJWK(t *testing.T) {
	a, b := ringTestKey(t), ringTestKey(t)
	jwkJSON := func(raw any, set ...func(jwk.Key)) string {
		t.Helper()
		k, err := jwk.FromRaw(raw)
		require.NoError(t, err)
		for _, f := range set {
			f(k)
		}
		out, err := json.Marshal(k)
		require.NoError(t, err)
		return string(out)
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 1024)
	require.NoError(t, err)
	p256, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	withAlg := func(alg string) func(jwk.Key) {
		return func(k jwk.Key) { require.NoError(t, k.Set(jwk.AlgorithmKey, alg)) }
	}
	rfcJWK := `{"kty":"OKP","crv":"Ed25519","d":"` + rfc8037D + `","x":"` + rfc8037X + `"}`

	tests := []struct {
		name    string
		data    string
		want    []ed25519.PrivateKey
		wantErr error
	}{
		{name: "RFC 8037 key", data: rfcJWK, want: []ed25519.PrivateKey{rfc8037Key(t)}},
		{name: "one key", data: jwkJSON(a), want: []ed25519.PrivateKey{a}},
		{name: "with alg EdDSA and a kid", data: jwkJSON(a, withAlg("EdDSA"), func(k jwk.Key) { _ = k.Set(jwk.KeyIDKey, "mine") }), want: []ed25519.PrivateKey{a}},
		{name: "set in order", data: `{"keys":[` + jwkJSON(a) + `,` + jwkJSON(b) + `]}`, want: []ed25519.PrivateKey{a, b}},
		{name: "public key", data: jwkJSON(a.Public()), wantErr: oidc2fa.ErrInvalidKey},
		{name: "set with a public key", data: `{"keys":[` + jwkJSON(a) + `,` + jwkJSON(b.Public()) + `]}`, wantErr: oidc2fa.ErrInvalidKey},
		{name: "RSA", data: jwkJSON(rsaKey), wantErr: oidc2fa.ErrInvalidKey},
		{name: "P-256", data: jwkJSON(p256), wantErr: oidc2fa.ErrInvalidKey},
		{name: "symmetric", data: `{"kty":"oct","k":"c2VjcmV0c2VjcmV0c2VjcmV0"}`, wantErr: oidc2fa.ErrInvalidKey},
		{name: "X25519", data: `{"kty":"OKP","crv":"X25519","d":"dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LCo","x":"hSDwCYkwp1R0i33ctD73Wg2_Og0mOBr066SpjqqbTmo"}`, wantErr: oidc2fa.ErrInvalidKey},
		{name: "alg RS256", data: jwkJSON(a, withAlg("RS256")), wantErr: oidc2fa.ErrInvalidKey},
		{name: "x does not match d", data: `{"kty":"OKP","crv":"Ed25519","d":"` + rfc8037D + `","x":"` + base64.RawURLEncoding.EncodeToString(b.Public().(ed25519.PublicKey)) + `"}`, wantErr: errRingAny},
		{name: "empty set", data: `{"keys":[]}`, wantErr: errRingAny},
		{name: "garbage", data: `not json`, wantErr: errRingAny},
		{name: "empty", data: ``, wantErr: errRingAny},
		{name: "PEM", data: rfc8410PEM, wantErr: errRingAny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := oidc2fa.ParsePrivateKeysJWK([]byte(tt.data))
			if tt.wantErr != nil {
				require.Error(t, err)
				if tt.wantErr != errRingAny {
					assert.ErrorIs(t, err, tt.wantErr)
				}
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestKeyRingConcurrentSignDuringRotate(t *testing.T) {
	ctx := context.Background()
	ring, err := oidc2fa.NewKeyRing(oidc2fa.KeyRingConfig{})
	require.NoError(t, err)
	_, err = ring.Keys(ctx, "acme") // acme's first key
	require.NoError(t, err)

	const signers, perSigner, rotations = 4, 50, 20
	tokens := make(chan string, signers*perSigner)
	errs := make(chan error, signers*perSigner+rotations)
	var wg sync.WaitGroup
	for range signers {
		wg.Go(func() {
			for range perSigner {
				tok, err := ring.Sign(ctx, "acme", []byte(`{"sub":"user_1"}`))
				if err != nil {
					errs <- err
					continue
				}
				tokens <- tok
			}
		})
	}
	wg.Go(func() {
		for range rotations {
			if _, err := ring.Rotate(ctx); err != nil {
				errs <- err
			}
			if _, err := ring.Keys(ctx, "acme"); err != nil {
				errs <- err
			}
		}
	})
	wg.Wait()
	close(tokens)
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	keys, err := ring.Keys(ctx, "acme")
	require.NoError(t, err)
	assert.Len(t, keys, 1+rotations, "every retired key is still within DefaultKeyRetention")
	n := 0
	for tok := range tokens {
		_, err := ringVerify(t, tok, keys)
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, signers*perSigner, n)
}

func ExampleNewKeyRing() {
	ctx := context.Background()

	// A real service generates its key once and keeps the PEM in a secret store or file;
	// here it is derived from a fixed seed so the output is stable.
	seed := sha256.Sum256([]byte("example seed, never use a constant key"))
	keyPEM, err := oidc2fa.MarshalPrivateKeyPEM(ed25519.NewKeyFromSeed(seed[:]))
	if err != nil {
		panic(err)
	}

	keys, err := oidc2fa.ParsePrivateKeysPEM(keyPEM) // the last key of the file signs
	if err != nil {
		panic(err)
	}
	ring, err := oidc2fa.NewKeyRing(oidc2fa.KeyRingConfig{
		Keys:   keys,
		Retain: 2 * time.Hour, // at least the ID token lifetime
	})
	if err != nil {
		panic(err)
	}

	token, err := ring.Sign(ctx, "acme", []byte(`{"sub":"user_1"}`))
	if err != nil {
		panic(err)
	}
	published, err := ring.Keys(ctx, "acme")
	if err != nil {
		panic(err)
	}
	payload, err := jws.Verify([]byte(token), jws.WithKey(jwa.EdDSA, published[0].Key))
	if err != nil {
		panic(err)
	}
	fmt.Println("kid:", published[0].KID)
	fmt.Println("verified payload:", string(payload))

	if _, err := ring.Rotate(ctx); err != nil {
		panic(err)
	}
	published, err = ring.Keys(ctx, "acme")
	if err != nil {
		panic(err)
	}
	fmt.Println("published keys after Rotate:", len(published))
	// Output:
	// kid: wD9hEwB3xMFQRnUiQwSg3Vi_bce0SaTudWWbYa9FXz8
	// verified payload: {"sub":"user_1"}
	// published keys after Rotate: 2
}
