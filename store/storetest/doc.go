// Package storetest is the conformance suite of the store contracts (store.Tenants,
// store.Users, store.Groups, store.APIKeys, store.Clients, store.Codes, store.Interactions).
// Every backend runs it from its own tests; it is the only place the contracts are tested:
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
// The subtests are named after the contract sentence they check, grouped by interface:
// Tenants/…, Users/…, Groups/…, APIKeys/…, Clients/…, Codes/…, Interactions/…, Paging/… (Query
// and listing order), Filters/… (a table of SCIM filters over a fixed data set, with the exact
// expected results) and Concurrency/… (every "concurrent" sentence, run with many goroutines
// released at once: for example exactly one of 20, and of 200, concurrent Codes.Consume of one
// code wins). Run a single one with, for example,
//
//	go test -run 'TestConformance/Users/UpdateFnErrorStoresNothing' ./store/memstore
//
// Every method of every contract returns store.ErrUnavailable, wrapped, when the backend cannot
// answer now (its database stopped, restarting, out of connections or disk, read-only, locked
// past its busy timeout): handlers answer 503 with Retry-After for it and 500 for any error they
// cannot place. The suite has no subtest for it: it cannot make a backend's database go away
// without knowing the backend, so each backend tests it in its own tests (store/sqlstore stops
// a PostgreSQL server of its own and fills a SQLite file; see TestUnavailable… there).
//
// The filter table shares one backend, filled once, among its read-only cases; every other
// subtest gets a fresh backend.
//
// Writing a backend of your own is described in https://github.com/visid/visid/blob/main/docs/production.md#writing-your-own-backend.
package storetest
