// Package storetest is the conformance suite of the store contracts: one suite of named subtests
// per contract, which every backend runs from its own tests. It is the only place the contracts
// are tested:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Backend {
//			return memstore.New().Backend()
//		})
//	}
//
// Run calls newBackend once for each subtest and expects an empty backend that shares no state
// with any other it returned: subtests run in parallel (t.Parallel). newBackend may register
// cleanup with t.Cleanup. A backend that needs a server (PostgreSQL) skips in its own test, before
// calling Run, when it has no address to connect to.
//
// A backend need not hold every store. A host that keeps its directory in its own storage
// (Tenants, Users, Groups, APIKeys: what scimsvc needs) and leaves the rest to visid's stores
// returns a store.Backend with only those four set; Run runs every suite of those four and skips
// each other suite, naming the store it lacks ("the backend holds no Clients"). A suite or a
// single test that needs a store besides its own (users need tenants) is skipped naming it.
// Suites lists each suite with the stores it needs.
//
// The suites, each a group of subtests named after the contract sentence they check (run one
// with, for example, go test -run 'TestConformance/Users/UpdateFnErrorStoresNothing'):
//
//   - Tenants, TenantLook: store.Tenants, and the look (name, colours, logo) CheckTenant checks;
//   - Users, Groups, GroupPatch, Meta, Versions: store.Users and store.Groups, memberships,
//     Groups.Patch, meta.created/lastModified and versions;
//   - APIKeys, Clients, Codes, Interactions, PushedRequests, AccessTokens, Pictures, Passkeys,
//     SigningKeys: one suite per store of the same name;
//   - Paging, Keyset, Sort: listing order, startIndex paging, keyset positions and sortBy;
//   - Filters: a table of SCIM filters over a fixed data set (fixture.go) with the exact
//     expected results; its read-only cases share one backend, filled once;
//   - Concurrency: every "concurrent" sentence, run with many goroutines released at once (for
//     example exactly one of 20, and of 200, concurrent Codes.Consume of one code wins);
//   - Events, Webhooks, WebhooksDue: the event log written with each change, webhook endpoints,
//     leases and delivery state, and Webhooks.Due, which finds the endpoints due across tenants
//     (races of deliveries against new events included);
//   - Text: values that are not text (NUL, invalid UTF-8) are stored or refused as the contracts
//     say, on every store;
//   - Extensions: host-defined schema extensions and their uniqueness.
//
// Every method of every contract returns store.ErrUnavailable, wrapped, when the backend cannot
// answer now (its database stopped, restarting, out of connections or disk, read-only, locked
// past its busy timeout): handlers answer 503 with Retry-After for it and 500 for any error they
// cannot place. The suite has no subtest for it: it cannot make a backend's database go away
// without knowing the backend, so each backend tests it in its own tests (store/sqlstore stops
// a PostgreSQL server of its own and fills a SQLite file; see TestUnavailable… there).
//
// Writing a backend of your own is described in https://github.com/visid/visid/blob/main/docs/production.md#writing-your-own-backend.
package storetest
