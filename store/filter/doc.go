// Package filter is the SCIM filter language of RFC 7644 §3.4.2.2: Parse turns a filter into
// an expression tree resolved against a resource type of store/schema, String prints it back in
// canonical form, and Match evaluates it in memory.
//
//	e, err := filter.Parse(`emails[type eq "work"].value eq "ann@example.com"`, schema.User())
//	if err != nil {
//		// *filter.Error: answer 400 invalidFilter with err.Error()
//	}
//	ok := filter.Match(e, user) // *store.User implements filter.Resource
//
// Semantics come from the schema table: attributes whose caseExact is false compare
// case-insensitively (schema.Fold), dateTime attributes compare as instants, booleans take only
// eq, ne and pr, and a comparison on a multi-valued attribute holds if any of its values
// satisfies it. An absent attribute, an empty string and an empty list have no value: pr is false
// for them, every comparison but "eq null" is false, and not (…) is the way to include them.
//
// Limits bound a filter's length, expression count and nesting depth, so a hostile filter is
// rejected in microseconds.
//
// The filter semantics, as SCIM clients see them, are in https://github.com/visid/visid/blob/main/docs/scim.md#filter-semantics.
package filter
