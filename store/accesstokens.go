package store

import (
	"context"
	"time"
)

// AccessToken is an access token the provider issued beside an ID token to a client that asked
// for one. It is good only at the tenant's UserInfo endpoint. Only the token's SHA-256 is
// stored.
type AccessToken struct {
	Hash     [32]byte // SHA-256 of the token
	Tenant   string
	ClientID string
	Subject  string // the id of the user the token is about
	// CodeHash is the SHA-256 of the authorization code whose redemption issued the token: a
	// replay of that code revokes it (RFC 6749 §4.1.2).
	CodeHash [32]byte
	Created  time.Time
	Expires  time.Time
}

// AccessTokens stores access tokens until they are revoked or expire.
//
// Every method is safe for concurrent use. Deleting a tenant deletes its tokens.
type AccessTokens interface {
	// Create stores t. ErrInvalid if t.Tenant, t.ClientID or t.Subject is empty, t.Hash is all
	// zero or t.Expires is zero; ErrConflict if a token with t.Hash is stored; ErrNotFound if
	// the tenant does not exist.
	Create(ctx context.Context, t AccessToken) error

	// Get returns the token whose hash is h. ErrNotFound if there is none: never issued,
	// revoked, or removed by DeleteExpired. Get does not look at Expires: the caller compares
	// it with its clock.
	Get(ctx context.Context, h [32]byte) (*AccessToken, error)

	// RevokeCode removes every token whose CodeHash is codeHash and returns how many it
	// removed; none is not an error.
	RevokeCode(ctx context.Context, codeHash [32]byte) (int, error)

	// DeleteExpired removes every token whose Expires is before now, and returns how many it
	// removed.
	DeleteExpired(ctx context.Context, now time.Time) (int, error)
}
