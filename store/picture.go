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

	// Failures counts the failed attempts since the last success, unlock or enrollment, from
	// every source network; LastFailure is when the latest of them was counted (zero when
	// Failures is 0). Networks is how many source networks those failures came from: the
	// authenticator's user-wide lock needs many, so that failures from one network lock only
	// that network (see NetworkFailures).
	Failures    int
	Networks    int
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
	// with Failures and Networks set to 0 and LastFailure to zero, no network's failures and no
	// familiar network: enrolling again unlocks, and starts afresh. ErrInvalid if c.UserID, c.Hash or c.Salt is empty; ErrNotFound
	// if the tenant or the user does not exist.
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

	// AddFailure counts a failed attempt of the user from network (a name the authenticator
	// chose, such as "192.0.2.0/24"), atomically: it adds one to the network's Failures and to
	// the credential's Failures, sets both LastFailure to at, adds one to the credential's
	// Networks if this is the network's first failure since the user's count was last reset,
	// and returns the new counts. Of n concurrent calls for one user each returns a different
	// FailureCounts.User, and of those for one network each a different FailureCounts.Network.
	// ErrInvalid if network is empty; ErrNotFound if there is no credential.
	AddFailure(ctx context.Context, tenant, userID, network string, at time.Time) (FailureCounts, error)

	// NetworkFailures returns the failed attempts of the user from network since the network's
	// last success: Failures 0 and a zero LastFailure when there are none. ErrNotFound if there
	// is no credential.
	NetworkFailures(ctx context.Context, tenant, userID, network string) (NetworkFailures, error)

	// ListNetworkFailures returns the failed attempts of the user per network, for every network
	// with a count above 0, ordered by network. ErrNotFound if there is no credential.
	ListNetworkFailures(ctx context.Context, tenant, userID string) ([]NetworkFailures, error)

	// Succeeded records s, a success of the user from s.Network at s.At: the network's count
	// goes (its failures are forgotten), and unless s.KeepUserCount the credential's Failures
	// and Networks are set to 0 and LastFailure to zero. Other networks keep their counts, but
	// after a reset count towards Networks again only from their next failure; under
	// s.KeepUserCount nothing counts again, s.Network included. s.Network
	// becomes the user's most recently passed familiar network, passed at s.At (see
	// FamiliarNetworks), and of the familiar networks only the s.KeepFamiliar most recently
	// passed stay (below 1: only s.Network). ErrInvalid if s.Network is empty; ErrNotFound if
	// there is no credential.
	Succeeded(ctx context.Context, tenant, userID string, s PictureSuccess) error

	// FamiliarNetworks returns the networks the user passed from, as Succeeded recorded and kept
	// them, each with the time of its latest success, the most recently passed first (equal
	// times ordered by network); none until the first success. Put and Create start a
	// credential with none; ResetFailures and Rehash keep them. ErrNotFound if there is no
	// credential.
	FamiliarNetworks(ctx context.Context, tenant, userID string) ([]FamiliarNetwork, error)

	// ResetFailures forgets every failure of the user: the credential's Failures and Networks
	// are set to 0 and LastFailure to zero, and every network's count goes. An unlock.
	// ErrNotFound if there is no credential.
	ResetFailures(ctx context.Context, tenant, userID string) error
}

// NetworkFailures counts the failed attempts at a user's picture password from one source
// network.
type NetworkFailures struct {
	Network string
	// Failures counts the attempts from the network since its last success, the user's unlock
	// or enrollment; LastFailure is when the latest was counted.
	Failures    int
	LastFailure time.Time
}

// FailureCounts are the counts after PictureCredentials.AddFailure counted a failure.
type FailureCounts struct {
	// Network is the network's Failures, User the credential's Failures and Networks the
	// credential's Networks.
	Network  int
	User     int
	Networks int
}

// FamiliarNetwork is a source network from which a user passed the picture password.
type FamiliarNetwork struct {
	Network string
	// Passed is when the user last passed from the network.
	Passed time.Time
}

// PictureSuccess is a passed attempt at a user's picture password, as
// PictureCredentials.Succeeded records it.
type PictureSuccess struct {
	// Network is the source network the user passed from, and At when.
	Network string
	At      time.Time
	// KeepFamiliar is how many familiar networks the user keeps, the most recently passed.
	KeepFamiliar int
	// KeepUserCount leaves the credential's Failures, Networks and LastFailure as they are: the
	// authenticator's user-wide lock outlives a success from a familiar network.
	KeepUserCount bool
}
