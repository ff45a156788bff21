package store

import (
	"context"
	"encoding/json"
	"time"
)

// EventType names what an event records.
type EventType string

// The event types. Each is written by the store in the same atomic write as the change it
// records, when the write's context carries a Change (WithChange).
const (
	EventUserCreated     EventType = "user.created"
	EventUserUpdated     EventType = "user.updated"     // any change but active
	EventUserDeactivated EventType = "user.deactivated" // active went from true to false
	EventUserReactivated EventType = "user.reactivated" // active went from false to true
	EventUserDeleted     EventType = "user.deleted"

	EventGroupCreated       EventType = "group.created"
	EventGroupUpdated       EventType = "group.updated" // any change but the members
	EventGroupDeleted       EventType = "group.deleted"
	EventGroupMemberAdded   EventType = "group.member_added"   // one event a user
	EventGroupMemberRemoved EventType = "group.member_removed" // one event a user

	// The second factor's, which oidc2fa appends (Config.Events) as sign-ins end.
	EventSecondFactorSucceeded EventType = "secondfactor.succeeded"
	EventSecondFactorFailed    EventType = "secondfactor.failed" // a sign-in ended without passing
	EventSecondFactorLocked    EventType = "secondfactor.locked" // a sign-in ended on a locked factor
	// EventSecondFactorUnlocked is recorded by PictureCredentials.ResetFailures under a Change
	// when the count it resets was above zero (an administrator's unlock).
	EventSecondFactorUnlocked EventType = "secondfactor.unlocked"
	EventEnrollmentCompleted  EventType = "enrollment.completed"
	// EventPasskeyRemoved is recorded by Passkeys.Delete under a Change: its subject is the
	// user, its data {"passkey":"<credential id, base64url>","name":"…"}, never the key.
	EventPasskeyRemoved EventType = "secondfactor.passkey_removed"

	// An OpenID client's, recorded by Clients.Create, Update and Delete under a Change: its
	// data is the client without its secret's hash.
	EventClientCreated       EventType = "client.created"
	EventClientUpdated       EventType = "client.updated" // anything but the secret changed
	EventClientSecretRotated EventType = "client.secret_rotated"
	EventClientDeleted       EventType = "client.deleted"

	// A SCIM API key's, recorded by APIKeys.Create and Revoke under a Change in the log of
	// each tenant the key may act on: its data is the key without its secret's hash.
	EventAPIKeyCreated EventType = "apikey.created"
	EventAPIKeyRevoked EventType = "apikey.revoked"

	// EventTenantUpdated is recorded by Tenants.Update under a Change when the tenant's
	// display name, look or second-factor policy changed: its data names what changed
	// ("changed") and gives the values after the change, the logo as its type, size and
	// SHA-256, never its bytes, and the policy as "second_factor" ("picture" for "").
	EventTenantUpdated EventType = "tenant.updated"
)

// Subject kinds: what an event's SubjectID names.
const (
	SubjectUser   = "user"
	SubjectGroup  = "group"
	SubjectClient = "client"
	SubjectAPIKey = "apikey"
	SubjectTenant = "tenant"
)

// Event is one entry of a tenant's event log.
type Event struct {
	// Cursor is the event's place in its tenant's log, set by the store: an opaque string,
	// ordered as the log is (a later event has a greater cursor, compared as strings).
	Cursor string
	Tenant string
	Type   EventType
	// Time is when the change was made: Change.Time, or the store's clock.
	Time time.Time
	// Actor made the change: an API key id (key_…), a client id (client_…) or "admin".
	Actor string
	// SubjectKind and SubjectID name what changed: SubjectUser and a user id, SubjectGroup
	// and a group id, ….
	SubjectKind string
	SubjectID   string
	// Data is the event's JSON document. For a user or group it is the resource after the
	// change (before it, for a deletion), as Change.Render gives it; for a member event,
	// {"group":"<group id>","user":"<user id>"}. Never a secret.
	Data json.RawMessage
}

// Events is the per-tenant, append-only log of what changed. Stores append to it themselves,
// in the same atomic write as each change made with a Change in its context: a change without
// its event, or an event without its change, cannot be stored.
//
// Every method is safe for concurrent use.
type Events interface {
	// List returns at most limit events of tenant that come after the cursor after ("" for
	// the start of the log), oldest first. A reader that calls List again with the cursor of
	// the last event it got never misses an event and never gets one twice, however many
	// writers commit meanwhile: an event is listed only once every event before it in the
	// log is committed. ErrInvalid if after is not a cursor of this store or limit is below
	// 1. The log of a tenant that does not exist is empty.
	List(ctx context.Context, tenant, after string, limit int) ([]Event, error)

	// Append records events that go with no change of a store's (a second factor passed, an
	// attempt that failed), in order, after every event recorded before. The store sets each
	// event's Cursor and Tenant; a zero Time is the store's clock. ErrInvalid if an event has
	// no Type, Actor, SubjectKind or SubjectID, or Data that is not JSON (nothing is recorded
	// then); ErrNotFound if the tenant does not exist.
	Append(ctx context.Context, tenant string, events ...Event) error

	// DeleteExpired removes the events of every tenant older than before and returns how
	// many it removed. Cursors of removed events stay valid for List.
	DeleteExpired(ctx context.Context, before time.Time) (int, error)
}

// Change says who makes the writes done with a context, for the events the store records
// with them.
type Change struct {
	// Actor is who makes the change: an API key id, a client id or "admin". Required.
	Actor string
	// Time is the events' time. Zero: the store's clock.
	Time time.Time
	// Render returns the data of a user or group event from the resource (a *User or a
	// *Group, as the store returns it). nil, or a nil result: the resource's JSON as
	// encoding/json writes the store's type. A store calls it once the resource is as the
	// write will return it, and changes it no more: scimsvc answers the write with what Render
	// gave for the very resource the store returned.
	Render func(resource any) (json.RawMessage, error)
}

type changeKey struct{}

// WithChange returns a context whose writes are recorded as c's events by a store that keeps
// an event log. Writes without a Change record no events.
func WithChange(ctx context.Context, c Change) context.Context {
	return context.WithValue(ctx, changeKey{}, &c)
}

// ChangeOf returns the Change of ctx, or nil. Stores call it.
func ChangeOf(ctx context.Context) *Change {
	c, _ := ctx.Value(changeKey{}).(*Change)
	return c
}
