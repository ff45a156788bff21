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
	"maps"
	"math"
	"math/big"
	"slices"
	"sync"
	"sync/atomic"
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

// algOrDefault is alg, or AlgEdDSA for an empty alg: the one place that says what an algorithm
// left empty (a client's IDTokenAlg, a PublicKey's Algorithm, a KeyPublisher's alg) means.
func algOrDefault(alg string) string {
	if alg == "" {
		return AlgEdDSA
	}
	return alg
}

// ClientIDTokenAlg returns the JWS algorithm of c's ID tokens: c.IDTokenAlg, or AlgEdDSA when it
// is empty.
func ClientIDTokenAlg(c *store.Client) string { return algOrDefault(c.IDTokenAlg) }

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

// Defaults of KeyRingConfig.
const (
	// DefaultKeyRefresh is how long a stored ring (LoadKeyRing) serves a tenant's keys from
	// memory before it reads them again, when KeyRingConfig.Refresh is zero: a key another
	// instance (or an admin command) made is in this instance's JWKS at most this long after.
	DefaultKeyRefresh = time.Minute
	// DefaultRotationDelay is how long a key made by a rotation is published before it signs,
	// when KeyRingConfig.RotationDelay is zero: the JWKS's DefaultJWKSMaxAge, which relying
	// parties may cache it for, plus DefaultKeyRefresh, which other instances may take to list
	// it. A relying party that read the JWKS before the rotation thus never meets a token whose
	// kid it lacks.
	DefaultRotationDelay = DefaultJWKSMaxAge + DefaultKeyRefresh
	// DefaultKeyCacheTenants is the most tenants whose keys a stored ring keeps in memory, when
	// KeyRingConfig.CacheTenants is zero: about 1 KiB a tenant with an EdDSA key
	// (BenchmarkKeyRingBytesPerTenant), 10 MiB in all. A tenant past the bound is read again
	// from the store (one indexed query) when next needed.
	DefaultKeyCacheTenants = 10000
)

// KeyRingConfig configures NewKeyRing and LoadKeyRing. The zero value is usable: keys generated
// per tenant, the real clock, DefaultKeyRetention, DefaultKeyRefresh, DefaultRotationDelay and
// DefaultKeyCacheTenants.
type KeyRingConfig struct {
	// Now returns the current time; it decides when a retired key leaves Keys and when a
	// rotated key starts signing. Nil means time.Now.
	Now func() time.Time

	// Retain is how long a key stays in Keys after it stopped signing. It must be at least the
	// longest ID token lifetime the provider uses (Config.IDTokenLifetime, plus the clock skew
	// relying parties allow), or tokens that are still valid stop verifying once a relying
	// party refetches the JWKS; the KeyRing cannot check this itself. Zero means
	// DefaultKeyRetention; negative is an error.
	Retain time.Duration

	// Refresh is how long a stored ring serves a tenant's keys from memory before reading them
	// from the store again (at the tenant's next request, never by a timer). Zero means
	// DefaultKeyRefresh; negative is an error. A ring from NewKeyRing holds its keys only in
	// memory and ignores it.
	Refresh time.Duration

	// RotationDelay is how long a key made by Rotate, RotateTenant or RotateBatch is published
	// in Keys before it signs, so that relying parties that cache the JWKS know it first. It
	// should be at least Config.JWKSMaxAge plus Refresh. Zero means DefaultRotationDelay;
	// negative means the new key signs at once. A tenant's first key of an algorithm signs at
	// once: no token of that algorithm was signed for the tenant before.
	RotationDelay time.Duration

	// CacheTenants bounds how many tenants' keys a stored ring keeps in memory; the tenants
	// least recently used leave first and are read again when next needed. Zero means
	// DefaultKeyCacheTenants; negative is an error. A ring from NewKeyRing keeps every key it
	// made, since they exist nowhere else, and ignores it.
	CacheTenants int

	// Keys are Ed25519 keys that every tenant shares for EdDSA, oldest first: the last one
	// signs, the earlier ones only verify and are retired at construction, exactly as if each had
	// been passed to Add in turn (so they leave Keys once Retain has passed). A key given twice
	// counts once, at its last position. Nil or empty means keys of each tenant's own, generated
	// when the tenant first needs one (one per algorithm) and lost when the process ends: use
	// LoadKeyRing whenever tokens must outlive a restart or several instances serve the same
	// issuer, or give keys here (ParsePrivateKeysPEM, ParsePrivateKeysJWK).
	Keys []ed25519.PrivateKey
}

// KeyRing is the default Signer and AlgorithmSigner: one chain of keys per tenant and algorithm
// (SigningAlgorithms). In each chain the newest key whose activation has come signs; a newer one
// made by a rotation is published before it signs (RotationDelay); a key that stopped signing
// stays published in Keys for the configured retention, so tokens it signed keep verifying.
//
// Each tenant signs with keys of its own, which the ring generates when the tenant first needs
// one: the JWKS of a tenant lists its keys only, so a token of one tenant never verifies with
// another's JWKS. The exception is shared keys: the keys of KeyRingConfig.Keys and Add sign
// EdDSA for every tenant without a key of its own and are published in every tenant's JWKS; a
// stored ring (LoadKeyRing) retires the shared key an earlier version of visid kept, which then
// stays published until its tokens have expired.
//
// Every cost of serving one tenant is independent of how many tenants there are: a stored ring
// reads one tenant's keys (store.SigningKeys.List with the tenant) when the tenant's copy in
// memory is missing or older than Refresh, keeps at most CacheTenants tenants' keys, and never
// reads every tenant's keys, neither to start nor to make a key.
//
// Each key's kid is its RFC 7638 JWK thumbprint (SHA-256, base64url), so instances that load the
// same key agree on its kid. Rotate, RotateTenant and Add change only this instance unless the
// ring is stored: several in-memory instances rotate together by loading the same new key (last
// in the key file) and restarting or calling Add.
//
// A KeyRing is safe for concurrent use. It starts no goroutines: retired keys are dropped lazily,
// by time, when a tenant's keys are read.
type KeyRing struct {
	now        func() time.Time
	retain     time.Duration
	refresh    time.Duration
	delay      time.Duration // negative: rotated keys sign at once
	maxTenants int

	mu      sync.RWMutex
	tenants map[string]*tenantRing // "" holds the shared keys

	// store, when the ring was loaded with LoadKeyRing, keeps the keys.
	store store.SigningKeys
}

var (
	_ Signer          = (*KeyRing)(nil)
	_ AlgorithmSigner = (*KeyRing)(nil)
)

// tenantRing is the keys of one tenant, or the shared keys (tenant "").
type tenantRing struct {
	// mu serializes reading the tenant's keys from the store and making its keys, so that
	// concurrent first requests of one tenant make one key and read the store once.
	mu sync.Mutex
	// snap is the tenant's keys as last read or made; it is replaced, never changed.
	snap atomic.Pointer[keySnap]
	// used is when the tenant's keys were last needed (Unix nanoseconds), for eviction.
	used atomic.Int64
}

// keySnap is a tenant's keys at one moment: newest first (Created, then kid, descending).
type keySnap struct {
	loaded time.Time // when they were read from the store; zero for a ring in memory
	keys   []*ringKey
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
	header    string
	created   time.Time
	activates time.Time // zero: signs from created on
	retired   time.Time // zero while not retired
}

// activation is when k starts signing.
func (k *ringKey) activation() time.Time {
	if k.activates.IsZero() {
		return k.created
	}
	return k.activates
}

// newerFirst orders keys newest first: Created, then kid, descending.
func newerFirst(a, b *ringKey) int {
	return cmp.Or(b.created.Compare(a.created), cmp.Compare(b.kid, a.kid))
}

// keyView is what a tenant's keys are at one moment.
type keyView struct {
	current map[string]*ringKey // the key signing now, by algorithm
	pending []*ringKey          // published, signing later; soonest first
	retired []*ringKey          // stopped signing, still published; copies with retired set, most recently retired first
	expired []*ringKey          // stopped signing longer than the retention ago
	// superseded are keys stored without Retired that a newer key replaced, as copies retired
	// when it did: a stored ring records their retirement.
	superseded []*ringKey
}

// view returns what s's keys are at now: in each algorithm's chain, walking from the newest,
// keys whose activation is still to come are pending, the first whose activation has come
// signs, and each older key stopped signing when the key after it started (or when it was
// retired, if that was earlier).
func (s *keySnap) view(now time.Time, retain time.Duration) keyView {
	v := keyView{current: map[string]*ringKey{}}
	succ := map[string]time.Time{} // per algorithm: when the key after the one at hand started signing
	for _, k := range s.keys {
		next, hasNext := succ[k.alg]
		switch {
		case k.retired.IsZero() && k.activation().After(now):
			v.pending = append(v.pending, k)
			continue
		case k.retired.IsZero() && !hasNext:
			v.current[k.alg] = k
		default:
			r := k
			if k.retired.IsZero() || hasNext && next.Before(k.retired) {
				r = k.retiredAt(next)
				if k.retired.IsZero() {
					v.superseded = append(v.superseded, r)
				}
			}
			if now.Before(r.retired.Add(retain)) {
				v.retired = append(v.retired, r)
			} else {
				v.expired = append(v.expired, r)
			}
		}
		if k.retired.IsZero() {
			succ[k.alg] = k.activation()
		}
	}
	slices.SortStableFunc(v.pending, func(a, b *ringKey) int { return a.activation().Compare(b.activation()) })
	slices.SortStableFunc(v.retired, func(a, b *ringKey) int { return b.retired.Compare(a.retired) })
	return v
}

// signer returns the key of s that signs alg at now, or nil.
func (s *keySnap) signer(alg string, now time.Time) *ringKey {
	if s == nil {
		return nil
	}
	for _, k := range s.keys { // newest first: the first of alg whose activation has come
		if k.alg == alg && k.retired.IsZero() && !k.activation().After(now) {
			return k
		}
	}
	return nil
}

// NewKeyRing returns a KeyRing configured by cfg, whose keys live in memory only. It fails when
// Retain, Refresh or CacheTenants is negative or a key in Keys is not a valid Ed25519 private
// key (ErrInvalidKey).
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
		r.addShared(k, now)
	}
	return r, nil
}

// newKeyRing returns a KeyRing of cfg without keys.
func newKeyRing(cfg KeyRingConfig) (*KeyRing, error) {
	switch {
	case cfg.Retain < 0:
		return nil, fmt.Errorf("oidc2fa: KeyRingConfig.Retain is negative (%v)", cfg.Retain)
	case cfg.Refresh < 0:
		return nil, fmt.Errorf("oidc2fa: KeyRingConfig.Refresh is negative (%v)", cfg.Refresh)
	case cfg.CacheTenants < 0:
		return nil, fmt.Errorf("oidc2fa: KeyRingConfig.CacheTenants is negative (%d)", cfg.CacheTenants)
	}
	r := &KeyRing{now: cfg.Now, retain: cmp.Or(cfg.Retain, DefaultKeyRetention), refresh: cmp.Or(cfg.Refresh, DefaultKeyRefresh),
		delay: cmp.Or(cfg.RotationDelay, DefaultRotationDelay), maxTenants: cmp.Or(cfg.CacheTenants, DefaultKeyCacheTenants),
		tenants: map[string]*tenantRing{}}
	if r.now == nil {
		r.now = time.Now
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
// key first (stored, for a stored ring). Once the tenant's keys are in memory, SignWith reads no
// store and never waits on Rotate or Add. An alg not in SigningAlgorithms is
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
	if !ValidSigningAlgorithm(alg) {
		return nil, fmt.Errorf("%w: %q", ErrUnsupportedAlgorithm, alg)
	}
	now := r.now()
	if tenant == "" {
		if k, err := r.sharedSigner(ctx, alg, now); k != nil || err != nil {
			return k, err
		}
		return nil, errors.New("oidc2fa: a key ring signs for a tenant; the tenant is empty")
	}
	s, err := r.keysOf(ctx, tenant, now, r.refresh)
	if err != nil {
		return nil, err
	}
	if k := s.signer(alg, now); k != nil {
		return k, nil
	}
	if k, err := r.sharedSigner(ctx, alg, now); k != nil || err != nil {
		return k, err
	}
	return r.ensure(ctx, tenant, alg)
}

// sharedSigner returns the shared key that signs alg at now, or nil.
func (r *KeyRing) sharedSigner(ctx context.Context, alg string, now time.Time) (*ringKey, error) {
	if alg != AlgEdDSA {
		return nil, nil // shared keys sign EdDSA only
	}
	s, err := r.keysOf(ctx, "", now, r.refresh)
	if err != nil {
		return nil, err
	}
	return s.signer(alg, now), nil
}

// entry returns tenant's tenantRing, made if create is set and it has none (nil otherwise).
func (r *KeyRing) entry(tenant string, create bool, now time.Time) *tenantRing {
	r.mu.RLock()
	tr := r.tenants[tenant]
	r.mu.RUnlock()
	if tr == nil && create {
		r.mu.Lock()
		if tr = r.tenants[tenant]; tr == nil {
			tr = &tenantRing{}
			r.evictLocked()
			r.tenants[tenant] = tr
		}
		r.mu.Unlock()
	}
	if tr != nil {
		tr.used.Store(now.UnixNano())
	}
	return tr
}

// evictSample is how many tenants evictLocked looks at to find one that was not used lately.
const evictSample = 8

// evictLocked makes room for one more tenant in a stored ring that holds its bound: of a few
// tenants taken at random (a map's order), the one least recently used leaves memory. The caller
// holds r.mu for writing.
func (r *KeyRing) evictLocked() {
	if r.store == nil || len(r.tenants) < r.maxTenants {
		return
	}
	victim, oldest, n := "", int64(math.MaxInt64), 0
	for t, tr := range r.tenants {
		if u := tr.used.Load(); u < oldest {
			victim, oldest = t, u
		}
		if n++; n == evictSample {
			break
		}
	}
	delete(r.tenants, victim)
}

// publishedMaxAge is how old a stored ring's copy of a tenant's keys may be when Keys lists
// them: a key made by another instance or an admin command (a client's key of a new algorithm)
// is in every instance's JWKS within it, while a JWKS asked for many times a second reads the
// store once a second.
const publishedMaxAge = time.Second

// fresh reports whether s may be served at now without reading the store, if it was read less
// than maxAge ago.
func (r *KeyRing) fresh(s *keySnap, now time.Time, maxAge time.Duration) bool {
	return s != nil && (r.store == nil || now.Sub(s.loaded) < maxAge)
}

// keysOf returns tenant's keys ("" the shared ones): from memory, or for a stored ring from
// the store when the copy in memory is missing or older than maxAge. A tenant without keys
// gives an empty snapshot.
func (r *KeyRing) keysOf(ctx context.Context, tenant string, now time.Time, maxAge time.Duration) (*keySnap, error) {
	tr := r.entry(tenant, r.store != nil, now)
	if tr == nil {
		return &keySnap{}, nil // in memory: a tenant the ring never made a key for
	}
	if s := tr.snap.Load(); r.fresh(s, now, maxAge) {
		return s, nil
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if s := tr.snap.Load(); r.fresh(s, now, maxAge) {
		return s, nil // another request read it meanwhile
	}
	return r.load(ctx, tenant, tr, now)
}

// ensure makes tenant's first key of alg, unless another caller (or, for a stored ring, another
// instance) made one meanwhile, and returns the key that signs.
func (r *KeyRing) ensure(ctx context.Context, tenant, alg string) (*ringKey, error) {
	now := r.now()
	tr := r.entry(tenant, true, now)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	s := tr.snap.Load()
	if r.store != nil {
		var err error
		if s, err = r.load(ctx, tenant, tr, now); err != nil { // another instance's key, if any
			return nil, err
		}
	}
	if k := s.signer(alg, now); k != nil {
		return k, nil
	}
	k, err := generateRingKey(tenant, alg, now)
	if err != nil {
		return nil, err
	}
	if s, err = r.addKey(ctx, tenant, tr, k, now); err != nil {
		return nil, err
	}
	if k := s.signer(alg, now); k != nil {
		return k, nil // k, or a key another instance stored at the same moment
	}
	return nil, errors.New("oidc2fa: the signing key just stored is not in the store")
}

// addKey adds k to tenant's keys, in memory or in the store (then read back with the tenant's
// other keys), and returns the tenant's keys. k is made newer than every key of its chain
// (a clock that has not moved since the last key does not put it in second place). The caller
// holds tr.mu.
func (r *KeyRing) addKey(ctx context.Context, tenant string, tr *tenantRing, k *ringKey, now time.Time) (*keySnap, error) {
	if old := tr.snap.Load(); old != nil {
		for _, o := range old.keys {
			if o.alg == k.alg && !k.created.After(o.created) {
				if k.activates.IsZero() {
					k.activates = k.created // still signs from now on
				}
				k.created = o.created.Add(time.Nanosecond)
			}
		}
	}
	if r.store != nil {
		if err := r.put(ctx, k); err != nil {
			return nil, err
		}
		return r.load(ctx, tenant, tr, now)
	}
	var keys []*ringKey
	if old := tr.snap.Load(); old != nil {
		v := old.view(now, r.retain)
		for _, o := range old.keys { // drop the keys whose retention has passed
			if !slices.ContainsFunc(v.expired, func(e *ringKey) bool { return e.kid == o.kid }) && o.kid != k.kid {
				keys = append(keys, o)
			}
		}
	}
	keys = append(keys, k)
	slices.SortStableFunc(keys, newerFirst)
	s := &keySnap{keys: keys}
	tr.snap.Store(s)
	return s, nil
}

// PublishKey makes sure tenant has a key of alg, making one (which signs at once, and is stored
// for a stored ring) if it has none, so that the tenant's JWKS lists the key before the first
// token it signs. Register a client with an algorithm through ClientSpec.Signer, or call
// PublishKey when a client's algorithm changes. EdDSA counts as published when a shared key
// signs it. An alg not in SigningAlgorithms is ErrUnsupportedAlgorithm.
func (r *KeyRing) PublishKey(ctx context.Context, tenant, alg string) error {
	_, err := r.signingKey(ctx, tenant, algOrDefault(alg))
	return err
}

// Keys implements Signer. It returns tenant's signing keys (making its EdDSA key if it has none
// and no shared key signs) and the shared ones, then the keys a rotation made that do not sign
// yet, soonest first, then the retired keys whose retention has not yet passed, most recently
// retired first. A stored ring reads the tenant's keys (one indexed query) when its copy is
// older than a second, so that the JWKS of every instance lists a key another instance or an
// admin command made within a second. The returned keys are copies the caller may keep. An
// empty tenant lists the shared keys alone.
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
	owners := []string{tenant}
	if tenant != "" {
		owners = append(owners, "")
	}
	var current, pending, retired []*ringKey
	for _, owner := range owners {
		maxAge := publishedMaxAge
		if owner == "" {
			maxAge = r.refresh // the shared keys of a stored ring only ever leave
		}
		s, err := r.keysOf(ctx, owner, now, maxAge)
		if err != nil {
			return nil, err
		}
		v := s.view(now, r.retain)
		for _, alg := range SigningAlgorithms() {
			if k := v.current[alg]; k != nil {
				current = append(current, k)
			}
		}
		pending = append(pending, v.pending...)
		retired = append(retired, v.retired...)
	}
	slices.SortStableFunc(retired, func(a, b *ringKey) int { return b.retired.Compare(a.retired) })
	all := slices.Concat(current, pending, retired)
	keys := make([]PublicKey, 0, len(all))
	seen := make(map[string]bool, len(all))
	for _, k := range all {
		if !seen[k.kid] {
			seen[k.kid] = true
			keys = append(keys, k.public())
		}
	}
	return keys, nil
}

// Rotate gives every chain that has a signing key a new one — each tenant's key of each
// algorithm it uses, and the shared key if one signs — and returns the new kids. Each new key is
// published at once and signs after RotationDelay; the key signing until then stops at that
// moment and stays in Keys until Retain has passed. For a ring from NewKeyRing the new keys exist
// only in this process (see KeyRing for several instances); a stored ring stores them, tenant by
// tenant in batches (RotateBatch), and other instances list them within Refresh. Rotate of a
// stored ring with many tenants takes a while: RotateBatch lets a host go in steps and resume.
func (r *KeyRing) Rotate(ctx context.Context) (kids []string, err error) {
	if r.store == nil {
		if k, err := r.rotateTenant(ctx, ""); err != nil || len(k) > 0 {
			kids = append(kids, k...)
			if err != nil {
				return kids, err
			}
		}
	}
	for after := ""; ; {
		k, next, err := r.RotateBatch(ctx, after, rotateBatch)
		kids = append(kids, k...)
		if err != nil || next == "" {
			return kids, err
		}
		after = next
	}
}

// rotateBatch is how many tenants Rotate rotates at a time.
const rotateBatch = 500

// RotateBatch rotates, as RotateTenant does, the keys of at most limit tenants that have keys,
// those whose id sorts after after (from the first for an empty after), in id order. It returns
// the new kids and the last tenant it rotated, to be passed as after to the next batch; next is
// "" when no tenant is left. On an error, next is the last tenant rotated before it (after
// itself if none was), so the same call resumes where the batch stopped. A limit below 1 is an
// error. The shared key is not rotated (Rotate does that).
func (r *KeyRing) RotateBatch(ctx context.Context, after string, limit int) (kids []string, next string, err error) {
	if limit < 1 {
		return nil, after, fmt.Errorf("oidc2fa: RotateBatch needs a limit of at least 1, not %d", limit)
	}
	var tenants []string
	if r.store != nil {
		if tenants, err = r.store.Tenants(ctx, after, limit); err != nil {
			return nil, after, fmt.Errorf("oidc2fa: listing the tenants with signing keys: %w", err)
		}
	} else {
		r.mu.RLock()
		for t := range r.tenants {
			if t > after {
				tenants = append(tenants, t)
			}
		}
		r.mu.RUnlock()
		slices.Sort(tenants)
		tenants = tenants[:min(len(tenants), limit)]
	}
	next = after
	for _, t := range tenants {
		k, err := r.rotateTenant(ctx, t)
		if err != nil {
			return kids, next, err
		}
		kids, next = append(kids, k...), t
	}
	if len(tenants) < limit {
		next = ""
	}
	return kids, next, nil
}

// RotateTenant is Rotate for one tenant: a new key for each algorithm the tenant signs with, at
// least EdDSA, so a tenant that signed with the shared key gets one of its own. The other
// tenants' keys do not change. An empty tenant is an error.
func (r *KeyRing) RotateTenant(ctx context.Context, tenant string) (kids []string, err error) {
	if tenant == "" {
		return nil, errors.New("oidc2fa: RotateTenant needs a tenant")
	}
	return r.rotateTenant(ctx, tenant)
}

// rotateTenant gives each of tenant's chains a new key, which signs after the rotation delay if
// a key of its algorithm signs now (for the tenant, or the shared one for EdDSA), and at once
// otherwise. A tenant's EdDSA chain is rotated even when it has none; the shared keys' ("")
// chains only when they have keys.
func (r *KeyRing) rotateTenant(ctx context.Context, tenant string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	now := r.now()
	tr := r.entry(tenant, tenant != "" || r.store != nil, now)
	if tr == nil {
		return nil, nil // no shared keys in memory
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	s := tr.snap.Load()
	if r.store != nil {
		var err error
		if s, err = r.load(ctx, tenant, tr, now); err != nil {
			return nil, err
		}
	}
	if s == nil {
		s = &keySnap{}
	}
	var algs []string
	for _, alg := range SigningAlgorithms() {
		if slices.ContainsFunc(s.keys, func(k *ringKey) bool { return k.alg == alg }) || alg == AlgEdDSA && tenant != "" {
			algs = append(algs, alg)
		}
	}
	var sharedEdDSA *ringKey
	if tenant != "" {
		r.mu.RLock()
		if shared := r.tenants[""]; shared != nil {
			sharedEdDSA = shared.snap.Load().signer(AlgEdDSA, now)
		}
		r.mu.RUnlock()
	}
	kids := make([]string, 0, len(algs))
	for _, alg := range algs {
		k, err := generateRingKey(tenant, alg, now)
		if err != nil {
			return kids, err
		}
		if r.delay > 0 && (s.signer(alg, now) != nil || alg == AlgEdDSA && sharedEdDSA != nil) {
			k.activates = now.Add(r.delay)
		}
		if s, err = r.addKey(ctx, tenant, tr, k, now); err != nil {
			return kids, err
		}
		kids = append(kids, k.kid)
	}
	return kids, nil
}

// Add makes priv the shared EdDSA key, which signs for every tenant without an EdDSA key of its
// own, and returns its kid; the shared key signing until now is retired. Adding the key that
// already signs changes nothing; adding a retired key makes it sign again. An invalid key is an
// error wrapping ErrInvalidKey and leaves the ring unchanged. A stored ring keeps keys per tenant
// and has no shared key to add: Add fails; use Rotate or RotateTenant.
func (r *KeyRing) Add(priv ed25519.PrivateKey) (kid string, err error) {
	if r.store != nil {
		return "", errors.New("oidc2fa: a stored key ring makes its keys itself, per tenant; use Rotate or RotateTenant")
	}
	k, err := newEd25519RingKey(priv)
	if err != nil {
		return "", err
	}
	r.addShared(k, r.now())
	return k.kid, nil
}

// addShared makes k the shared EdDSA key at now: the shared keys are those that were, retired at
// now unless already retired, then k.
func (r *KeyRing) addShared(k *ringKey, now time.Time) {
	tr := r.entry("", true, now)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	old := tr.snap.Load()
	if cur := old.signer(AlgEdDSA, now); cur != nil && cur.kid == k.kid {
		return
	}
	var keys []*ringKey
	if old != nil {
		v := old.view(now, r.retain)
		for _, o := range slices.Concat(v.retired, slices.Collect(maps.Values(v.current)), v.pending) {
			if o.kid == k.kid {
				continue
			}
			if o.retired.IsZero() {
				o = o.retiredAt(now)
			}
			keys = append(keys, o)
		}
	}
	k.created = now
	keys = append(keys, k)
	slices.SortStableFunc(keys, newerFirst)
	tr.snap.Store(&keySnap{keys: keys})
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

// generateRingKey makes a new key of tenant for alg, created at now.
func generateRingKey(tenant, alg string, now time.Time) (*ringKey, error) {
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
	k, err := newRingKey(tenant, alg, priv)
	if err != nil {
		return nil, err
	}
	k.created = now
	return k, nil
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
