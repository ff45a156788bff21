package store

import (
	"context"
	"time"

	"github.com/visid/visid/store/filter"
)

// Query selects, orders and pages resources for List.
//
// A page is chosen in one of three ways: by StartIndex (a position counted from the start of
// the ordered results), or, when After or Before is set, by a keyset Position that an earlier
// Page returned (Page.Next, Page.Prev). A keyset page costs what the first page costs, however
// deep it is, and a walk by Next from the first page to the last neither skips nor repeats a
// resource that existed throughout the walk, whatever was created or deleted meanwhile.
type Query struct {
	// Filter keeps the resources it matches; nil keeps all. It must have been parsed for the
	// resource type being listed (schema.User or schema.Group).
	Filter filter.Expr
	// Sort orders the results; the zero Sort is creation order.
	Sort Sort
	// StartIndex is the 1-based position of the first result in the filtered, ordered list;
	// values below 1 mean 1. It is ignored when After or Before is set.
	StartIndex int
	// Count is the most results to return. 0 returns none, only the total; negative returns
	// all from the page's start on.
	Count int
	// WithoutMembers makes Groups.List return each group with Members nil, reading none of
	// them, so a page costs nothing per member. Users.List ignores it.
	WithoutMembers bool
	// After, when set, starts the page with the first result that orders after this position.
	After *Position
	// Before, when set (and After is not), makes the page the Count results that order
	// right before this position (all of them when Count is negative), in order.
	Before *Position
}

// Page is one page of a List.
type Page[T any] struct {
	// Resources holds the page, in the Query's order.
	Resources []T
	// TotalResults is the number of resources the filter matched, over all pages.
	TotalResults int
	// Next is the position of the page's last resource when more results follow it; nil on
	// the last page, and when Count is 0 or negative. Query.After = Next asks for the next page.
	Next *Position
	// Prev is the position of the page's first resource when the page does not start the list:
	// StartIndex above 1, After set (results came before it when the position was read), or
	// Before set and more results order before the page. nil on an empty page and when Count
	// is 0. Query.Before = Prev asks for the previous page.
	Prev *Position
}

// Users stores the users of each tenant.
//
// Every method is safe for concurrent use. Every user belongs to one tenant; a user id of
// another tenant is not found. userName is unique within a tenant, compared case-insensitively
// (schema.Fold); the same userName may exist in two tenants. Listing order is creation order unless the Query sorts.
type Users interface {
	// Create stores u in tenant and returns it as stored. An empty u.ID gets a new id
	// (NewID("user")). ErrNotFound if the tenant does not exist; ErrInvalid if u.UserName is
	// empty; ErrConflict if the userName (case-insensitively) or the id is taken in the tenant,
	// or if another user of the tenant holds a value of u.Unique (see UniqueValue). Of
	// concurrent creates of one userName, or of one unique value, exactly one succeeds. u.Groups is ignored. A zero
	// u.Meta.Created becomes the time of the create and a zero u.Meta.LastModified becomes
	// Meta.Created, so every stored user has both; times the caller set are kept.
	// Meta.Version is 1, whatever the caller set.
	Create(ctx context.Context, tenant string, u User) (*User, error)

	// Get returns the user with Groups derived from current memberships. ErrNotFound if the
	// tenant or the user does not exist.
	Get(ctx context.Context, tenant, id string) (*User, error)

	// Update atomically reads the user, calls fn with a copy, and stores what fn leaves: no
	// other write to the user can come between the read and the write. If fn returns an error,
	// nothing is stored and Update returns that error as it is. ErrNotFound if the user does
	// not exist; ErrConflict if fn renamed the user to a userName taken in the tenant, or gave
	// it a value of Unique another user holds (of concurrent Updates of different users to one
	// unique value exactly one succeeds); a value the user drops is free for others at once;
	// ErrInvalid if fn changed the id or emptied the userName. Changes fn makes to Groups are
	// ignored. fn must not call the store. It returns the user as stored.
	//
	// fn may be called more than once: a backend may call it outside its write transaction and,
	// when another write to the user came between, read the user again and call fn again on the
	// new copy; only the last call's result is stored. So fn must have no effect outside the copy
	// it is given (and what it returns), and must not keep the copy.
	//
	// When fn changed the user (anything but Meta and Groups; an empty list is the same as none)
	// and left Meta.LastModified as it was, LastModified becomes the time of the update; an
	// Update that changes nothing keeps it, and a LastModified that fn set is kept. A Meta time
	// that fn zeroed is restored.
	//
	// Meta.Version moves with the same rule as LastModified but cannot be set: it becomes one
	// more than fn saw when fn changed the user and stays when it did not; a Version that fn set
	// is ignored. fn sees the stored version, so an fn that returns an error (say
	// ErrVersionMismatch) unless v.Meta.Version is the one its caller expects makes a
	// conditional update: the comparison and the write are one atomic step.
	Update(ctx context.Context, tenant, id string, fn func(*User) error) (*User, error)

	// Delete removes the user and its membership of every group. ErrNotFound if the user does
	// not exist (so a repeated Delete reports ErrNotFound).
	Delete(ctx context.Context, tenant, id string) error

	// DeleteIfVersion is Delete of a user whose Meta.Version is version:
	// ErrVersionMismatch, and nothing removed, when the user has another version. The
	// comparison and the removal are one atomic step: no write can come between them.
	// ErrNotFound if the user does not exist.
	DeleteIfVersion(ctx context.Context, tenant, id string, version int64) error

	// List returns the page of q over the tenant's users, in q.Sort's order (creation order
	// when it is zero): stable, so paging through an unchanged tenant neither skips nor repeats
	// a user, and a keyset walk (Query.After) does not either under concurrent creates and
	// deletes. ErrNotFound if the tenant does not exist; ErrInvalid if q.Sort names an
	// attribute that is not sortable (Sortable) or a position does not fit q.Sort.
	List(ctx context.Context, tenant string, q Query) (Page[User], error)
}

// Groups stores the groups of each tenant.
//
// Every method is safe for concurrent use. Members are users of the group's tenant; a group
// lists a user at most once. displayName is not unique. Listing order is creation order unless the Query sorts.
type Groups interface {
	// Create stores g in tenant and returns it as stored. An empty g.ID gets a new id
	// (NewID("group")). Repeated member values are kept once. ErrNotFound if the tenant does
	// not exist; ErrInvalid if g.DisplayName is empty; ErrConflict if the id is taken or
	// another group of the tenant holds a value of g.Unique (as Users.Create for users);
	// ErrMemberNotFound if a member is not a user of the tenant (nothing is stored). Meta times
	// and version are set as Users.Create sets them.
	Create(ctx context.Context, tenant string, g Group) (*Group, error)

	// Get returns the group with each member's Display and Type filled. ErrNotFound if the
	// tenant or the group does not exist.
	Get(ctx context.Context, tenant, id string) (*Group, error)

	// GetWithoutMembers returns the group as Get does but with Members nil, reading none of
	// them: its cost does not grow with the group. ErrNotFound as for Get.
	GetWithoutMembers(ctx context.Context, tenant, id string) (*Group, error)

	// Update atomically reads the group, calls fn with a copy and stores what fn leaves; no
	// other write to the group comes between. Concurrent Updates that each add a member all
	// take effect. If fn returns an error nothing is stored and Update returns it as it is.
	// ErrNotFound if the group does not exist; ErrMemberNotFound if fn added a member that is
	// not a user of the tenant; ErrInvalid if fn changed the id or emptied the displayName;
	// ErrConflict if fn gave the group a value of Unique another group holds. fn must not
	// call the store. It returns the group as stored. Meta.LastModified moves as
	// in Users.Update: when fn changed the displayName, the externalId or the member values
	// (not their derived display and type). Meta.Version moves as in Users.Update, on the
	// same changes: every write that changes the group's members (by any method) moves it.
	// Deleting a member user moves the version of each of its groups (not their LastModified);
	// renaming one changes its members' display but not the groups' versions.
	Update(ctx context.Context, tenant, id string, fn func(*Group) error) (*Group, error)

	// Patch atomically applies p to the group without reading its member list: adding or
	// removing k members costs O(k log n) in a group of n members, whatever n. No other write
	// to the group comes between; concurrent Patches and Updates that each add a member all
	// take effect. Members added go after the others, in p.Add's order; a user who is a member
	// already keeps its place, and removing a user who is not a member does nothing.
	//
	// ErrNotFound if the group does not exist; ErrMemberNotFound if p.Add names a user that is
	// not a user of the tenant; ErrInvalid if a user is in both p.Add and p.Remove, or if
	// p.Attrs changed the id or emptied the displayName; ErrTooManyMembers as p.MaxMembers
	// says; ErrConflict if p.Attrs gave the group a value of Unique another group holds (of
	// concurrent Patches to one unique value exactly one succeeds). If p.Attrs returns an error nothing is stored and Patch returns it as it is.
	// Nothing is stored on any error.
	//
	// Meta.LastModified becomes p.Modified (zero: the time of the write) when the patch
	// changed the displayName, the externalId or the membership and p.Attrs left LastModified
	// as it was; a Patch that changes nothing keeps it. Events are those of Update for the same
	// change: group.updated when the attributes changed (its data is the group with its
	// members, which are read only then), and one group.member_added or group.member_removed a
	// user whose membership changed. It returns the group as stored, with its members when
	// p.WithMembers is set and with Members nil otherwise.
	Patch(ctx context.Context, tenant, id string, p GroupPatch) (*Group, error)

	// Delete removes the group. ErrNotFound if it does not exist.
	Delete(ctx context.Context, tenant, id string) error

	// DeleteIfVersion is Delete of a group whose Meta.Version is version, as
	// Users.DeleteIfVersion: ErrVersionMismatch and nothing removed when it has another.
	DeleteIfVersion(ctx context.Context, tenant, id string, version int64) error

	// List returns the page of q over the tenant's groups, as Users.List does for users.
	List(ctx context.Context, tenant string, q Query) (Page[Group], error)
}

// GroupPatch is a change that Groups.Patch makes to a group: members added and removed by id,
// and a change of its other attributes.
type GroupPatch struct {
	// Attrs, when not nil, changes the group's attributes other than its members, as
	// Groups.Update's fn does: it gets a copy of the group with Members nil, and what it leaves
	// is stored (Members excepted, which it cannot change). It may be called more than once, so
	// it must have no effect outside the copy it is given, and it must not call the store.
	Attrs func(*Group) error
	// Add and Remove name the users (by id) who become members and who stop being members.
	// Repeated ids count once.
	Add, Remove []string
	// Modified is the time LastModified takes when the patch changes the group. Zero: the
	// store's clock.
	Modified time.Time
	// MaxMembers, when above 0, is the most members the group may have after the patch: one
	// that would leave it with more than MaxMembers and more than it had fails with
	// ErrTooManyMembers (so a group stored under a higher limit can still shrink).
	MaxMembers int
	// WithMembers makes Patch return the group with its members, read in the same write: a
	// cost in proportion to the group's size.
	WithMembers bool
}

// MaxTenantPage is the most tenants one Tenants.List returns: a host with 100,000 tenants
// reads them in pages, never all at once.
const MaxTenantPage = 1000

// Tenants stores tenants.
//
// Every method is safe for concurrent use.
type Tenants interface {
	// Create stores t. ErrInvalid if t.ID is not a valid tenant id (see Tenant.ID) or
	// CheckTenant refuses t's display name or look;
	// ErrConflict if a tenant with that id exists. Of concurrent creates of one id exactly one
	// succeeds.
	Create(ctx context.Context, t Tenant) error

	// Get returns the tenant. ErrNotFound if it does not exist.
	Get(ctx context.Context, id string) (*Tenant, error)

	// List returns a page of tenants: those whose id orders after after (Go string order, that
	// is bytes), ordered by id, at most limit of them; after "" starts at the first tenant, and
	// after need not name a tenant that exists (a deleted one's id works as well). A page
	// shorter than limit is the last; an empty page (no tenant after after) is not an error.
	// Passing each page's last id as the next call's after walks every tenant: the walk
	// neither skips nor repeats a tenant that existed throughout it, whatever was created or
	// deleted meanwhile. ErrInvalid if limit is below 1 or above MaxTenantPage. The tenants
	// come without the bytes of their logos (Logo is nil; LogoType and LogoHash are set): a
	// caller that wants a logo Gets its tenant. A page's cost grows with limit, not with the
	// number of tenants.
	List(ctx context.Context, after string, limit int) ([]Tenant, error)

	// Count returns the number of tenants, without reading them.
	Count(ctx context.Context) (int, error)

	// Update applies fn to a copy of the tenant and stores the result atomically: of
	// concurrent updates none is lost. It returns the tenant as stored. ErrNotFound if it does
	// not exist; ErrInvalid if fn changed the id or left a value CheckTenant refuses (nothing
	// is stored then); an error of fn is returned as it is, and nothing is stored. Under a
	// Change it records tenant.updated when anything changed.
	Update(ctx context.Context, id string, fn func(*Tenant) error) (*Tenant, error)

	// Delete removes the tenant with all its users (and their picture credentials and
	// passkeys), groups, clients and signing keys, so that a tenant made again with the same id signs with keys of
	// its own. ErrNotFound if it does not exist.
	Delete(ctx context.Context, id string) error
}

// APIKeys stores SCIM API keys.
//
// Every method is safe for concurrent use. Secrets are never stored, only their SHA-256.
type APIKeys interface {
	// Create stores k. An empty k.ID gets a new id (NewID("key")). ErrConflict if the id or
	// the secret hash is already stored.
	Create(ctx context.Context, k APIKey) (*APIKey, error)

	// ByHash returns the key whose secret hashes to h, revoked or not (the caller decides).
	// ErrNotFound if there is none.
	ByHash(ctx context.Context, h [32]byte) (*APIKey, error)

	// Get returns the key. ErrNotFound if it does not exist.
	Get(ctx context.Context, id string) (*APIKey, error)

	// List returns every key, in creation order.
	List(ctx context.Context) ([]APIKey, error)

	// Touch records that the key was used at t. LastUsed never moves back: an earlier t than
	// the stored one is ignored. ErrNotFound if the key does not exist.
	Touch(ctx context.Context, id string, t time.Time) error

	// Revoke marks the key revoked at t; revoking a revoked key keeps the first time.
	// ErrNotFound if the key does not exist.
	Revoke(ctx context.Context, id string, t time.Time) error
}

// APIKeyVersions is an optional capability of an APIKeys store, found by type assertion. A
// caller that keeps keys it has read — scimsvc caches the key each request presents — may trust
// them for as long as KeyVersion returns the same number: KeyVersion changes whenever Create or
// Revoke changes the store's keys, by this process or any other that shares the store, before the
// call that changed them returns. Touch need not change it. A store that cannot promise this
// does not implement it, and callers then read every key from the store (or trust it for a short
// time they choose).
type APIKeyVersions interface {
	KeyVersion() uint64
}

// Backend bundles one backend's implementation of every store contract, as the conformance
// suite (store/storetest) and the handlers' Configs take them.
type Backend struct {
	Tenants      Tenants
	Users        Users
	Groups       Groups
	APIKeys      APIKeys
	Clients      Clients
	Codes        Codes
	Interactions Interactions
	Pushed       PushedRequests
	AccessTokens AccessTokens
	Pictures     PictureCredentials
	Passkeys     Passkeys
	SigningKeys  SigningKeys
	Events       Events
	Webhooks     Webhooks
}
