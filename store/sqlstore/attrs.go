package sqlstore

import (
	"database/sql"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

// attrRow is one row of the attrs table (see dialect.go) without its tenant, kind and rid.
//
// Attr is the top-level attribute's canonical path (schema.Attribute.Path: "userName", and for
// an extension attribute its URN-qualified name), Sub the sub-attribute's name or "". A row
// holds one value that filter.Match would see, in the column of its kind: S (with SF =
// schema.Fold(S) when the attribute's caseExact is false) for a string, N for a number, B for a
// boolean, T for a dateTime in Unix nanoseconds. A complex attribute's own value
// (filter.ComplexValue, asked for with sub nil) is the row with Sub "" and B true.
//
// Absent values have no row, with one exception: every element of a multi-valued complex
// attribute has its marker row (Sub "", Idx i) even when all its sub-attributes are absent,
// since a value path `emails[not (type eq "work")]` visits such an element. A marker's B is true
// when the element is present as a complex value and NULL when it is not; its other value
// columns are NULL.
type attrRow struct {
	Attr, Sub string
	Idx       int
	S, SF     sql.NullString
	N         sql.NullFloat64
	B         sql.NullBool
	T         sql.NullInt64
}

// attrRows returns the attrs rows of a user (kind "u", r a *store.User with Groups filled) or a
// group (kind "g", r a *store.Group): every value filter.Match can visit through
// r.FilterValue, for every attribute of schema.User() (enterprise extension included) or
// schema.Group() that a filter may name.
func attrRows(kind resourceKind, r filter.Resource) []attrRow {
	rows := resourceAttrRows(attrResourceType(kind), r)
	switch r := r.(type) {
	case *store.User:
		rows = extensionAttrRows(rows, r.Extensions)
	case *store.Group:
		rows = extensionAttrRows(rows, r.Extensions)
	}
	return rows
}

// extensionAttrRows appends the rows of the values of host-defined extensions, which the store
// keeps without their definitions: the rows follow the values' shape as FilterValue reads it
// (a []any of maps is a multi-valued complex attribute with element markers, a []any of simple
// values a multi-valued simple attribute with one row a value, a map a complex value) and
// their JSON type. A string is kept both as written (S) and folded (SF), since the store does not
// know whether the attribute is caseExact: whereFilter compares a host-defined attribute's
// caseExact strings on S without asking for SF to be NULL (see stringHolds); one in RFC 3339
// form is also kept as an instant (T), for a dateTime attribute.
func extensionAttrRows(rows []attrRow, x store.Extensions) []attrRow {
	for _, urn := range slices.Sorted(maps.Keys(x)) {
		obj := x[urn]
		for _, name := range slices.Sorted(maps.Keys(obj)) {
			attr := urn + ":" + name
			switch v := obj[name].(type) {
			case []any:
				for i, el := range v {
					m, complexEl := el.(map[string]any)
					if !complexEl && el != nil {
						// A multi-valued simple attribute: one row a value, no markers.
						rows = appendExtensionRow(rows, attrRow{Attr: attr, Idx: i}, el)
						continue
					}
					row := attrRow{Attr: attr, Idx: i}
					if len(m) > 0 {
						row.B = sql.NullBool{Bool: true, Valid: true}
					}
					rows = append(rows, row)
					rows = extensionSubRows(rows, attr, i, m)
				}
			case map[string]any:
				if len(v) > 0 {
					rows = append(rows, attrRow{Attr: attr, B: sql.NullBool{Bool: true, Valid: true}})
				}
				rows = extensionSubRows(rows, attr, 0, v)
			default:
				rows = appendExtensionRow(rows, attrRow{Attr: attr}, v)
			}
		}
	}
	return rows
}

func extensionSubRows(rows []attrRow, attr string, idx int, m map[string]any) []attrRow {
	for _, sub := range slices.Sorted(maps.Keys(m)) {
		rows = appendExtensionRow(rows, attrRow{Attr: attr, Sub: sub, Idx: idx}, m[sub])
	}
	return rows
}

func appendExtensionRow(rows []attrRow, row attrRow, v any) []attrRow {
	switch v := v.(type) {
	case string:
		row.S = sql.NullString{String: v, Valid: true}
		row.SF = sql.NullString{String: schema.Fold(v), Valid: true}
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			row.T = sql.NullInt64{Int64: attrNanos(t), Valid: true}
		}
	case bool:
		row.B = sql.NullBool{Bool: v, Valid: true}
	case float64:
		row.N = sql.NullFloat64{Float64: v, Valid: true}
	default:
		return rows
	}
	return append(rows, row)
}

// attrResourceType returns the resource type whose resources are stored with kind.
func attrResourceType(kind resourceKind) *schema.ResourceType {
	switch kind {
	case kindUser:
		return schema.User()
	case kindGroup:
		return schema.Group()
	}
	panic(fmt.Sprintf("sqlstore: unknown resource kind %q", kind))
}

// resourceAttrRows flattens r, a resource of type rt, the way filter.Match visits it: a
// single-valued attribute (or sub-attribute) at index 0 whatever FilterValue's ok says; a
// multi-valued one at every index from 0 until FilterValue reports !ok, separately for the
// attribute itself and for each sub-attribute.
func resourceAttrRows(rt *schema.ResourceType, r filter.Resource) []attrRow {
	var rows []attrRow
	for a := range rt.Attributes {
		if !filterableAttr(a) {
			continue
		}
		name := a.Path()
		if !a.MultiValued {
			v, _ := r.FilterValue(a, nil, 0)
			rows = appendAttrRow(rows, name, "", 0, a, v, false)
			for _, sub := range a.SubAttributes {
				if filterableAttr(sub) {
					v, _ := r.FilterValue(a, sub, 0)
					rows = appendAttrRow(rows, name, sub.Name, 0, sub, v, false)
				}
			}
			continue
		}
		marker := a.Type == schema.Complex
		for i := 0; ; i++ {
			v, ok := r.FilterValue(a, nil, i)
			if !ok {
				break
			}
			rows = appendAttrRow(rows, name, "", i, a, v, marker)
		}
		for _, sub := range a.SubAttributes {
			if !filterableAttr(sub) {
				continue
			}
			for i := 0; ; i++ {
				v, ok := r.FilterValue(a, sub, i)
				if !ok {
					break
				}
				rows = appendAttrRow(rows, name, sub.Name, i, sub, v, false)
			}
		}
	}
	return rows
}

// filterableAttr reports whether filter.Parse lets a filter name a; the values of the others are
// never asked for, so they get no rows.
func filterableAttr(a *schema.Attribute) bool {
	return !a.Unfilterable && a.Returned != schema.Never
}

// appendAttrRow appends the row of value v of attribute (or sub-attribute) def: none when v is
// absent, unless the row is an element marker, which is kept with NULL values.
func appendAttrRow(rows []attrRow, attr, sub string, idx int, def *schema.Attribute, v filter.Value, marker bool) []attrRow {
	row := attrRow{Attr: attr, Sub: sub, Idx: idx}
	switch v.Kind {
	case filter.KindString:
		row.S = sql.NullString{String: v.Str, Valid: true}
		if !def.CaseExact {
			row.SF = sql.NullString{String: schema.Fold(v.Str), Valid: true}
		}
	case filter.KindNumber:
		row.N = sql.NullFloat64{Float64: v.Num, Valid: true}
	case filter.KindBool:
		row.B = sql.NullBool{Bool: v.Bool, Valid: true}
	case filter.KindTime:
		row.T = sql.NullInt64{Int64: attrNanos(v.Time), Valid: true}
	case filter.KindComplex:
		row.B = sql.NullBool{Bool: true, Valid: true}
	default: // absent
		if !marker {
			return rows
		}
	}
	return append(rows, row)
}

// The instants that T holds exactly: Unix nanoseconds that fit an int64, less the two extremes,
// which stand for every instant before and after the range (dates before 1677-09-21 and after
// 2262-04-11).
const (
	attrMinNanos = math.MinInt64 + 1
	attrMaxNanos = math.MaxInt64 - 1
)

// attrNanos returns t as T stores it: Unix nanoseconds, or math.MinInt64 or math.MaxInt64 for an
// instant before or after the exact range.
func attrNanos(t time.Time) int64 {
	switch {
	case t.Before(time.Unix(0, attrMinNanos)):
		return math.MinInt64
	case t.After(time.Unix(0, attrMaxNanos)):
		return math.MaxInt64
	}
	return t.UnixNano()
}
