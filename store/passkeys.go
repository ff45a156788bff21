package store

import (
	"context"
	"time"
)

// MaxPasskeysPerUser is how many passkeys one user may hold: Passkeys.Create refuses more.
const MaxPasskeysPerUser = 16

// Passkey is a WebAuthn public-key credential a user registered as their second factor (a
// passkey). Its credential ID is unique in its tenant. The fields other than the ids and times
// mean nothing to the store; the login (oidc2fa/picture) writes and reads them.
type Passkey struct {
	Tenant string
	UserID string
	// ID is the credential ID the authenticator chose (1 to 1023 bytes): how an assertion names
	// the passkey.
	ID []byte
	// Name is a label for people, such as "Passkey added 2026-11-27".
	Name string
	// PublicKey is the credential's public key, COSE-encoded, and AttestationType the
	// attestation the authenticator gave ("none" when it gave none).
	PublicKey       []byte
	AttestationType string
	// AAGUID names the model of the authenticator (16 bytes; zeros when it does not say).
	AAGUID []byte
	// Transports are how the browser reaches the authenticator ("internal", "hybrid", "usb", …).
	Transports []string
	// SignCount is the authenticator's signature counter as of the latest use (0 for
	// authenticators that keep none). A later assertion must carry a greater one, unless both
	// are 0.
	SignCount uint32
	// BackupEligible and BackupState are the authenticator's backup flags: whether the
	// credential may be synced to other devices, and whether it is. BackupEligible never
	// changes after registration.
	BackupEligible bool
	BackupState    bool

	Created  time.Time
	LastUsed time.Time // zero until first used
}

// PasskeyUse is a verified assertion of a passkey, as Passkeys.Use records it.
type PasskeyUse struct {
	// SignCount is the counter the assertion carried, BackupState its backup flag, At when it
	// was verified.
	SignCount   uint32
	BackupState bool
	At          time.Time
	// OldSignCount is the counter the caller read before verifying: Use stores the new values
	// only if the stored counter is still that (the assertion was not raced by another).
	OldSignCount uint32
}

// Passkeys stores users' passkeys.
//
// Every method is safe for concurrent use. A passkey belongs to a user: deleting the user or
// the tenant deletes it. Methods that name a user of a deleted or unknown tenant return
// ErrNotFound.
type Passkeys interface {
	// Create stores p. ErrInvalid if p.UserID, p.ID (or an ID above 1023 bytes) or p.PublicKey is
	// empty; ErrNotFound if the tenant or the user does not exist; ErrConflict if the tenant
	// already has a passkey with p.ID (whatever its user), or the user holds
	// MaxPasskeysPerUser. Of concurrent Creates of one ID exactly one succeeds.
	Create(ctx context.Context, p Passkey) error

	// Get returns the tenant's passkey with credential ID id, whichever user holds it.
	// ErrNotFound if there is none.
	Get(ctx context.Context, tenant string, id []byte) (*Passkey, error)

	// List returns the user's passkeys in the order they were created. An empty list (not an
	// error) if the user has none; ErrNotFound if the user does not exist.
	List(ctx context.Context, tenant, userID string) ([]Passkey, error)

	// Use records u on the user's passkey id, if its SignCount still equals u.OldSignCount:
	// SignCount, BackupState and LastUsed (u.At) are set. ErrConflict if the stored counter
	// differs (another assertion was recorded meanwhile; nothing is changed); ErrNotFound if
	// the user holds no passkey id.
	Use(ctx context.Context, tenant, userID string, id []byte, u PasskeyUse) error

	// Delete removes the user's passkey id. ErrNotFound if the user holds no such passkey. Under
	// a Change it records EventPasskeyRemoved in the same atomic write.
	Delete(ctx context.Context, tenant, userID string, id []byte) error
}
