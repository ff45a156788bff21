package oidc2fa

import (
	"bytes"
	"cmp"
	"context"
	"crypto"
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
	"math/big"
	"slices"
	"sync"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"

	"github.com/visid/visid/store"
)

// The JWS algorithms of ID tokens. A client chooses one with store.Client.IDTokenAlg (OpenID
// Connect Dynamic Client Registration's id_token_signed_response_alg); EdDSA is the default.
const (
	// AlgEdDSA is EdDSA with an Ed25519 key (RFC 8037): the default.
	AlgEdDSA = "EdDSA"
	// AlgEd25519 is the same signature under RFC 9864's fully specified name.
	AlgEd25519 = "Ed25519"
	// AlgRS256 is RSASSA-PKCS1-v1_5 with SHA-256 and a 2048-bit key: what OpenID Connect Core
	// §15.1 requires every provider to offer, and what most client libraries expect.
	AlgRS256 = "RS256"
	// AlgES256 is ECDSA on P-256 with SHA-256.
	AlgES256 = "ES256"
)

// SigningAlgorithms returns the algorithms a KeyRing signs with, in the order discovery lists
// them: AlgEdDSA, AlgRS256, AlgES256, AlgEd25519.
func SigningAlgorithms() []string { return []string{AlgEdDSA, AlgRS256, AlgES256, AlgEd25519} }

// ValidSigningAlgorithm reports whether alg is one of SigningAlgorithms.
func ValidSigningAlgorithm(alg string) bool { return slices.Contains(SigningAlgorithms(), alg) }

// rsaBits is the size of the RSA keys a KeyRing generates.
const rsaBits = 2048

// DefaultKeyRetention is how long a KeyRing keeps publishing a retired key when
// KeyRingConfig.Retain is zero: twice DefaultIDTokenLifetime, so every token a key signed just
// before a rotation expires while the key is still in the JWKS, with room for clock skew. A
// provider whose Config.IDTokenLifetime is longer than about 1h55m needs a larger Retain.
const DefaultKeyRetention = 2 * time.Hour

// ErrInvalidKey is returned, wrapped, for a key that is not a well-formed Ed25519 private key:
// another key type (RSA, P-256, X25519, …), a public key where a private one is needed, a key of
// the wrong length or one whose public half does not match its seed.
var ErrInvalidKey = errors.New("oidc2fa: not a valid Ed25519 private key")

// ErrUnsupportedAlgorithm is returned, wrapped, by KeyRing.SignWith for an algorithm that is
// not one of SigningAlgorithms.
var ErrUnsupportedAlgorithm = errors.New("oidc2fa: unsupported signing algorithm")

// KeyRingConfig configures NewKeyRing. The zero value is usable: keys generated per tenant, the
// real clock and DefaultKeyRetention.
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

	// Keys are Ed25519 keys that every tenant shares for EdDSA, oldest first: the last one
	// signs, the earlier ones only verify and are retired at construction, exactly as if each had
	// been passed to Add in turn (so they leave Keys once Retain has passed). A key given twice
	// counts once, at its last position. Nil or empty means keys of each tenant's own, generated
	// when the tenant first needs one (one per algorithm) and lost when the process ends: use
	// LoadKeyRing whenever tokens must outlive a restart or several instances serve the same
	// issuer, or give keys here (ParsePrivateKeysPEM, ParsePrivateKeysJWK).
	Keys []ed25519.PrivateKey
}

// KeyRing is the default Signer and AlgorithmSigner: keys held in memory, one chain per tenant
// and algorithm (SigningAlgorithms). The newest key of a chain signs; a key that stopped signing
// stays published in Keys for the configured retention, so tokens it signed keep verifying.
//
// Each tenant signs with keys of its own, which the ring generates when the tenant first needs
// one: the JWKS of a tenant lists its keys only, so a token of one tenant never verifies with
// another's JWKS. The exception is shared keys: the keys of KeyRingConfig.Keys and Add sign
// EdDSA for every tenant without a key of its own and are published in every tenant's JWKS; a
// stored ring (LoadKeyRing) retires the shared key an earlier version of visid kept, which then
// stays published until its tokens have expired.
//
// Each key's kid is its RFC 7638 JWK thumbprint (SHA-256, base64url), so instances that load the
// same key agree on its kid. Rotate, RotateTenant and Add change only this instance unless the
// ring is stored: several in-memory instances rotate together by loading the same new key (last
// in the key file) and restarting or calling Add.
//
// A KeyRing is safe for concurrent use. It starts no goroutines: retired keys are dropped lazily,
// by time, when Keys, Rotate or Add runs.
type KeyRing struct {
	now    func() time.Time
	retain time.Duration

	mu     sync.RWMutex
	chains map[chainID]*chain

	// genMu serializes the making of keys (a tenant's first, and rotations), so that concurrent
	// first requests of one tenant make one key.
	genMu sync.Mutex

	// store, when the ring was loaded with LoadKeyRing, keeps the keys.
	store store.SigningKeys
	// reloadMu serializes Reload; parsed caches the stored keys already parsed, by id.
	reloadMu sync.Mutex
	parsed   sync.Map // string → *ringKey
}

var (
	_ Signer          = (*KeyRing)(nil)
	_ AlgorithmSigner = (*KeyRing)(nil)
)

// chainID names a chain of keys: a tenant ("" for the shared keys) and an algorithm.
type chainID struct{ tenant, alg string }

// chain is the keys of one chainID: the one signing, if any, and the retired ones.
type chain struct {
	current *ringKey
	retired []*ringKey // newest first
}

// ringKey is one key with everything Sign needs computed once. A ringKey is never changed once
// made; retiring one makes a copy.
type ringKey struct {
	kid    string
	alg    string
	tenant string
	priv   crypto.Signer
	pub    crypto.PublicKey
	// header is the base64url-encoded protected header, {"alg":…,"kid":…,"typ":"JWT"}.
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
	now := r.now()
	for i, priv := range cfg.Keys {
		k, err := newEd25519RingKey(priv)
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
	r := &KeyRing{now: cfg.Now, retain: cfg.Retain, chains: map[chainID]*chain{}}
	if r.now == nil {
		r.now = time.Now
	}
	if r.retain == 0 {
		r.retain = DefaultKeyRetention
	}
	return r, nil
}

// Algorithms implements AlgorithmSigner: SigningAlgorithms.
func (r *KeyRing) Algorithms() []string { return SigningAlgorithms() }

// Sign implements Signer: SignWith with AlgEdDSA.
func (r *KeyRing) Sign(ctx context.Context, tenant string, payload []byte) (string, error) {
	return r.SignWith(ctx, tenant, AlgEdDSA, payload)
}

// SignWith implements AlgorithmSigner. It signs with tenant's current key of alg, or for EdDSA
// with the shared key when the tenant has none of its own; a tenant without either gets a new
// key first (stored, for a stored ring). Once the tenant has its key, SignWith never blocks on
// Rotate or Add for longer than it takes to read one pointer. An alg not in SigningAlgorithms is
// ErrUnsupportedAlgorithm; an empty tenant is an error.
func (r *KeyRing) SignWith(ctx context.Context, tenant, alg string, payload []byte) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	k, err := r.signingKey(ctx, tenant, alg)
	if err != nil {
		return "", err
	}
	// The signing input, header "." base64url(payload), goes into a buffer big enough for the
	// whole token, which is then completed in place with "." and the signature.
	enc := base64.RawURLEncoding
	buf := make([]byte, 0, len(k.header)+1+enc.EncodedLen(len(payload))+1+enc.EncodedLen(512))
	buf = append(buf, k.header...)
	buf = append(buf, '.')
	buf = enc.AppendEncode(buf, payload)
	sig, err := k.sign(buf)
	if err != nil {
		return "", fmt.Errorf("oidc2fa: sign: %w", err)
	}
	buf = append(buf, '.')
	buf = enc.AppendEncode(buf, sig)
	return string(buf), nil
}

// signingKey returns the key that signs tenant's tokens with alg, making one if need be.
func (r *KeyRing) signingKey(ctx context.Context, tenant, alg string) (*ringKey, error) {
	r.mu.RLock()
	k := r.currentLocked(tenant, alg)
	r.mu.RUnlock()
	if k != nil {
		return k, nil
	}
	return r.ensure(ctx, tenant, alg)
}

// currentLocked returns the tenant's current key of alg, or else the shared one, or nil. The
// caller holds r.mu.
func (r *KeyRing) currentLocked(tenant, alg string) *ringKey {
	if c := r.chains[chainID{tenant, alg}]; c != nil && c.current != nil {
		return c.current
	}
	if c := r.chains[chainID{"", alg}]; c != nil && c.current != nil {
		return c.current
	}
	return nil
}

func (r *KeyRing) current(tenant, alg string) *ringKey {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.currentLocked(tenant, alg)
}

// ensure makes tenant's first key of alg, unless another caller (or, for a stored ring, another
// instance) made one meanwhile, and returns the key that signs.
func (r *KeyRing) ensure(ctx context.Context, tenant, alg string) (*ringKey, error) {
	if !ValidSigningAlgorithm(alg) {
		return nil, fmt.Errorf("%w: %q", ErrUnsupportedAlgorithm, alg)
	}
	if tenant == "" {
		return nil, errors.New("oidc2fa: a key ring signs for a tenant; the tenant is empty")
	}
	r.genMu.Lock()
	defer r.genMu.Unlock()
	if k := r.current(tenant, alg); k != nil {
		return k, nil
	}
	if r.store != nil {
		if err := r.Reload(ctx); err != nil {
			return nil, err
		}
		if k := r.current(tenant, alg); k != nil {
			return k, nil
		}
	}
	k, err := generateRingKey(tenant, alg)
	if err != nil {
		return nil, err
	}
	if r.store == nil {
		r.mu.Lock()
		r.install(k, r.now())
		r.mu.Unlock()
		return k, nil
	}
	if err := r.put(ctx, k); err != nil {
		return nil, err
	}
	if err := r.Reload(ctx); err != nil {
		return nil, err
	}
	if k := r.current(tenant, alg); k != nil {
		return k, nil
	}
	return nil, errors.New("oidc2fa: the signing key just stored is not in the store")
}

// Keys implements Signer. It returns tenant's signing keys (making its EdDSA key if it has none
// and no shared key signs) and the shared ones, then the retired keys whose retention has not
// yet passed, most recently retired first. A stored ring reads the keys from its store, so that
// the JWKS of every instance lists a key as soon as any instance signs with it. The returned
// keys are copies the caller may keep. An empty tenant lists the shared keys alone.
func (r *KeyRing) Keys(ctx context.Context, tenant string) ([]PublicKey, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if tenant != "" {
		if _, err := r.signingKey(ctx, tenant, AlgEdDSA); err != nil {
			return nil, err
		}
	}
	now := r.now()
	var current, retired []*ringKey
	if r.store != nil {
		stored, err := r.store.List(ctx)
		if err != nil {
			return nil, fmt.Errorf("oidc2fa: reading the signing keys: %w", err)
		}
		for i := len(stored) - 1; i >= 0; i-- { // newest first
			sk := stored[i]
			if sk.Tenant != tenant && sk.Tenant != "" || !ValidSigningAlgorithm(sk.Algorithm) {
				continue
			}
			k, err := r.parseStored(sk)
			if err != nil {
				return nil, err
			}
			if sk.Retired.IsZero() {
				current = append(current, k)
			} else if k = k.retiredAt(sk.Retired); r.published(k, now) {
				retired = append(retired, k)
			}
		}
	} else {
		r.mu.RLock()
		for _, owner := range []string{tenant, ""} {
			for _, alg := range SigningAlgorithms() {
				c := r.chains[chainID{owner, alg}]
				if c == nil {
					continue
				}
				if c.current != nil {
					current = append(current, c.current)
				}
				for _, k := range c.retired {
					if r.published(k, now) {
						retired = append(retired, k)
					}
				}
			}
		}
		r.mu.RUnlock()
	}
	slices.SortStableFunc(retired, func(a, b *ringKey) int { return b.retired.Compare(a.retired) })
	keys := make([]PublicKey, 0, len(current)+len(retired))
	seen := make(map[string]bool, cap(keys))
	for _, k := range append(current, retired...) {
		if !seen[k.kid] {
			seen[k.kid] = true
			keys = append(keys, k.public())
		}
	}
	return keys, nil
}

// Rotate gives every chain that has a signing key a new one — each tenant's key of each
// algorithm it uses, and the shared key if one signs — and returns the new kids. The keys
// signing until now are retired: they stay in Keys until Retain has passed. For a ring from
// NewKeyRing the new keys exist only in this process (see KeyRing for several instances); a
// stored ring stores them, and other instances sign with them once they Reload. A relying party
// that caches the JWKS and does not refetch it on an unknown kid cannot verify the new keys'
// tokens until its cache expires (Config.JWKSMaxAge); go-oidc's remote key set does refetch.
func (r *KeyRing) Rotate(ctx context.Context) (kids []string, err error) {
	return r.rotate(ctx, "")
}

// RotateTenant is Rotate for one tenant: a new key for each algorithm the tenant signs with, at
// least EdDSA, so a tenant that signed with the shared key gets one of its own. The other
// tenants' keys do not change. An empty tenant is an error.
func (r *KeyRing) RotateTenant(ctx context.Context, tenant string) (kids []string, err error) {
	if tenant == "" {
		return nil, errors.New("oidc2fa: RotateTenant needs a tenant")
	}
	return r.rotate(ctx, tenant)
}

// rotate rotates tenant's chains, or every chain when tenant is empty.
func (r *KeyRing) rotate(ctx context.Context, tenant string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.genMu.Lock()
	defer r.genMu.Unlock()
	if err := r.Reload(ctx); err != nil {
		return nil, err
	}
	r.mu.RLock()
	var ids []chainID
	for id, c := range r.chains {
		if c.current != nil && (tenant == "" || id.tenant == tenant) {
			ids = append(ids, id)
		}
	}
	r.mu.RUnlock()
	if tenant != "" && !slices.Contains(ids, chainID{tenant, AlgEdDSA}) {
		ids = append(ids, chainID{tenant, AlgEdDSA})
	}
	slices.SortFunc(ids, func(a, b chainID) int { return cmp.Or(cmp.Compare(a.tenant, b.tenant), cmp.Compare(a.alg, b.alg)) })
	kids := make([]string, 0, len(ids))
	for _, id := range ids {
		k, err := generateRingKey(id.tenant, id.alg)
		if err != nil {
			return nil, err
		}
		if err := r.installKey(ctx, k); err != nil {
			return nil, err
		}
		kids = append(kids, k.kid)
	}
	if err := r.Reload(ctx); err != nil {
		return nil, err
	}
	return kids, nil
}

// installKey makes k the signing key of its chain: in memory, or in the store, where the key
// signing until now is retired.
func (r *KeyRing) installKey(ctx context.Context, k *ringKey) error {
	if r.store == nil {
		r.mu.Lock()
		r.install(k, r.now())
		r.mu.Unlock()
		return nil
	}
	r.mu.RLock()
	var old *ringKey
	if c := r.chains[chainID{k.tenant, k.alg}]; c != nil {
		old = c.current
	}
	r.mu.RUnlock()
	if err := r.put(ctx, k); err != nil {
		return err
	}
	if old != nil && old.kid != k.kid {
		if err := r.store.Retire(ctx, old.kid, r.now()); err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("oidc2fa: retiring a signing key: %w", err)
		}
	}
	return nil
}

// Add makes priv the shared EdDSA key, which signs for every tenant without an EdDSA key of its
// own, and returns its kid; the shared key signing until now is retired as by Rotate. Adding
// the key that already signs changes nothing; adding a retired key makes it sign again. An
// invalid key is an error wrapping ErrInvalidKey and leaves the ring unchanged. A stored ring
// keeps keys per tenant and has no shared key to add: Add fails; use Rotate or RotateTenant.
func (r *KeyRing) Add(priv ed25519.PrivateKey) (kid string, err error) {
	if r.store != nil {
		return "", errors.New("oidc2fa: a stored key ring makes its keys itself, per tenant; use Rotate or RotateTenant")
	}
	k, err := newEd25519RingKey(priv)
	if err != nil {
		return "", err
	}
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.install(k, now)
	return k.kid, nil
}

// install makes k the signing key of its chain at time now. The caller holds r.mu or owns r
// exclusively.
func (r *KeyRing) install(k *ringKey, now time.Time) {
	id := chainID{k.tenant, k.alg}
	c := r.chains[id]
	if c == nil {
		c = &chain{}
	}
	if c.current != nil && c.current.kid == k.kid {
		return
	}
	retired := make([]*ringKey, 0, len(c.retired)+1)
	if c.current != nil {
		retired = append(retired, c.current.retiredAt(now))
	}
	for _, rk := range c.retired {
		if rk.kid != k.kid && r.published(rk, now) {
			retired = append(retired, rk)
		}
	}
	r.chains[id] = &chain{current: k, retired: retired}
}

// published reports whether the retired key k is still in Keys at time now.
func (r *KeyRing) published(k *ringKey, now time.Time) bool {
	return now.Before(k.retired.Add(r.retain))
}

// retiredAt returns a copy of k retired at t.
func (k *ringKey) retiredAt(t time.Time) *ringKey {
	c := *k
	c.retired = t
	return &c
}

func (k *ringKey) public() PublicKey {
	var pub crypto.PublicKey
	switch p := k.pub.(type) {
	case ed25519.PublicKey:
		pub = ed25519.PublicKey(bytes.Clone(p))
	case *rsa.PublicKey:
		pub = &rsa.PublicKey{N: new(big.Int).Set(p.N), E: p.E}
	case *ecdsa.PublicKey:
		pub = &ecdsa.PublicKey{Curve: p.Curve, X: new(big.Int).Set(p.X), Y: new(big.Int).Set(p.Y)}
	}
	return PublicKey{KID: k.kid, Algorithm: k.alg, Key: pub, Retired: k.retired}
}

// sign returns the JWS signature of input with k.
func (k *ringKey) sign(input []byte) ([]byte, error) {
	switch p := k.priv.(type) {
	case ed25519.PrivateKey:
		return ed25519.Sign(p, input), nil
	case *rsa.PrivateKey:
		sum := sha256.Sum256(input)
		return rsa.SignPKCS1v15(nil, p, crypto.SHA256, sum[:])
	case *ecdsa.PrivateKey:
		sum := sha256.Sum256(input)
		rr, ss, err := ecdsa.Sign(rand.Reader, p, sum[:])
		if err != nil {
			return nil, err
		}
		sig := make([]byte, 64) // R || S, 32 bytes each (RFC 7518 §3.4)
		rr.FillBytes(sig[:32])
		ss.FillBytes(sig[32:])
		return sig, nil
	}
	return nil, fmt.Errorf("a key of type %T", k.priv)
}

// generateRingKey makes a new key of tenant for alg.
func generateRingKey(tenant, alg string) (*ringKey, error) {
	var priv crypto.Signer
	var err error
	switch alg {
	case AlgEdDSA, AlgEd25519:
		_, priv, err = ed25519.GenerateKey(rand.Reader)
	case AlgRS256:
		priv, err = rsa.GenerateKey(rand.Reader, rsaBits)
	case AlgES256:
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	default:
		return nil, fmt.Errorf("%w: %q", ErrUnsupportedAlgorithm, alg)
	}
	if err != nil {
		return nil, fmt.Errorf("oidc2fa: generate %s key: %w", alg, err)
	}
	return newRingKey(tenant, alg, priv)
}

// newEd25519RingKey checks priv, a shared EdDSA key, and copies it.
func newEd25519RingKey(priv ed25519.PrivateKey) (*ringKey, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("%w: %d bytes, want %d", ErrInvalidKey, len(priv), ed25519.PrivateKeySize)
	}
	return newRingKey("", AlgEdDSA, priv)
}

// newRingKey checks that priv is a key for alg, copies an Ed25519 key, and computes the kid and
// the protected header.
func newRingKey(tenant, alg string, priv crypto.Signer) (*ringKey, error) {
	switch p := priv.(type) {
	case ed25519.PrivateKey:
		if alg != AlgEdDSA && alg != AlgEd25519 {
			return nil, fmt.Errorf("oidc2fa: an Ed25519 key cannot sign %s", alg)
		}
		if len(p) != ed25519.PrivateKeySize {
			return nil, fmt.Errorf("%w: %d bytes, want %d", ErrInvalidKey, len(p), ed25519.PrivateKeySize)
		}
		// Rebuilding from the seed copies the key, and a public half that does not match the
		// seed would make every signature invalid.
		fresh := ed25519.NewKeyFromSeed(p.Seed())
		if !bytes.Equal(fresh, p) {
			return nil, fmt.Errorf("%w: public half does not match the seed", ErrInvalidKey)
		}
		priv = fresh
	case *rsa.PrivateKey:
		if alg != AlgRS256 || p.N.BitLen() < rsaBits {
			return nil, fmt.Errorf("oidc2fa: an RSA key of %d bits cannot sign %s", p.N.BitLen(), alg)
		}
	case *ecdsa.PrivateKey:
		if alg != AlgES256 || p.Curve != elliptic.P256() {
			return nil, fmt.Errorf("oidc2fa: an ECDSA key on %s cannot sign %s", p.Curve.Params().Name, alg)
		}
	default:
		return nil, fmt.Errorf("oidc2fa: a key of type %T cannot sign ID tokens", priv)
	}
	pub := priv.Public()
	kid, err := keyID(pub)
	if err != nil {
		return nil, err
	}
	header, err := json.Marshal(struct {
		Alg string `json:"alg"`
		KID string `json:"kid"`
		Typ string `json:"typ"`
	}{Alg: alg, KID: kid, Typ: "JWT"})
	if err != nil {
		return nil, fmt.Errorf("oidc2fa: protected header: %w", err)
	}
	return &ringKey{
		kid:    kid,
		alg:    alg,
		tenant: tenant,
		priv:   priv,
		pub:    pub,
		header: base64.RawURLEncoding.EncodeToString(header),
	}, nil
}

// keyID returns pub's RFC 7638 JWK thumbprint: base64url(SHA-256) of its canonical JWK, such as
// {"crv":"Ed25519","kty":"OKP","x":…}.
func keyID(pub crypto.PublicKey) (string, error) {
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
