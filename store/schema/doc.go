// Package schema is visid's one table of SCIM attributes: the core User schema, the
// enterprise User extension and the Group schema (RFC 7643 §4, §8.7), with each attribute's
// type, multi-valuedness, case sensitivity, mutability, returned and uniqueness
// characteristics and sub-attributes.
//
// The table drives filter semantics (store/filter), validation and projection in the SCIM API,
// the /Schemas discovery documents (an Attribute marshals to its RFC 7643 §7 JSON form), and the
// translation of filters to SQL. It imports nothing of visid's, so every package can use it.
//
//	rt := schema.User()
//	attr, sub, err := rt.Lookup("urn:ietf:params:scim:schemas:core:2.0:User:name.familyName")
//
// Fold is the case-insensitive form every backend uses for attributes whose caseExact is false.
//
// The User and Group schemas, as SCIM clients see them, are in https://github.com/visid/visid/blob/main/docs/scim.md#the-user-and-group-schemas.
package schema
