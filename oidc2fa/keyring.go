package oidc2fa

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"

	"github.com/visid/visid/store"
)

// DefaultKeyRetention is how long a KeyRing keeps publishing a retired key when
// KeyRingConfig.Retain is zero: twice DefaultIDTokenLifetime, so every token a key signed just
// before a rotation expires while the key is still in the JWKS, with room for clock skew. A
// provider whose Config.IDTokenLifetime is longer than about 1h55m needs a larger Retain.
const DefaultKeyRetention = 2 * time.Hour

// ErrInvalidKey is returned, wrapped, for a key that is not a well-formed Ed25519 private key:
// another key type (RSA, P-256, X25519, …), a public key where a private one is needed, a key of
// the wrong length or one whose public half does not match its seed.
var ErrInvalidKey = errors.New("oidc2fa: not a valid Ed25519 private key")

// KeyRingConfig configures NewKeyRing. The zero value is usable: one fresh key, the real clock
// and DefaultKeyRetention.
type KeyRingConfig struct {
	// Now returns the current time; it decides when a retired key leaves Keys. Nil means
	// time.Now.
	Now func() time.Time

	// Retain is how long a key stays in Keys after it stopped signing. It must be at least the
	// longest ID token lifetime the provider uses (Config.IDTokenLifetime, plus the clock skew
	// relying parties allow), or tokens that are still valid stop verifying once a relying
	// party refetches the JWKS; the KeyRing cannot check this itself. Zero means
	// DefaultKeyRetention; negative is an error.
	Retain time.Duration

	// Keys are the keys to start with, oldest first: the last one signs, the earlier ones only
	// verify and are retired at construction, exactly as if each had been passed to Add in turn
	// (so they leave Keys once Retain has passed). A key given twice counts once, at its last
	// position. Nil or empty means one freshly generated key, which is lost when the process
	// ends: give keys (ParsePrivateKeysPEM, ParsePrivateKeysJWK) whenever tokens must outlive a
	// restart or several instances serve the same issuer.
	Keys []ed25519.PrivateKey
}

// KeyRing is the default Signer: Ed25519 keys held in memory. The newest key signs; a key that
// stopped signing stays published in Keys for the configured retention, so tokens it signed keep
// verifying.
//
// One KeyRing serves every tenant with the same key set: Sign and Keys ignore their tenant
// argument. Tenants are separated by the issuer and audience inside the tokens, not by keys; a
// host that wants keys per tenant implements Signer itself.
//
// Each key's kid is its RFC 7638 JWK thumbprint (SHA-256, base64url), so instances that load the
// same key agree on its kid. Rotate and Add change only this instance: several instances rotate
// together by loading the same new key (last in the key file) and restarting or calling Add.
//
// A KeyRing is safe for concurrent use. It starts no goroutines: retired keys are dropped lazily,
// by time, when Keys, Rotate or Add runs.
type KeyRing struct {
	now    func() time.Time
	retain time.Duration
	signer jws.Signer // jwx's EdDSA signer; stateless

	mu      sync.RWMutex
	current *ringKey
	retired []*ringKey // newest first

	// store, when the ring was loaded with LoadKeyRing, keeps the keys.
	store store.SigningKeys
}

var _ Signer = (*KeyRing)(nil)

// ringKey is one key with everything Sign needs computed once.
type ringKey struct {
	kid  string
	priv ed25519.PrivateKey
	pub  ed25519.PublicKey
	// header is the base64url-encoded protected header, {"alg":"EdDSA","kid":…,"typ":"JWT"}.
	header  string
	retired time.Time // zero while signing
}

// NewKeyRing returns a KeyRing configured by cfg. It fails when Retain is negative or a key in
// Keys is not a valid Ed25519 private key (ErrInvalidKey).
func NewKeyRing(cfg KeyRingConfig) (*KeyRing, error) {
	r, err := newKeyRing(cfg)
	if err != nil {
		return nil, err
	}
	keys := cfg.Keys
	if len(keys) == 0 {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("oidc2fa: generate key: %w", err)
		}
		keys = []ed25519.PrivateKey{priv}
	}
	now := r.now()
	for i, priv := range keys {
		k, err := newRingKey(priv)
		if err != nil {
			return nil, fmt.Errorf("%w (KeyRingConfig.Keys[%d])", err, i)
		}
		r.install(k, now)
	}
	return r, nil
}

// newKeyRing returns a KeyRing of cfg without keys.
func newKeyRing(cfg KeyRingConfig) (*KeyRing, error) {
	if cfg.Retain < 0 {
		return nil, fmt.Errorf("oidc2fa: KeyRingConfig.Retain is negative (%v)", cfg.Retain)
	}
	signer, err := jws.NewSigner(jwa.EdDSA)
	if err != nil {
		return nil, fmt.Errorf("oidc2fa: EdDSA signer: %w", err)
	}
	r := &KeyRing{now: cfg.Now, retain: cfg.Retain, signer: signer}
	if r.now == nil {
		r.now = time.Now
	}
	if r.retain == 0 {
		r.retain = DefaultKeyRetention
	}
	return r, nil
}

// Sign implements Signer. It signs with the current key, whatever the tenant, and never blocks
// on Rotate or Add for longer than it takes to read one pointer.
func (r *KeyRing) Sign(ctx context.Context, _ string, payload []byte) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	r.mu.RLock()
	k := r.current
	r.mu.RUnlock()

	// The signing input, header "." base64url(payload), goes into a buffer big enough for the
	// whole token, which is then completed in place with "." and the signature.
	enc := base64.RawURLEncoding
	buf := make([]byte, 0, len(k.header)+1+enc.EncodedLen(len(payload))+1+enc.EncodedLen(ed25519.SignatureSize))
	buf = append(buf, k.header...)
	buf = append(buf, '.')
	buf = enc.AppendEncode(buf, payload)
	sig, err := r.signer.Sign(buf, k.priv)
	if err != nil {
		return "", fmt.Errorf("oidc2fa: sign: %w", err)
	}
	buf = append(buf, '.')
	buf = enc.AppendEncode(buf, sig)
	return string(buf), nil
}

// Keys implements Signer, whatever the tenant. It returns the signing key first (Retired zero),
// then the retired keys whose retention has not yet passed, most recently retired first. The
// returned keys are copies the caller may keep.
func (r *KeyRing) Keys(ctx context.Context, _ string) ([]PublicKey, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	now := r.now()
	r.mu.RLock()
	defer r.mu.RUnlock()
	keys := make([]PublicKey, 0, 1+len(r.retired))
	keys = append(keys, r.current.public())
	for _, k := range r.retired {
		if r.published(k, now) {
			keys = append(keys, k.public())
		}
	}
	return keys, nil
}

// Rotate generates a new key, which signs from now on, and returns its kid. The key signing until
// now is retired: it stays in Keys until Retain has passed. The new key exists only in this
// process (see KeyRing for several instances). A relying party that caches the JWKS and does not
// refetch it on an unknown kid cannot verify the new key's tokens until its cache expires
// (Config.JWKSMaxAge); go-oidc's remote key set does refetch.
func (r *KeyRing) Rotate(ctx context.Context) (kid string, err error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", fmt.Errorf("oidc2fa: generate key: %w", err)
	}
	if r.store != nil {
		return r.addStored(ctx, priv)
	}
	return r.Add(priv)
}

// Add makes priv the signing key and returns its kid; the key signing until now is retired as by
// Rotate. A ring from LoadKeyRing stores the key and the retirement in its store. Adding the key that already signs changes nothing; adding a retired key makes it sign
// again. An invalid key is an error wrapping ErrInvalidKey and leaves the ring unchanged.
func (r *KeyRing) Add(priv ed25519.PrivateKey) (kid string, err error) {
	if r.store != nil {
		return r.addStored(context.Background(), priv)
	}
	k, err := newRingKey(priv)
	if err != nil {
		return "", err
	}
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.install(k, now)
	return k.kid, nil
}

// install makes k the signing key at time now. The caller holds r.mu or owns r exclusively.
func (r *KeyRing) install(k *ringKey, now time.Time) {
	if r.current != nil && r.current.kid == k.kid {
		return
	}
	retired := make([]*ringKey, 0, len(r.retired)+1)
	if r.current != nil {
		old := *r.current
		old.retired = now
		retired = append(retired, &old)
	}
	for _, rk := range r.retired {
		if rk.kid != k.kid && r.published(rk, now) {
			retired = append(retired, rk)
		}
	}
	r.current, r.retired = k, retired
}

// published reports whether the retired key k is still in Keys at time now.
func (r *KeyRing) published(k *ringKey, now time.Time) bool {
	return now.Before(k.retired.Add(r.retain))
}

func (k *ringKey) public() PublicKey {
	return PublicKey{KID: k.kid, Key: bytes.Clone(k.pub), Retired: k.retired}
}

// newRingKey checks priv, copies it and computes its kid and protected header.
func newRingKey(priv ed25519.PrivateKey) (*ringKey, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("%w: %d bytes, want %d", ErrInvalidKey, len(priv), ed25519.PrivateKeySize)
	}
	// Rebuilding from the seed copies the key, and a public half that does not match the seed
	// would make every signature invalid.
	fresh := ed25519.NewKeyFromSeed(priv.Seed())
	if !bytes.Equal(fresh, priv) {
		return nil, fmt.Errorf("%w: public half does not match the seed", ErrInvalidKey)
	}
	pub := fresh.Public().(ed25519.PublicKey)
	kid, err := keyID(pub)
	if err != nil {
		return nil, err
	}
	header, err := json.Marshal(struct {
		Alg string `json:"alg"`
		KID string `json:"kid"`
		Typ string `json:"typ"`
	}{Alg: jwa.EdDSA.String(), KID: kid, Typ: "JWT"})
	if err != nil {
		return nil, fmt.Errorf("oidc2fa: protected header: %w", err)
	}
	return &ringKey{
		kid:    kid,
		priv:   fresh,
		pub:    pub,
		header: base64.RawURLEncoding.EncodeToString(header),
	}, nil
}

// keyID returns pub's RFC 7638 JWK thumbprint: base64url(SHA-256) of its canonical JWK
// {"crv":"Ed25519","kty":"OKP","x":…}.
func keyID(pub ed25519.PublicKey) (string, error) {
	key, err := jwk.FromRaw(pub)
	if err != nil {
		return "", fmt.Errorf("oidc2fa: jwk of public key: %w", err)
	}
	sum, err := key.Thumbprint(crypto.SHA256)
	if err != nil {
		return "", fmt.Errorf("oidc2fa: jwk thumbprint: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(sum), nil
}

// ParsePrivateKeysPEM returns the Ed25519 private keys in data, in order: one or more PEM blocks
// of type "PRIVATE KEY" holding PKCS #8 (what MarshalPrivateKeyPEM and `openssl genpkey
// -algorithm ed25519` write). Put to KeyRingConfig.Keys, the last key signs. Text outside the
// blocks is ignored, as pem.Decode does; no block at all, a block of another type, or a key of
// another algorithm is an error (ErrInvalidKey for the last two).
func ParsePrivateKeysPEM(data []byte) ([]ed25519.PrivateKey, error) {
	var keys []ed25519.PrivateKey
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		n := len(keys) + 1
		if block.Type != "PRIVATE KEY" {
			return nil, fmt.Errorf("%w: PEM block %d: type %q, want \"PRIVATE KEY\" (PKCS #8)", ErrInvalidKey, n, block.Type)
		}
		key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: PEM block %d: %w", ErrInvalidKey, n, err)
		}
		priv, ok := key.(ed25519.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("%w: PEM block %d: %T", ErrInvalidKey, n, key)
		}
		keys = append(keys, priv)
	}
	if len(keys) == 0 {
		return nil, errors.New("oidc2fa: no PEM block found")
	}
	return keys, nil
}

// MarshalPrivateKeyPEM encodes priv as a PEM block of type "PRIVATE KEY" (PKCS #8), the format
// ParsePrivateKeysPEM reads. Several blocks concatenated form a key file, the signing key last.
func MarshalPrivateKeyPEM(priv ed25519.PrivateKey) ([]byte, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("%w: %d bytes, want %d", ErrInvalidKey, len(priv), ed25519.PrivateKeySize)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("oidc2fa: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// ParsePrivateKeysJWK returns the Ed25519 private keys in data, in order: a single JWK or a JWK
// set ({"keys":[…]}) whose keys are all private OKP keys on curve Ed25519 (RFC 8037, with "d").
// Put to KeyRingConfig.Keys, the last key signs. Malformed JSON, an empty set, a public key, a
// key of another type or curve, or an "alg" other than EdDSA is an error (ErrInvalidKey for all
// but the first two). The keys' own "kid" members are ignored: KeyRing derives the kid from the
// key.
func ParsePrivateKeysJWK(data []byte) ([]ed25519.PrivateKey, error) {
	set, err := jwk.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("oidc2fa: parse JWK: %w", err)
	}
	if set.Len() == 0 {
		return nil, errors.New("oidc2fa: JWK set has no keys")
	}
	keys := make([]ed25519.PrivateKey, 0, set.Len())
	for i := range set.Len() {
		key, _ := set.Key(i)
		if key.KeyType() != jwa.OKP {
			return nil, fmt.Errorf("%w: keys[%d]: kty %q, want OKP", ErrInvalidKey, i, key.KeyType())
		}
		if alg := key.Algorithm(); alg != nil && alg.String() != "" && alg.String() != jwa.EdDSA.String() {
			return nil, fmt.Errorf("%w: keys[%d]: alg %q, want EdDSA", ErrInvalidKey, i, alg)
		}
		okp, ok := key.(jwk.OKPPrivateKey)
		if !ok {
			return nil, fmt.Errorf("%w: keys[%d]: a public key (no \"d\")", ErrInvalidKey, i)
		}
		if okp.Crv() != jwa.Ed25519 {
			return nil, fmt.Errorf("%w: keys[%d]: crv %q, want Ed25519", ErrInvalidKey, i, okp.Crv())
		}
		var priv ed25519.PrivateKey
		if err := okp.Raw(&priv); err != nil {
			return nil, fmt.Errorf("%w: keys[%d]: %w", ErrInvalidKey, i, err)
		}
		keys = append(keys, priv)
	}
	return keys, nil
}
