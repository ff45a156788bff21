package store

import (
	"errors"
	"time"
)

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
	// ErrVersionMismatch: a conditional write (DeleteIfVersion, or an Update function that
	// compared Meta.Version) found the resource at another version than the caller expected.
	ErrVersionMismatch = errors.New("version mismatch")
	// ErrUsed: an authorization code was consumed before (a replay).
	ErrUsed = errors.New("already used")
	// ErrUnavailable: the store cannot answer now, through no fault of the request: its
	// database is stopped, restarting, out of connections, out of disk, read-only or locked
	// past its busy timeout, or no connection came free before the request's deadline. A
	// later attempt may succeed. Backends wrap it beside the cause (errors.Is finds both);
	// handlers answer 503 with a Retry-After of UnavailableRetryAfter. A host's own backend
	// returns it for the same conditions to get the same answers.
	ErrUnavailable = errors.New("store unavailable")
)

// UnavailableRetryAfter is the Retry-After that visid's handlers send with the 503 of an
// ErrUnavailable: long enough for a database to restart or a connection to come free, short
// enough that a client's retry finds the store back soon after.
const UnavailableRetryAfter = 5 * time.Second
