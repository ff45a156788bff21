package store

import "errors"

// Sentinel errors. Stores wrap them with context; callers test with errors.Is.
var (
	// ErrNotFound: the tenant, or the resource within the tenant, does not exist.
	ErrNotFound = errors.New("not found")
	// ErrConflict: a uniqueness rule would be broken (a userName already taken in the tenant,
	// an id already in use).
	ErrConflict = errors.New("conflict")
	// ErrMemberNotFound: a group member names no user of the group's tenant.
	ErrMemberNotFound = errors.New("member is not a user of the tenant")
	// ErrTooManyMembers: a Groups.Patch would leave the group with more members than its
	// GroupPatch.MaxMembers allows.
	ErrTooManyMembers = errors.New("too many members")
	// ErrInvalid: an argument the store cannot accept (an empty userName, a malformed tenant
	// id, an Update function that changed the id).
	ErrInvalid = errors.New("invalid")
	// ErrUsed: an authorization code was consumed before (a replay).
	ErrUsed = errors.New("already used")
)
