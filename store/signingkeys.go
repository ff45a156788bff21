package store

import (
	"context"
	"time"
)

// SigningKey is a private key that signs ID tokens, as a Signer keeps it in a store so that
// tokens stay verifiable across restarts and every instance publishes the same keys.
type SigningKey struct {
	// ID is the key's id (the JWS kid), unique in the store.
	ID string
	// Tenant is the tenant whose tokens the key signs; empty for a key every tenant shares (the
	// one key of earlier versions, kept until its tokens have expired).
	Tenant string
	// Algorithm is the JWS algorithm the key signs with, such as "EdDSA".
	Algorithm string
	// PrivateKey is the key, PKCS #8 DER. A backend that writes it to disk must encrypt it
	// (sqlstore: AES-GCM under a key-encryption key) and never store it in the clear.
	PrivateKey []byte
	// Created is when the key was made.
	Created time.Time
	// Activates is when the key starts signing; zero means at once. A key is published from
	// Created on, so a key made by a rotation is in every JWKS before its first signature.
	Activates time.Time
	// Retired is when the key stopped signing; zero while it signs. A retired key stays
	// published until its signer's retention has passed.
	Retired time.Time
}

// SigningKeys stores signing keys. Every method is safe for concurrent use.
//
// Every read names its tenant and is served by an index on the tenant: a provider with 100,000
// tenants reads one tenant's few keys to serve that tenant's JWKS or to sign its token.
type SigningKeys interface {
	// Add stores k. ErrInvalid if k.ID, k.Algorithm or k.PrivateKey is empty or k.Created is
	// zero; ErrConflict if the id is taken.
	Add(ctx context.Context, k SigningKey) error

	// List returns the keys of tenant, oldest Created first (by ID for equal times); an empty
	// tenant lists the shared keys (those stored without a tenant). None for a tenant without
	// keys.
	List(ctx context.Context, tenant string) ([]SigningKey, error)

	// Tenants returns the tenants that have at least one key, ordered by id, those after after
	// only (all of them for an empty after), at most limit; the shared keys' empty tenant is
	// never among them. A limit below 1 is ErrInvalid. It lets a rotation of every tenant's keys
	// go in batches and resume where it stopped.
	Tenants(ctx context.Context, after string, limit int) ([]string, error)

	// Retire sets the key's Retired to t, unless it is already retired: the first time stays.
	// ErrNotFound if there is no such key.
	Retire(ctx context.Context, id string, t time.Time) error

	// Delete removes the key. ErrNotFound if there is no such key.
	Delete(ctx context.Context, id string) error
}
