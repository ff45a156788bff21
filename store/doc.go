// Package store is visid's persistence contract: the value types (User, Group, Tenant, APIKey,
// and for the second factor Client, Code, Interaction, PushedRequest, AccessToken,
// PictureCredential, Passkey, SigningKey; Event and WebhookEndpoint for the event log), the
// sentinel errors, and one small interface per artifact, the fourteen fields of a Backend:
// Tenants, Users, Groups, APIKeys (the directory scimsvc serves), Clients, Codes, Interactions,
// PushedRequests, AccessTokens, PictureCredentials, Passkeys, SigningKeys (the second factor's),
// Events and Webhooks (the event log and its delivery). It has no behaviour of its own beyond
// checks of values (CheckTenant, CheckLogo) and ids; backends implement it:
//
//   - store/memstore, in memory with real indexes, for tests and embedding;
//   - store/sqlstore, SQLite (the embedded default) and PostgreSQL;
//   - a host's own backend, which proves itself with store/storetest.Run.
//
// Handlers take the interfaces, usually bundled as a Backend:
//
//	mem := memstore.New()
//	b := mem.Backend() // store.Backend{Tenants: …, Users: …, Groups: …, APIKeys: …, Clients: …, …}
//
// Lists take a Query whose Filter is parsed by store/filter against the resource type in
// store/schema; a backend that cannot run a filter itself evaluates it with filter.Match, which
// *User and *Group support through their FilterValue methods. A Query's Sort orders by one
// attribute (SortValue, ComparePositions say how), and its After and Before page by keyset
// Positions that the previous Page returned (Page.Next, Page.Prev), which a backend should read
// from an index rather than skip to.
//
// Tenants are many (a SaaS host has one per customer organisation: plan for 100,000), so every
// read a request makes names its tenant and is served by an index, and background work asks for
// what is due across tenants rather than visiting each: SigningKeys.List reads one tenant's keys,
// SigningKeys.Tenants pages through the tenants that have keys. A contract that changes is named
// in the repository's CHANGELOG.md, with what a host's own backend must do.
//
// Errors are the sentinels below, wrapped with context: test them with errors.Is. A backend
// that cannot answer now (its database stopped, restarting, out of connections or disk,
// read-only, locked) returns ErrUnavailable wrapped beside the cause, from any method: the
// handlers answer 503 with Retry-After for it, and 500 for an error they cannot place.
//
// Tenants are many — a host may have 100,000 — so Tenants.List returns a page of at most
// MaxTenantPage tenants after a cursor (the last id of the page before) and Tenants.Count
// counts them without reading them. This is a breaking change of the contract: List took no
// cursor and returned every tenant before, and Count is new, so a host's own Tenants backend
// implements both (store/storetest checks them) and a caller of List walks the pages.
//
// Choosing a store, and running one in production, is described in https://github.com/visid/visid/blob/main/docs/production.md#choosing-a-store.
package store
