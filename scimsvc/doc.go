// Package scimsvc is a multi-tenant SCIM 2.0 API (RFC 7643, RFC 7644) for Users and Groups, as
// Microsoft Entra ID and Okta drive it, as an http.Handler to mount on the host's own mux.
//
// Mount it under a prefix with http.StripPrefix; its paths are relative to the handler:
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
// serves GET /scim/v2/{tenant}/ServiceProviderConfig, /ResourceTypes[/{name}], /Schemas[/{urn}],
// POST, GET, PUT, PATCH and DELETE on /scim/v2/{tenant}/Users[/{id}] and
// /scim/v2/{tenant}/Groups[/{id}], POST /scim/v2/{tenant}/Bulk, and POST
// /scim/v2/{tenant}/Users/.search, /Groups/.search and /.search. The endpoint names are also
// answered in another case (/users); the tenant is case-sensitive. /scim/v2/{tenant}/Me answers
// every method with 501 and a SCIM error: requests are authenticated as provisioning clients,
// never as users (see ChangePasswordDocumentationURI).
//
// Users carry the whole core User schema of RFC 7643 §4.1 (ims, photos, entitlements and
// x509Certificates included; a binary value must be base64) and the enterprise extension, groups
// the core Group schema; the derived schemas attribute is filterable.
//
// # Searching with POST
//
// POST /{tenant}/Users/.search and /Groups/.search (RFC 7644 §3.4.3) read a SearchRequest
// body (filter, sortBy, sortOrder, cursor: strings; attributes, excludedAttributes: arrays of
// strings; startIndex, count: integers; schemas exactly the SearchRequest URN) and answer as the
// GET list with the same parameters. A body that is not one JSON object, or has another schema
// or member, is 400 invalidSyntax; a member of the wrong type is 400 invalidValue. POST
// /{tenant}/.search lists the matching users then the matching groups, each with its own
// schemas and meta.resourceType, paged by startIndex and count across both (totalResults is the
// sum); a filter that names an attribute one type lacks matches nothing of that type, and one
// valid for neither is 400 invalidFilter; sortBy and cursor are 400 invalidValue there. Searches
// count as lists for Config.MaxConcurrentLists.
//
// # Authentication and limits
//
// Every request, discovery included, needs "Authorization: Bearer <key>" with a key from
// IssueAPIKey: a missing, unknown or revoked key gets 401 with WWW-Authenticate; a key without
// the "scim" scope or without the tenant gets 403 (an unknown tenant too). Keys are stored as
// SHA-256 hashes. Each key may make DefaultRequestsPerMinute requests a minute to each tenant
// (Config.RateLimiter changes it); more get 429 with Retry-After and RateLimit-* headers.
// Requests without a valid key are limited per client address (Config.AddressLimiter), so keys
// cannot be guessed quickly; the key is checked first, so a valid key is never refused by
// others' failures. A key may have DefaultMaxConcurrentLists list requests in progress
// at once (Config.MaxConcurrentLists); one more gets 429 with Retry-After. Every request has a
// deadline, DefaultRequestTimeout (Config.RequestTimeout), that its store calls share; a request
// that outlives it gets 503 with Retry-After and stores nothing.
//
// # Metrics and traces
//
// The handler reports through the OpenTelemetry API to Config.MeterProvider and
// Config.TracerProvider (nil: the global providers, which record nothing until the host
// installs an SDK): MetricRequests and MetricRequestDuration by resource type, method and status,
// MetricRateLimited by limit, MetricAuthFailures by reason and MetricFilterErrors, and a server
// span per request. Metrics name a tenant only when Config.MetricsTenant is set.
//
// # What clients may send
//
// Request bodies may be application/scim+json or application/json, up to Config.MaxBodyBytes.
// Attribute names match case-insensitively, with or without their schema URN. The handler is
// lenient where real clients differ from the RFC and strict where data is at stake:
//
//   - unknown attributes and unknown extension schemas are ignored, as is "schemas";
//   - read-only attributes on input (id, meta, groups of a User, members' display) are ignored;
//   - null means absent; a boolean may arrive as the string "true" or "false" in any case;
//   - password is accepted and discarded: never stored, never returned;
//   - active defaults to true when absent;
//   - a value of the wrong type is 400 invalidValue, and nothing is stored;
//   - two keys of one object naming the same attribute (in another case, dotted and nested,
//     with and without the schema URN) are 400 invalidSyntax;
//   - strings are UTF-8 text without NUL: anything else in a body is 400 invalidValue, in a
//     filter 400 invalidFilter;
//   - a single-valued complex attribute (manager) may arrive as an array of one value, as
//     Entra ID sends it;
//   - a multi-valued attribute holds at most DefaultMaxMultiValued values, and a group at most
//     DefaultMaxGroupMembers members (Config.MaxMultiValued, Config.MaxGroupMembers); more is
//     400 invalidValue, and nothing is stored;
//   - at most one value of a multi-valued attribute is primary: setting one clears the others.
//
// PATCH supports add, replace and remove in any capitalisation, with paths such as
// name.familyName, emails[type eq "work"].value, members[value eq "…"], URN-qualified
// extension paths and, for remove, a value filter on a single-valued complex attribute
// (urn:…:enterprise:2.0:User:manager[value eq "…"]), and pathless add and replace whose value may hold dotted and URN-qualified
// keys. Beyond RFC 7644's grammar, a path may be an extension's URN alone: it addresses the
// whole extension object (add and replace take an object of its attributes, remove drops them
// all). The operations of one request apply in one atomic store write: all or none. A repeated
// add or a remove of something absent changes nothing, so clients may retry.
//
// A group's members are never read whole when a request need not: a PATCH that adds or removes
// members by value (with or without changes of displayName or externalId) is one
// store.Groups.Patch, whose cost does not grow with the group; a GET, list or write answer whose
// attributes or excludedAttributes leave out members reads none; and Config.GroupNoContent
// answers PUT and PATCH of a group with 204 No Content. Other PATCHes of members (a replace of
// all, a filter on display) read and rewrite the list in one store.Groups.Update. Every POST,
// PUT and PATCH answer honours attributes and excludedAttributes.
//
// # Host extension schemas
//
// Config.UserExtensions and Config.GroupExtensions add the host's own extension schemas (RFC
// 7643 §7), such as Entra ID's urn:ietf:params:scim:schemas:extension:CustomExtensionName:2.0:User,
// to every tenant of the handler. Their values are checked against the definitions (type,
// required attributes and required extensions, readOnly and immutable mutability, "server"
// uniqueness as a 409 uniqueness), kept in store.User.Extensions and store.Group.Extensions, and
// filtered, patched, projected and described under /Schemas and /ResourceTypes as the enterprise
// extension is.
//
// # Bulk
//
// POST /{tenant}/Bulk runs a BulkRequest (RFC 7644 §3.7) of POST, PUT, PATCH and DELETE
// operations on Users and Groups, each through the same code as the request it describes, as its
// own atomic write with its own events, and answers 200 with each operation's method, bulkId,
// status, location and, on failure, its SCIM error as response. A string "bulkId:x" in an
// operation's data or path stands for the id of the resource the POST with bulkId x creates,
// before or after it in the request (a POST referenced by an earlier operation runs first);
// operations whose references form a circle fail with 409 (RFC 7644 §3.7.1), as do those that
// reference a failed POST. failOnErrors n stops after the nth failure. A request of more than
// Config.BulkMaxOperations operations or Config.BulkMaxPayloadBytes bytes, both advertised in
// the ServiceProviderConfig, is 413 and runs nothing. Each operation counts as a request of the
// rate limit, all taken before the first runs: a request of more operations than the key has
// requests left is 429 and runs nothing. An operation's version is its If-Match, and a
// successful one reports the version it left.
//
// # Versions and conditional requests
//
// Every User and Group has a version (store.Meta.Version, a revision the store moves with every
// change) shown as meta.version and, on GET, POST, PUT and PATCH of one resource, as the ETag
// header: the weak entity tag W/"n" (RFC 7644 §3.14). If-Match on PUT, PATCH and DELETE writes
// only when the resource is at a version it names ("*": any); otherwise the answer is 412 and
// nothing changes. The store compares the version in the same atomic step as the write, so of
// writers racing with one version exactly one wins. If-None-Match on GET answers 304 without a
// body when the version matches. Tags compare weakly (W/"3" matches "3").
//
// Lists take filter (RFC 7644 §3.4.2.2, plus Entra ID's emails[type eq "work"].value eq "x"),
// sortBy and sortOrder (§3.4.2.3: any attribute a filter may name, strings by their caseExact,
// multi-valued attributes by their primary value; resources without a value last), count (at
// most MaxResults), attributes and excludedAttributes, and page by startIndex (the default) or
// by cursor (RFC 9865): "cursor=" asks for the first page, whose nextCursor and previousCursor
// ask for the next and the previous. Cursors are keyset positions that the store reads from
// directly (no OFFSET), signed with Config.CursorKey and bound to the tenant, the resource type,
// the filter and the sort; a walk by nextCursor lists every resource that exists throughout it
// once, whatever is created or deleted meanwhile. A bad cursor is 400 invalidCursor, one older
// than Config.CursorTimeout 400 expiredCursor. Without sortBy, listing order is creation order.
//
// Errors are SCIM Error bodies with the scimType of RFC 7644 §3.12; a 500 says nothing of its
// cause, which is logged.
//
// The guide to hosting the SCIM API, with a runnable program, Entra ID and Okta, paging, Bulk,
// ETags and extensions, is https://github.com/visid/visid/blob/main/docs/scim.md.
package scimsvc
