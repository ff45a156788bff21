// Package scimsvc is a multi-tenant SCIM 2.0 API (RFC 7643, RFC 7644) for Users and Groups, as
// Microsoft Entra ID and Okta drive it, as an http.Handler to mount on the host's own mux:
//
//	scim, err := scimsvc.New(scimsvc.Config{
//		Tenants: backend.Tenants, Users: backend.Users, Groups: backend.Groups, APIKeys: backend.APIKeys,
//		BaseURL: "https://id.example.com/scim/v2",
//	})
//	if err != nil {
//		return err
//	}
//	mux.Handle("/scim/v2/", http.StripPrefix("/scim/v2", scim))
//
// What it does for clients — endpoints, authentication and rate limits, what clients may send,
// PATCH, Bulk, versions and If-Match, paging and cursors, filters, extensions, large groups — is
// described once, in https://github.com/visid/visid/blob/main/docs/scim.md. This comment is for
// whoever maintains the package.
//
// # Parts
//
// A request goes through handler.go (tenant from the path, API key through keycache.go and
// apikey.go, rate limit, the query's and the conditions' checks, then the route), resources.go
// (create, get, replace, patch, delete of Users and Groups over the store's atomic Update),
// list.go, search.go and cursor.go (lists, POST searches, keyset cursors), members.go (member
// changes that never read a group's members), bulk.go (a BulkRequest, each operation through the
// handler's own mux), and leaves through errors.go, the one place that turns an error into a
// status and a SCIM error body. A body is read by jsonbody.go and jsontree.go into a tree that
// decode.go, tree.go and patch.go/patchpath.go work on; responses are written by encode.go and
// projection.go. etag.go holds versions and conditions (MaxConditionTags), extensions.go the
// host's extension schemas, deadline.go a request deadline that arms no timer, telemetry.go the
// metrics and spans, text.go the rule that every string is UTF-8 text without NUL.
//
// # Fast paths, and the tests that prove each equal to the general path
//
// Each fast path is taken only when its shortcut gives what the general path would; conditions
// (If-Match), limits and validation are decided before a request picks a path.
//
//   - decodeuser.go: decodeUser reads a User body straight into a store.User without a tree;
//     FuzzTypedUserDecode compares it with the generic decoder and the handler's answers.
//   - patchdecode.go: decodePatch reads a PatchOp body straight into operations; FuzzDecodePatch
//     compares it with parsePatchBody.
//   - patchtyped.go: a PATCH that only sets single-valued simple attributes (a typedPatch) sets
//     them in place inside the store's Update, honouring If-Match there too; FuzzTypedPatch
//     compares the user it makes, and whether it says the user changed, with the generic
//     engine's (a tree and applyPatch).
//   - encodetyped.go: Users and Groups with only core attributes are written without the
//     schema-driven encoder; FuzzTypedUserEncoder and FuzzTypedGroupEncoder compare the bytes.
//   - members.go: a PATCH of members by value is one store.Groups.Patch;
//     TestGroupPatchMembersWithoutReadingThem and the ETag tests check it against a full update.
//   - keycache.go: a known API key is trusted from memory only while that is as safe as a store
//     read (store.APIKeyVersions, or Config.APIKeyCacheTTL).
//
// Errors are SCIM Error bodies with the scimType of RFC 7644 §3.12; a 500 says nothing of its
// cause, which is logged.
package scimsvc
