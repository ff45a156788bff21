package oidc2fa

import (
	"context"
	"crypto/ed25519"
	"time"
)

// Signer signs ID tokens and publishes the keys that verify them. A host may keep its keys in a
// KMS by implementing it; KeyRing is the default, in process. Implementations must be safe for
// concurrent use: the token and JWKS endpoints call them from many requests at once, including
// while keys rotate. An error from either method becomes a server_error (token endpoint) or a 500
// (JWKS) whose body does not carry the error's text.
type Signer interface {
	// Sign returns the compact JWS serialization of payload — a JSON object of claims, which
	// Sign signs as given, without inspecting it — signed with EdDSA (Ed25519), with
	// "alg":"EdDSA", "typ":"JWT" and the signing key's "kid" in the protected header. That kid
	// must be among the kids Keys returns for tenant from then on, for as long as the token may
	// be valid. tenant is the tenant the token is for: a signer may keep keys per tenant or share
	// one set (KeyRing shares one).
	Sign(ctx context.Context, tenant string, payload []byte) (string, error)

	// Keys returns the public keys that verify tenant's tokens that may still be valid: the key
	// signing now and every earlier key until the last token it signed has expired. The JWKS
	// lists them in the order returned, so put the signing key first. Each KID is unique and
	// non-empty; the caller may keep the result.
	Keys(ctx context.Context, tenant string) ([]PublicKey, error)
}

// PublicKey is one verification key, as the JWKS publishes it (an OKP key on curve Ed25519,
// RFC 8037).
type PublicKey struct {
	// KID is the key's "kid", as Sign puts it in the protected header.
	KID string
	// Key is the 32-byte Ed25519 public key, published as "x".
	Key ed25519.PublicKey
	// Retired is when the key stopped signing; zero for the key signing now.
	Retired time.Time
}
