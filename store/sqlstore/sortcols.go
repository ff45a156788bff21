package sqlstore

import (
	"fmt"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

// A sort column is a column of users or groups that holds one attribute's sort value
// (store.SortValue) for the row's resource, with an index of (tenant, column, seq), so that a
// list sorted by the attribute reads the index in order from its keyset position (see list).
// Every write of a resource's row sets its sort columns (sortColumnArgs) from the resource as
// stored; the migration that added them set those of the rows before it from their attrs rows.
type sortColumn struct {
	path   string // the attribute's path, as store.Sort.Path gives it
	column string // the column of the resource's row
	index  string // the index of (tenant, column, seq), for SQLite's INDEXED BY
}

// sortColumns returns the sort columns of the rows of kind, in the order sortColumnArgs gives
// their values. userName and a group's displayName have columns of their own, never NULL
// (user_name_fold, display_name_fold), which sortKey knows without this list.
func sortColumns(kind resourceKind) []sortColumn {
	if kind == kindGroup {
		return []sortColumn{
			{"meta.created", "created", "groups_created_order"},
			{"meta.lastModified", "last_modified", "groups_last_modified_order"},
		}
	}
	return []sortColumn{
		{"name.familyName", "family_name_fold", "users_family_name_order"},
		{"emails.value", "email_fold", "users_email_order"},
		{"meta.created", "created", "users_created_order"},
		{"meta.lastModified", "last_modified", "users_last_modified_order"},
	}
}

// sortColumnOf returns the sort column of s for resources of kind, or false when s has none.
// A Sort whose attribute differs in its caseExact from the resource type's has none: the
// column holds the value folded as the resource type says.
func sortColumnOf(kind resourceKind, s store.Sort) (sortColumn, bool) {
	if s.IsZero() {
		return sortColumn{}, false
	}
	for _, c := range sortColumns(kind) {
		if c.path != s.Path() {
			continue
		}
		std, ok := columnSort(kind, c)
		if !ok || std.Attr.MultiValued != s.Attr.MultiValued || sortDef(std).CaseExact != sortDef(s).CaseExact ||
			sortDef(std).Type != sortDef(s).Type {
			return sortColumn{}, false
		}
		return c, true
	}
	return sortColumn{}, false
}

// sortDef is the attribute whose values s orders by.
func sortDef(s store.Sort) *schema.Attribute {
	if s.Sub != nil {
		return s.Sub
	}
	return s.Attr
}

// columnSort is the Sort of column c in the resource type of kind.
func columnSort(kind resourceKind, c sortColumn) (store.Sort, bool) {
	attr, sub, err := attrResourceType(kind).Lookup(c.path)
	if err != nil || !store.Sortable(attr, sub) {
		return store.Sort{}, false
	}
	return store.Sort{Attr: attr, Sub: sub}, true
}

// sortColumnArgs returns the values of the sort columns of r, a resource of kind as stored
// (store.User with Groups, or store.Group), in the order of sortColumns: as the columns hold
// them (sortKey.arg), nil for none.
func sortColumnArgs(kind resourceKind, r filter.Resource) []any {
	cols := sortColumns(kind)
	out := make([]any, len(cols))
	for i, c := range cols {
		s, ok := columnSort(kind, c)
		if !ok {
			panic(fmt.Sprintf("sqlstore: sort column %s of %q names no sortable attribute", c.column, kind))
		}
		v := store.SortValue(r, s)
		if v.Kind == filter.Absent {
			continue
		}
		out[i] = sortKey{kind: v.Kind}.arg(v)
	}
	return out
}

// sortColumnSet returns "c1 = ?, c2 = ?, …" for the sort columns of kind, for an UPDATE with
// the arguments of sortColumnArgs.
func sortColumnSet(kind resourceKind) string {
	out := ""
	for i, c := range sortColumns(kind) {
		if i > 0 {
			out += ", "
		}
		out += c.column + " = ?"
	}
	return out
}

// sortColumnNames returns "c1, c2, …", the sort columns of kind, for an INSERT with the
// arguments of sortColumnArgs.
func sortColumnNames(kind resourceKind) string {
	out := ""
	for i, c := range sortColumns(kind) {
		if i > 0 {
			out += ", "
		}
		out += c.column
	}
	return out
}
