// Package memstore is visid's in-memory backend: every store contract, built like a small
// database rather than a slice scan. It is the backend for tests and for embedding.
//
//	mem := memstore.New()
//	backend := mem.Backend() // pass its fields to scimsvc.Config and oidc2fa.Config
//
// Each tenant has its own lock and its own indexes: users by id, by case-folded userName, by
// externalId and by case-folded emails.value; groups by id, by case-folded displayName, by
// externalId; and the reverse index from a user to its groups, which also answers
// members.value. An equality filter on one of those attributes (alone, inside "and", in an
// "or" of such, in a value filter such as members[value eq "…"], or in Entra's
// emails[type eq "work"].value eq "…") is answered from an index and the rest of the filter is
// matched on the few candidates; any other filter scans the tenant with filter.Match. Records are kept in creation order with a Fenwick tree over the live ones, so a
// page deep into a large tenant costs about what the first page costs; each record also has a
// creation stamp that compaction keeps, from which a keyset position (store.Query.After) in
// creation order is found by binary search. A sort or a filter orders the matches in memory.
//
// Clients live with their tenant, under its lock, in creation order; so do passkeys, by
// credential ID and by user, in an index the tenant's first passkey makes. Authorization codes and
// interactions are kept by hash and by id in two tables of their own, each behind its own lock;
// a consumed code stays, marked used, until DeleteExpired removes it, so a replay is told apart
// from an unknown code.
//
// A user is stored as one pointer-free row (see row.go): the garbage collector never scans it,
// and a lookup touches one block of memory. Every value going in or out is copied, so callers
// never share memory with the store.
//
// The guide to the stores is https://github.com/visid/visid/blob/main/docs/production.md#using-the-in-memory-store.
package memstore
