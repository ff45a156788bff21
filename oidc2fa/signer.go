package oidc2fa

import (
	"context"
	"crypto"
	"time"
)

// Signer signs ID tokens and publishes the keys that verify them. A host may keep its keys in a
// KMS by implementing it; KeyRing is the default, in process. Implementations must be safe for
// concurrent use: the token and JWKS endpoints call them from many requests at once, including
// while keys rotate. An error from either method becomes a server_error (token endpoint) or a 500
// (JWKS) whose body does not carry the error's text.
//
// A Signer signs with EdDSA. One that also implements AlgorithmSigner serves the clients that
// ask for another algorithm (store.Client.IDTokenAlg); with a plain Signer such a client's token
// request fails with server_error, and discovery lists EdDSA alone.
type Signer interface {
	// Sign returns the compact JWS serialization of payload — a JSON object of claims, which
	// Sign signs as given, without inspecting it — signed with EdDSA (Ed25519), with
	// "alg":"EdDSA", "typ":"JWT" and the signing key's "kid" in the protected header. That kid
	// must be among the kids Keys returns for tenant from then on, for as long as the token may
	// be valid. tenant is the tenant the token is for: a signer may keep keys per tenant or share
	// one set (KeyRing keeps them per tenant).
	Sign(ctx context.Context, tenant string, payload []byte) (string, error)

	// Keys returns the public keys that verify tenant's tokens that may still be valid: the keys
	// signing now and every earlier key until the last token it signed has expired. The JWKS
	// lists them in the order returned, so put the signing keys first. Each KID is unique and
	// non-empty; the caller may keep the result.
	Keys(ctx context.Context, tenant string) ([]PublicKey, error)
}

// AlgorithmSigner is a Signer that signs with more algorithms than EdDSA. The provider finds it
// by a type assertion on Config.Signer.
type AlgorithmSigner interface {
	Signer

	// Algorithms returns the JWS algorithms SignWith accepts, EdDSA first; discovery lists them
	// as id_token_signing_alg_values_supported.
	Algorithms() []string

	// SignWith is Sign with the JWS algorithm alg, one of Algorithms: "alg":alg in the protected
	// header, and a kid that Keys lists with that Algorithm.
	SignWith(ctx context.Context, tenant, alg string, payload []byte) (string, error)
}

// PublicKey is one verification key, as the JWKS publishes it.
type PublicKey struct {
	// KID is the key's "kid", as Sign puts it in the protected header.
	KID string
	// Algorithm is the JWS algorithm the key verifies, the JWK's "alg": AlgEdDSA, AlgEd25519,
	// AlgRS256 or AlgES256. Empty means AlgEdDSA.
	Algorithm string
	// Key is the public key: an ed25519.PublicKey of 32 bytes for EdDSA and Ed25519 (an OKP
	// JWK, RFC 8037), an *rsa.PublicKey of at least 2048 bits for RS256, an *ecdsa.PublicKey on
	// P-256 for ES256.
	Key crypto.PublicKey
	// Retired is when the key stopped signing; zero for a key signing now.
	Retired time.Time
}
