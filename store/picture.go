package store

import (
	"context"
	"time"
)

// PictureCredential is a user's enrolled picture password: an image and a sequence of click
// points on it, kept so that the points cannot be read back. Each point is discretized per axis
// (centered discretization): the offsets are kept in the clear, and the cell indices they give
// are hashed with a pepper and argon2id. The fields mean nothing to the store; the picture
// authenticator (oidc2fa/picture) writes and reads them.
type PictureCredential struct {
	Tenant string
	UserID string

	// Scheme is the version of the record's format and hash input.
	Scheme int
	// Image names the image in the authenticator's set, and ImageDigest is the SHA-256 of its
	// content when the user enrolled.
	Image       string
	ImageDigest []byte
	// Points is how many click points the password has, and Tolerance is r: a click is
	// accepted within r units of the enrolled point on each axis.
	Points    int
	Tolerance int
	// Offsets are the per-axis discretization offsets: x1, y1, x2, y2, … (2 × Points values).
	Offsets []int

	// PepperID names the pepper the hash input was keyed with.
	PepperID string
	// Salt, Hash and the argon2id parameters of the hash.
	Salt         []byte
	Hash         []byte
	ArgonTime    uint32
	ArgonMemory  uint32 // KiB
	ArgonThreads uint8

	// Failures counts attempts since the last success or enrollment that did not end in a
	// success; the authenticator locks the factor when it reaches its limit. LastFailure is
	// when the latest of them was counted (zero when Failures is 0): a lock runs from it.
	Failures    int
	LastFailure time.Time

	Created time.Time // when the user enrolled
	Updated time.Time // when the hash was last written (enrollment or rehash)
}

// PictureCredentials stores picture passwords and counts failed attempts, so that a lock holds
// on every instance that shares the store and across restarts.
//
// Every method is safe for concurrent use. A credential belongs to a user: deleting the user
// or the tenant deletes it. Methods that name a user of a deleted or unknown tenant return
// ErrNotFound.
type PictureCredentials interface {
	// Get returns the credential of the user. ErrNotFound if the user has none.
	Get(ctx context.Context, tenant, userID string) (*PictureCredential, error)

	// Put stores c as the credential of c.UserID in c.Tenant, replacing the one the user had,
	// with Failures set to 0 and LastFailure to zero: enrolling again unlocks. ErrInvalid if
	// c.UserID, c.Hash or c.Salt is empty; ErrNotFound if the tenant or the user does not
	// exist.
	Put(ctx context.Context, c PictureCredential) error

	// Create stores c as Put does, but only if the user has no credential: ErrConflict if it
	// has one (nothing is changed). Of concurrent Creates for one user exactly one succeeds.
	Create(ctx context.Context, c PictureCredential) error

	// Rehash replaces the hash of the user's credential (Scheme, PepperID, Salt, Hash, the
	// argon2id parameters, Updated) with c's, if the stored Hash still equals oldHash; every
	// other field, Failures included, is kept. ErrConflict if the stored Hash differs (the user
	// enrolled again meanwhile); ErrNotFound if there is no credential.
	Rehash(ctx context.Context, c PictureCredential, oldHash []byte) error

	// Delete removes the user's credential. ErrNotFound if there is none.
	Delete(ctx context.Context, tenant, userID string) error

	// AddFailure atomically adds one to the user's Failures, sets LastFailure to at, and
	// returns the new count. Of n concurrent calls each returns a different count. ErrNotFound
	// if there is no credential.
	AddFailure(ctx context.Context, tenant, userID string, at time.Time) (int, error)

	// ResetFailures sets the user's Failures to 0 and LastFailure to zero: an unlock.
	// ErrNotFound if there is no credential.
	ResetFailures(ctx context.Context, tenant, userID string) error
}
