package filter_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

const (
	coreURN = schema.UserURN + ":"
	entURN  = schema.EnterpriseUserURN + ":"
)

// widgets is a resource type with numeric and binary attributes, which User and Group lack. As
// a ResourceType literal it has no lookup index, so Lookup scans its attribute list.
func widgets() *schema.ResourceType {
	return &schema.ResourceType{
		Name:     "Widget",
		Endpoint: "/Widgets",
		Schema: &schema.Schema{ID: "urn:example:params:scim:schemas:core:2.0:Widget", Name: "Widget", Attributes: []*schema.Attribute{
			{Name: "weight", Type: schema.Decimal},
			{Name: "count", Type: schema.Integer},
			{Name: "label", Type: schema.String},
			{Name: "checksum", Type: schema.Binary},
		}},
	}
}

// parseCase is a valid filter and its canonical form.
type parseCase struct {
	rt       string // "User" (the default), "Group" or "Widget"
	in, want string
}

// resourceType returns the resource type a parseCase names; widget is the caller's Widget type,
// so that the expressions of one test share attribute pointers.
func (c parseCase) resourceType(widget *schema.ResourceType) *schema.ResourceType {
	switch c.rt {
	case "Group":
		return schema.Group()
	case "Widget":
		return widget
	}
	return schema.User()
}

// validFilters returns the valid filters the tests parse, print, round-trip and fuzz from.
func validFilters() []parseCase {
	return []parseCase{
		// Keywords, operators and attribute names are case-insensitive; whitespace is free.
		{"", `userName eq "bjensen"`, `userName eq "bjensen"`},
		{"", `USERNAME Eq "x"`, `userName eq "x"`},
		{"", "  userName\teq\r\n\"x\"  ", `userName eq "x"`},
		{"", `title PR`, `title pr`},
		{"", `title pr AND nickName pr OR locale pr`, `title pr and nickName pr or locale pr`},

		// Attribute paths.
		{"", coreURN + `userName eq "x"`, `userName eq "x"`},
		{"", coreURN + `name.familyName co "O'Malley"`, `name.familyName co "O'Malley"`},
		{"", strings.ToUpper(coreURN) + `NAME.FAMILYNAME sw "J"`, `name.familyName sw "J"`},
		{"", entURN + `manager.value eq "26118915-6090-4610-87e4-49d8ca9f808d"`, entURN + `manager.value eq "26118915-6090-4610-87e4-49d8ca9f808d"`},
		{"", `department eq "Tour Operations"`, entURN + `department eq "Tour Operations"`},
		{"", `MANAGER.displayName pr`, entURN + `manager.displayName pr`},
		{"", `manager eq "u1"`, entURN + `manager.value eq "u1"`},
		{"", `external_id eq "e1"`, `externalId eq "e1"`},
		{"", coreURN + `external_id eq "e1"`, `externalId eq "e1"`},
		{"", coreURN + `id eq "u1"`, `id eq "u1"`},
		{"", `meta.lastModified gt "2011-05-13T04:42:34Z"`, `meta.lastModified gt "2011-05-13T04:42:34Z"`},
		{"", `meta.resourceType eq "User"`, `meta.resourceType eq "User"`},
		{"", `name pr`, `name pr`},
		{"", `emails pr`, `emails pr`},
		{"", `emails co "example.com"`, `emails.value co "example.com"`},
		{"", `groups eq "g1"`, `groups.value eq "g1"`},

		// Value paths, and Entra ID's attribute after a value filter.
		{"", `emails[type eq "work" and primary eq true]`, `emails[type eq "work" and primary eq true]`},
		{"", `emails[type eq "work" and value co "@example.com"] or phoneNumbers[type eq "mobile"]`, `emails[type eq "work" and value co "@example.com"] or phoneNumbers[type eq "mobile"]`},
		{"", `EMAILS[TYPE EQ "work"]`, `emails[type eq "work"]`},
		{"", `emails[ type eq "work" ]`, `emails[type eq "work"]`},
		{"", `emails[not (type eq "work")]`, `emails[not (type eq "work")]`},
		{"", `emails[type eq "work" or (type eq "home" and primary eq true)]`, `emails[type eq "work" or type eq "home" and primary eq true]`},
		{"", `emails[(type eq "work" or type eq "home") and primary eq true]`, `emails[(type eq "work" or type eq "home") and primary eq true]`},
		{"", `emails[type eq "work"].value eq "x"`, `emails[type eq "work"].value eq "x"`},
		{"", `EMAILS[TYPE EQ "work"].VALUE EQ "x"`, `emails[type eq "work"].value eq "x"`},
		{"", `emails[type eq "work"].value pr`, `emails[type eq "work"].value pr`},
		{"", `emails[type eq "work"].primary eq "True"`, `emails[type eq "work"].primary eq true`},
		{"", `groups[display sw "Admin"]`, `groups[display sw "Admin"]`},
		{"", `addresses[type eq "work" and locality eq "Hollywood"]`, `addresses[type eq "work" and locality eq "Hollywood"]`},
		{"", `not (emails[type eq "work"]) and title pr`, `not (emails[type eq "work"]) and title pr`},

		// not, parentheses, precedence.
		{"", `not (title pr)`, `not (title pr)`},
		{"", `not(title pr)`, `not (title pr)`},
		{"", `NOT (title pr)`, `not (title pr)`},
		{"", `not ((title pr))`, `not (title pr)`},
		{"", `not (not (title pr))`, `not (not (title pr))`},
		{"", `(title pr)`, `title pr`},
		{"", `((title pr))`, `title pr`},
		{"", `(title pr)or(nickName pr)`, `title pr or nickName pr`},
		{"", `title pr and(nickName pr)`, `title pr and nickName pr`},
		{"", `userName eq "x"and title pr`, `userName eq "x" and title pr`},
		{"", `title pr or nickName pr and locale pr`, `title pr or nickName pr and locale pr`},
		{"", `title pr or (nickName pr and locale pr)`, `title pr or nickName pr and locale pr`},
		{"", `(title pr or nickName pr) and locale pr`, `(title pr or nickName pr) and locale pr`},
		{"", `title pr and (nickName pr or locale pr)`, `title pr and (nickName pr or locale pr)`},
		{"", `(title pr and nickName pr) and locale pr`, `title pr and nickName pr and locale pr`},
		{"", `title pr and (nickName pr and locale pr)`, `title pr and (nickName pr and locale pr)`},
		{"", `(title pr or nickName pr) or locale pr`, `title pr or nickName pr or locale pr`},
		{"", `title pr or (nickName pr or locale pr)`, `title pr or (nickName pr or locale pr)`},
		{"", `title pr and not (nickName pr) or locale pr`, `title pr and not (nickName pr) or locale pr`},
		{"", `not (title pr or nickName pr) and (locale pr or timezone pr)`, `not (title pr or nickName pr) and (locale pr or timezone pr)`},

		// The ten operators.
		{"", `userName eq "a"`, `userName eq "a"`},
		{"", `userName ne "a"`, `userName ne "a"`},
		{"", `userName co "a"`, `userName co "a"`},
		{"", `userName sw "a"`, `userName sw "a"`},
		{"", `userName ew "a"`, `userName ew "a"`},
		{"", `userName gt "a"`, `userName gt "a"`},
		{"", `userName ge "a"`, `userName ge "a"`},
		{"", `userName lt "a"`, `userName lt "a"`},
		{"", `userName le "a"`, `userName le "a"`},
		{"", `userName pr`, `userName pr`},
		{"", `meta.created GE "2024-05-01T00:00:00+02:00"`, `meta.created ge "2024-05-01T00:00:00+02:00"`},
		{"", `meta.created lt "2024-05-01T00:00:00.123456789Z"`, `meta.created lt "2024-05-01T00:00:00.123456789Z"`},

		// String literals: JSON strings, printed back in a canonical escaping.
		{"", `userName eq ""`, `userName eq ""`},
		{"", `userName eq "\"\\\/\b\f\n\r\t"`, `userName eq "\"\\/\u0008\u000c\n\r\t"`},
		{"", `userName eq "\u00e9\u20AC\ud83d\ude00"`, `userName eq "é€😀"`},
		{"", `userName eq "\u0000\u001F\u007f"`, `userName eq "\u0000\u001f` + "\x7f" + `"`},
		{"", `userName eq "\ud800"`, `userName eq "` + "\ufffd" + `"`},
		{"", `userName eq "\ud83d\u0041"`, `userName eq "` + "\ufffd" + `A"`},
		{"", `userName eq "\ude00\ud83d"`, `userName eq "` + "\ufffd\ufffd" + `"`},
		{"", `userName eq "Ærøskøbing 日本"`, `userName eq "Ærøskøbing 日本"`},
		{"", "userName eq \"bad \xff byte\"", "userName eq \"bad \ufffd byte\""},
		{"", `userName eq "and or not ) ( ] ["`, `userName eq "and or not ) ( ] ["`},

		// Booleans and null.
		{"", `active eq true`, `active eq true`},
		{"", `active eq TRUE`, `active eq true`},
		{"", `active ne False`, `active ne false`},
		{"", `active eq "True"`, `active eq true`},
		{"", `active eq "false"`, `active eq false`},
		{"", `emails[primary eq "TRUE"]`, `emails[primary eq true]`},
		{"", `title eq null`, `title eq null`},
		{"", `title ne NULL`, `title ne null`},
		{"", `active eq null`, `active eq null`},
		{"", `meta.created eq null`, `meta.created eq null`},
		{"", `name eq null`, `name eq null`},
		{"", `emails eq null`, `emails.value eq null`},

		// Groups.
		{"Group", `displayName eq "Admins"`, `displayName eq "Admins"`},
		{"Group", `members[value eq "u"]`, `members[value eq "u"]`},
		{"Group", `members eq "u"`, `members.value eq "u"`},
		{"Group", `members.display sw "b"`, `members.display sw "b"`},
		{"Group", `members[type eq "User"].value eq "u"`, `members[type eq "User"].value eq "u"`},
		{"Group", schema.GroupURN + `:displayName pr`, `displayName pr`},
		{"Group", `meta.resourceType eq "Group" and external_id pr`, `meta.resourceType eq "Group" and externalId pr`},

		// Numbers.
		{"Widget", `weight gt 1.5`, `weight gt 1.5`},
		{"Widget", `weight le -0.25`, `weight le -0.25`},
		{"Widget", `count eq 42`, `count eq 42`},
		{"Widget", `count eq 0`, `count eq 0`},
		{"Widget", `weight eq -0`, `weight eq -0`},
		{"Widget", `count ge 1e3`, `count ge 1000`},
		{"Widget", `weight lt 2.5E-3`, `weight lt 0.0025`},
		{"Widget", `weight eq 1E+2`, `weight eq 100`},
		{"Widget", `weight eq 0.1e1`, `weight eq 1`},
		{"Widget", `count eq 1e21`, `count eq 1e+21`},
		{"Widget", `count eq 12345678901234567890`, `count eq 1.2345678901234567e+19`},
		{"Widget", `weight eq 1e-7`, `weight eq 1e-07`},
		{"Widget", `weight eq 1e-400`, `weight eq 0`},
		{"Widget", `weight ne null and count pr`, `weight ne null and count pr`},
		{"Widget", `(count gt 1)and(count lt 10)`, `count gt 1 and count lt 10`},
		{"Widget", `label eq "x" or checksum eq "AAEC"`, `label eq "x" or checksum eq "AAEC"`},
	}
}

func TestParseCanonical(t *testing.T) {
	widget := widgets()
	for _, tt := range validFilters() {
		t.Run(tt.in, func(t *testing.T) {
			e, err := filter.Parse(tt.in, tt.resourceType(widget))
			require.NoError(t, err)
			assert.Equal(t, tt.want, e.String())
		})
	}
}

// TestParseRoundTrip checks that the canonical form parses back to an equal tree, and prints
// the same again.
func TestParseRoundTrip(t *testing.T) {
	widget := widgets()
	var cases []parseCase
	for _, c := range validFilters() {
		cases = append(cases, c, parseCase{rt: c.rt, in: c.want})
	}
	for _, c := range matchCases() {
		cases = append(cases, parseCase{rt: c.rt, in: c.filter})
	}
	for _, c := range cases {
		rt := c.resourceType(widget)
		e, err := filter.Parse(c.in, rt)
		require.NoError(t, err, c.in)
		printed := e.String()
		again, err := filter.Parse(printed, rt)
		require.NoError(t, err, "%q printed as %q", c.in, printed)
		assert.True(t, reflect.DeepEqual(e, again), "%q printed as %q parses to another tree: %s, not %s", c.in, printed, shape(again), shape(e))
		assert.Equal(t, printed, again.String())
	}
}

// shape prints the structure of an expression tree.
func shape(e filter.Expr) string {
	switch e := e.(type) {
	case *filter.And:
		return "And(" + shape(e.Left) + ", " + shape(e.Right) + ")"
	case *filter.Or:
		return "Or(" + shape(e.Left) + ", " + shape(e.Right) + ")"
	case *filter.Not:
		return "Not(" + shape(e.X) + ")"
	case *filter.ValuePath:
		return "ValuePath(" + e.Attr.Name + ", " + shape(e.Filter) + ")"
	case *filter.Compare:
		s := e.Attr.Name
		if e.Filter != nil {
			s += "[" + shape(e.Filter) + "]"
		}
		if e.Sub != nil {
			s += "." + e.Sub.Name
		}
		return s
	}
	return "?"
}

func TestParseTree(t *testing.T) {
	tests := []struct{ in, want string }{
		{`title pr`, `title`},
		{`title pr or nickName pr and locale pr`, `Or(title, And(nickName, locale))`},
		{`title pr and nickName pr or locale pr`, `Or(And(title, nickName), locale)`},
		{`title pr or nickName pr or locale pr`, `Or(Or(title, nickName), locale)`},
		{`title pr and nickName pr and locale pr`, `And(And(title, nickName), locale)`},
		{`title pr and (nickName pr or locale pr)`, `And(title, Or(nickName, locale))`},
		{`title pr or (nickName pr or locale pr)`, `Or(title, Or(nickName, locale))`},
		{`not (title pr) and nickName pr`, `And(Not(title), nickName)`},
		{`not (title pr and nickName pr)`, `Not(And(title, nickName))`},
		{`title pr or not (nickName pr) and locale pr`, `Or(title, And(Not(nickName), locale))`},
		{`((((title pr))))`, `title`},
		{`emails[type eq "work" or type eq "home" and primary eq true]`, `ValuePath(emails, Or(emails.type, And(emails.type, emails.primary)))`},
		{`emails[type eq "work"].value eq "x"`, `emails[emails.type].value`},
		{`emails[type eq "work"] and emails.value co "x"`, `And(ValuePath(emails, emails.type), emails.value)`},
		{`emails co "x"`, `emails.value`},
		{`emails pr`, `emails`},
		{`name pr`, `name`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			e, err := filter.Parse(tt.in, schema.User())
			require.NoError(t, err)
			assert.Equal(t, tt.want, shape(e))
		})
	}
}

// TestParseCompare checks the fields of the comparison a filter parses to.
func TestParseCompare(t *testing.T) {
	user, widget := schema.User(), widgets()
	attr := func(rt *schema.ResourceType, path string) (*schema.Attribute, *schema.Attribute) {
		a, sub, err := rt.Lookup(path)
		require.NoError(t, err)
		return a, sub
	}
	tests := []struct {
		rt       *schema.ResourceType
		in       string
		path     string // the attribute and sub-attribute Lookup gives for it
		op       filter.Op
		value    filter.Literal
		isFilter bool
	}{
		{user, `USERNAME Eq "x"`, "userName", filter.Eq, filter.Literal{Kind: filter.KindString, Str: "x"}, false},
		{user, `title pr`, "title", filter.Pr, filter.Literal{}, false},
		{user, `department ne "Sales"`, entURN + "department", filter.Ne, filter.Literal{Kind: filter.KindString, Str: "Sales"}, false},
		{user, `manager eq "m"`, "manager.value", filter.Eq, filter.Literal{Kind: filter.KindString, Str: "m"}, false},
		{user, `emails co "x"`, "emails.value", filter.Co, filter.Literal{Kind: filter.KindString, Str: "x"}, false},
		{user, `emails pr`, "emails", filter.Pr, filter.Literal{}, false},
		{user, `emails[type eq "work"].value sw "x"`, "emails.value", filter.Sw, filter.Literal{Kind: filter.KindString, Str: "x"}, true},
		{user, `active eq "True"`, "active", filter.Eq, filter.Literal{Kind: filter.KindBool, Bool: true}, false},
		{user, `active ne FALSE`, "active", filter.Ne, filter.Literal{Kind: filter.KindBool}, false},
		{user, `title eq null`, "title", filter.Eq, filter.Literal{Kind: filter.KindNull}, false},
		{user, `meta.created gt "2024-05-01T00:00:00+02:00"`, "meta.created", filter.Gt, filter.Literal{Kind: filter.KindString, Str: "2024-05-01T00:00:00+02:00"}, false},
		{widget, `count ge 1e3`, "count", filter.Ge, filter.Literal{Kind: filter.KindNumber, Num: 1000}, false},
		{widget, `weight lt -0.5`, "weight", filter.Lt, filter.Literal{Kind: filter.KindNumber, Num: -0.5}, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			e, err := filter.Parse(tt.in, tt.rt)
			require.NoError(t, err)
			c, ok := e.(*filter.Compare)
			require.True(t, ok, "%T", e)
			a, sub := attr(tt.rt, tt.path)
			assert.Same(t, a, c.Attr)
			assert.Same(t, sub, c.Sub)
			assert.Equal(t, tt.op, c.Op)
			assert.Equal(t, tt.value, c.Value)
			assert.Equal(t, tt.isFilter, c.Filter != nil)
		})
	}
}

// TestParseStringLiteral checks string literals against encoding/json, whose strings they are.
func TestParseStringLiteral(t *testing.T) {
	literals := []string{
		`""`, `"x"`, `"\""`, `"\\"`, `"\/"`, `"/"`, `"\b\f\n\r\t"`, `"\u0041\u00e9\u20ac"`,
		`"\u00E9\u20AC"`, `"\ud83d\ude00"`, `"\uD83D\uDE00"`, `"\ud83d"`, `"\ude00"`, `"\ud83dx"`,
		`"\ud83d\u0041"`, `"\ud83d\ud83d\ude00"`, `"\ude00\ud83d"`, `"\u0000"`, `"\uffff"`, `"\ufffd"`,
		`"日本語"`, `"💩"`, "\"\x7f\"", "\"\xff\"", "\"\xe2\x82\"", "\"a\xc3\"",
		`"it's"`, `"\u2028\u2029"`,
	}
	for _, lit := range literals {
		t.Run(lit, func(t *testing.T) {
			var want string
			require.NoError(t, json.Unmarshal([]byte(lit), &want))
			e, err := filter.Parse(`userName eq `+lit, schema.User())
			require.NoError(t, err)
			c := e.(*filter.Compare)
			assert.Equal(t, filter.Literal{Kind: filter.KindString, Str: want}, c.Value)

			// The printed literal is JSON too, of the same string.
			printed := strings.TrimPrefix(e.String(), "userName eq ")
			var got string
			require.NoError(t, json.Unmarshal([]byte(printed), &got), printed)
			assert.Equal(t, want, got)
		})
	}
}

func TestParseErrors(t *testing.T) {
	user, group, widget := schema.User(), schema.Group(), widgets()
	tests := []struct {
		rt  *schema.ResourceType
		in  string
		pos int
		msg string
	}{
		// Empty and unknown.
		{user, ``, 0, "the filter is empty"},
		{user, " \t\r\n", 0, "the filter is empty"},
		{user, `nope eq "x"`, 0, `User has no attribute "nope" (in "nope")`},
		{user, `title pr and nope pr`, 13, `User has no attribute "nope" (in "nope")`},
		{user, `name.nope eq "x"`, 0, `name has no sub-attribute "nope" (in "name.nope")`},
		{user, `userName.value eq "x"`, 0, `userName has no sub-attributes (in "userName.value")`},
		{user, `urn:example:x:userName eq "x"`, 0, `unknown schema URN (in "urn:example:x:userName")`},
		{user, schema.UserURN + ` eq "x"`, 0, "names a schema, not an attribute"},
		{user, `emails[nope eq "x"]`, 7, `emails has no sub-attribute "nope"`},
		{user, `emails[type eq "work"].nope eq "x"`, 23, `expected a sub-attribute of emails, found "nope"`},
		{user, `emails[type eq "work"]. value eq "x"`, 23, `expected a sub-attribute of emails, found ' '`},
		{user, `emails[type eq "work"].`, 23, `expected a sub-attribute of emails, found the end of the filter`},
		{user, `not title pr`, 4, `expected "(" after "not", found "title"`},
		{group, `userName eq "x"`, 0, `Group has no attribute "userName"`},
		{group, `department eq "x"`, 0, `Group has no attribute "department"`},

		// Operators and values.
		{user, `userName`, 8, "expected an operator (eq, ne, co, sw, ew, gt, ge, lt, le or pr), found the end of the filter"},
		{user, `userName "x"`, 9, `expected an operator (eq, ne, co, sw, ew, gt, ge, lt, le or pr), found '"'`},
		{user, `userName equals "x"`, 9, `expected an operator (eq, ne, co, sw, ew, gt, ge, lt, le or pr), found "equals"`},
		{user, `userName == "x"`, 9, `found '='`},
		{user, `emails [type eq "work"]`, 7, `expected an operator (eq, ne, co, sw, ew, gt, ge, lt, le or pr), found '['`},
		{user, `userName eq`, 11, "expected a value (a string, a number, true, false or null), found the end of the filter"},
		{user, `userName eq `, 12, "expected a value (a string, a number, true, false or null), found the end of the filter"},
		{user, `userName eq x`, 12, `expected a value (a string in double quotes, a number, true, false or null), found "x"`},
		{user, `userName eq 'x'`, 12, `found '\''`},
		{user, `userName eq )`, 12, `found ')'`},
		{user, `title pr "x"`, 9, `expected "and", "or" or the end of the filter, found '"'`},
		{user, `active eq truex`, 10, `found "truex"`},

		// Strings.
		{user, `userName eq "abc`, 12, "unterminated string"},
		{user, `userName eq "`, 12, "unterminated string"},
		{user, `userName eq "abc\"`, 12, "unterminated string"},
		{user, `userName eq "a\qb"`, 14, `unknown escape: use \" \\ \/ \b \f \n \r \t or \uXXXX`},
		{user, `userName eq "a\'"`, 14, "unknown escape"},
		{user, `userName eq "a\`, 14, "unterminated escape in string"},
		{user, `userName eq "\u12"`, 13, `expected four hex digits after \u`},
		{user, `userName eq "\u12G4"`, 13, `expected four hex digits after \u`},
		{user, `userName eq "\u+123"`, 13, `expected four hex digits after \u`},
		{user, `userName eq "\U0041"`, 13, "unknown escape"},
		{user, `userName eq "\ud83d\u12"`, 19, `expected four hex digits after \u`},
		{user, "userName eq \"a\tb\"", 14, "control character in string: escape it"},
		{user, "userName eq \"a\nb\"", 14, "control character in string: escape it"},
		{user, "userName eq \"\x00\"", 13, "control character in string: escape it"},

		// Numbers.
		{widget, `count eq 01`, 9, "malformed number"},
		{widget, `count eq -01`, 9, "malformed number"},
		{widget, `count eq -`, 9, "malformed number"},
		{widget, `count eq -x`, 9, "malformed number"},
		{widget, `count eq --1`, 9, "malformed number"},
		{widget, `count eq 1.`, 9, "malformed number: digits must follow the decimal point"},
		{widget, `count eq 1.e5`, 9, "malformed number: digits must follow the decimal point"},
		{widget, `count eq 1e`, 9, "malformed number: digits must follow the exponent"},
		{widget, `count eq 1e+`, 9, "malformed number: digits must follow the exponent"},
		{widget, `count eq 1x`, 9, "malformed number"},
		{widget, `count eq 0x10`, 9, "malformed number"},
		{widget, `count eq 1.5.2`, 9, "malformed number"},
		{widget, `count eq 1_000`, 9, "malformed number"},
		{widget, `count eq 1e400`, 9, "number out of range"},
		{widget, `count eq -1e400`, 9, "number out of range"},
		{widget, `count eq .5`, 9, `expected a value (a string in double quotes, a number, true, false or null), found ".5"`},
		{widget, `count eq +1`, 9, `found '+'`},
		{widget, `count eq Infinity`, 9, `found "Infinity"`},
		{widget, `count eq NaN`, 9, `found "NaN"`},

		// Trailing garbage and unbalanced parentheses and brackets.
		{user, `userName eq "x" foo`, 16, `expected "and", "or" or the end of the filter, found "foo"`},
		{user, `userName eq "x" and`, 19, `expected an attribute name, "not" or "(", found the end of the filter`},
		{user, `userName eq "x" or or title pr`, 19, `User has no attribute "or"`},
		{user, `userName eq "x")`, 15, `expected "and", "or" or the end of the filter, found ')'`},
		{user, `(userName eq "x"`, 16, `expected ")", "and" or "or", found the end of the filter`},
		{user, `((title pr)`, 11, `expected ")", "and" or "or", found the end of the filter`},
		{user, `(title pr))`, 10, `found ')'`},
		{user, `(title pr] `, 9, `expected ")", "and" or "or", found ']'`},
		{user, `()`, 1, `expected an attribute name, "not" or "(", found ')'`},
		{user, `(`, 1, `expected an attribute name, "not" or "(", found the end of the filter`},
		{user, `)`, 0, `expected an attribute name, "not" or "(", found ')'`},
		{user, `not ()`, 5, `found ')'`},
		{user, `not (title pr`, 13, `expected ")", "and" or "or"`},
		{user, `emails[type eq "work"`, 21, `expected "]", "and" or "or", found the end of the filter`},
		{user, `emails[type eq "work")`, 21, `expected "]", "and" or "or", found ')'`},
		{user, `emails[type eq "work"]]`, 22, `found ']'`},
		{user, `emails[]`, 7, `expected a sub-attribute of emails, "not" or "(", found ']'`},
		{user, `[type eq "work"]`, 0, `expected an attribute name, "not" or "(", found '['`},
		{user, `title pr)`, 8, `found ')'`},

		// Value filters.
		{user, `emails[type[value eq "x"] eq "y"]`, 11, "expected a comparison: value filters do not nest"},
		{user, `emails[type eq "x" and emails[value eq "y"]]`, 23, `emails has no sub-attribute "emails"`},
		{user, `name[givenName eq "x"]`, 0, "a value filter [...] needs a multi-valued complex attribute, and name is not one"},
		{user, `userName[value eq "x"]`, 0, "and userName is not one"},
		{user, `emails.value[value eq "x"]`, 0, "and emails.value is not one"},
		{user, `title pr and manager[value eq "x"]`, 13, "and manager is not one"},

		// Comparisons the attribute's type does not allow.
		{user, `active gt true`, 10, "active is a boolean: compare it with eq, ne or pr"},
		{user, `active co "true"`, 10, "active is a boolean: compare it with eq, ne or pr"},
		{user, `active eq "yes"`, 10, "active is a boolean: compare it with true or false"},
		{user, `active eq 1`, 10, "active is a boolean: compare it with true or false"},
		{user, `emails[primary eq "1"]`, 18, "primary is a boolean: compare it with true or false"},
		{user, `meta.created co "2024"`, 16, "created is a dateTime: compare it with eq, ne, gt, ge, lt, le or pr"},
		{user, `meta.created sw "2024"`, 16, "created is a dateTime: compare it with eq, ne, gt, ge, lt, le or pr"},
		{user, `meta.created gt "2024-05-01"`, 16, `created is a dateTime: "2024-05-01" is not an RFC 3339 time such as "2024-05-01T00:00:00Z"`},
		{user, `meta.created gt "2024-05-01 00:00:00Z"`, 16, "is not an RFC 3339 time"},
		{user, `meta.created gt "yesterday"`, 16, "is not an RFC 3339 time"},
		{user, `meta.created gt 2024`, 16, `created is a dateTime: compare it with a quoted RFC 3339 time such as "2024-05-01T00:00:00Z"`},
		{user, `meta.created gt true`, 16, "compare it with a quoted RFC 3339 time"},
		{user, `userName eq 42`, 12, "userName is a string: compare it with a quoted string"},
		{user, `userName eq true`, 12, "userName is a string: compare it with a quoted string"},
		{user, `emails.value co 1`, 16, "value is a string: compare it with a quoted string"},
		{user, `title gt null`, 9, "null can only be compared with eq or ne"},
		{user, `title co null`, 9, "null can only be compared with eq or ne"},
		{user, `name eq "x"`, 8, "name is complex: name one of its sub-attributes"},
		{user, `meta gt "x"`, 8, "meta is complex: name one of its sub-attributes"},
		{widget, `count co 1`, 9, "count is a number: compare it with eq, ne, gt, ge, lt, le or pr"},
		{widget, `count eq "1"`, 9, "count is a number: compare it with a number"},
		{widget, `weight eq true`, 10, "weight is a number: compare it with a number"},
		{widget, `checksum co "AA"`, 12, "checksum is binary: compare it with eq, ne or pr"},
		{widget, `checksum eq 1`, 12, "checksum is a string: compare it with a quoted string"},

		// Attributes a filter may not name.
		{user, `password eq "x"`, 0, "password cannot be used in a filter"},
		{user, `password pr`, 0, "password cannot be used in a filter"},
		{user, coreURN + `password pr`, 0, "password cannot be used in a filter"},
		{user, `meta.location eq "x"`, 0, "location cannot be used in a filter"},
		{user, `groups.$ref pr`, 0, "$ref cannot be used in a filter"},
		{user, `groups[$ref eq "x"]`, 7, "$ref cannot be used in a filter"},
		{user, `groups[type eq "direct"].$ref pr`, 25, "$ref cannot be used in a filter"},
		{group, `members.$ref eq "x"`, 0, "$ref cannot be used in a filter"},
		{group, `members[$ref pr]`, 8, "$ref cannot be used in a filter"},
	}
	for _, tt := range tests {
		t.Run(tt.rt.Name+"/"+tt.in, func(t *testing.T) {
			e, err := filter.Parse(tt.in, tt.rt)
			assert.Nil(t, e)
			var fe *filter.Error
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.pos, fe.Pos, "Pos; message %q", fe.Msg)
			assert.Contains(t, fe.Msg, tt.msg)
			assert.Equal(t, "invalid filter at offset "+strconv.Itoa(tt.pos)+": "+fe.Msg, err.Error())
			assert.NotErrorIs(t, err, filter.ErrLimit)
		})
	}
}

// chain joins n comparisons with or.
func chain(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = "title pr"
	}
	return strings.Join(parts, " or ")
}

func TestParseLimits(t *testing.T) {
	user := schema.User()
	long := func(n int) string { // a valid filter of n bytes
		const head = `userName eq "`
		return head + strings.Repeat("x", n-len(head)-1) + `"`
	}
	nest := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "title pr" + strings.Repeat(close, n)
	}
	tests := []struct {
		name   string
		limits filter.Limits
		in     string
		pos    int    // of the limit error; -1 when the filter is within the limits
		msg    string // of the limit error
	}{
		{"length at default", filter.Limits{}, long(4096), -1, ""},
		{"length over default", filter.Limits{}, long(4097), 4096, "too long: a filter may have at most 4096 bytes"},
		{"length 1 MiB", filter.Limits{}, long(1 << 20), 4096, "too long: a filter may have at most 4096 bytes"},
		{"length at custom", filter.Limits{MaxLength: 16}, `userName eq "xy"`, -1, ""},
		{"length over custom", filter.Limits{MaxLength: 16}, `userName eq "xyz"`, 16, "too long: a filter may have at most 16 bytes"},
		{"length over custom, invalid", filter.Limits{MaxLength: 4}, `nope nope`, 4, "too long"},
		{"custom length over default", filter.Limits{MaxLength: 8192}, long(8192), -1, ""},
		{"negative is default", filter.Limits{MaxLength: -1}, long(4097), 4096, "too long"},

		{"nodes at default", filter.Limits{}, chain(32), -1, ""},
		{"nodes at default with not", filter.Limits{}, "not (" + chain(32) + ")", -1, ""},
		{"nodes over default", filter.Limits{}, chain(33), 392, "too complex: a filter may have at most 64 expressions"},
		{"nodes over default with not", filter.Limits{}, "not (" + chain(32) + " and title pr)", 398, "too complex: a filter may have at most 64 expressions"},
		{"nodes at custom", filter.Limits{MaxNodes: 3}, `title pr or nickName pr`, -1, ""},
		{"nodes over custom", filter.Limits{MaxNodes: 3}, `title pr or nickName pr or locale pr`, 36, "too complex: a filter may have at most 3 expressions"},
		{"value path nodes at custom", filter.Limits{MaxNodes: 2}, `emails[type eq "work"]`, -1, ""},
		{"value path nodes over custom", filter.Limits{MaxNodes: 1}, `emails[type eq "work"]`, 22, "at most 1 expressions"},
		{"attribute after value filter nodes at custom", filter.Limits{MaxNodes: 2}, `emails[type eq "work"].value pr`, -1, ""},

		{"depth at default", filter.Limits{}, nest("(", ")", 32), -1, ""},
		{"depth over default", filter.Limits{}, nest("(", ")", 33), 32, "too deep: a filter may nest at most 32 levels"},
		{"not depth at default", filter.Limits{}, nest("not (", ")", 32), -1, ""},
		{"not depth over default", filter.Limits{}, nest("not (", ")", 33), 164, "too deep: a filter may nest at most 32 levels"},
		{"4 KiB of (", filter.Limits{}, strings.Repeat("(", 4096), 32, "too deep"},
		{"depth at custom", filter.Limits{MaxDepth: 1}, `(title pr)`, -1, ""},
		{"depth over custom", filter.Limits{MaxDepth: 1}, `((title pr))`, 1, "too deep: a filter may nest at most 1 levels"},
		{"not depth over custom", filter.Limits{MaxDepth: 1}, `not ((title pr))`, 5, "too deep"},
		{"value path depth at custom", filter.Limits{MaxDepth: 1}, `emails[type eq "work"]`, -1, ""},
		{"value path depth over custom", filter.Limits{MaxDepth: 1}, `(emails[type eq "work"])`, 7, "too deep"},
		{"value filter depth over custom", filter.Limits{MaxDepth: 1}, `emails[(type eq "work")]`, 7, "too deep"},
		{"custom depth over default", filter.Limits{MaxDepth: 100}, nest("(", ")", 100), -1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := tt.limits.Parse(tt.in, user)
			if tt.pos < 0 {
				require.NoError(t, err)
				assert.NotNil(t, e)
				return
			}
			assert.Nil(t, e)
			require.ErrorIs(t, err, filter.ErrLimit)
			var fe *filter.Error
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.pos, fe.Pos)
			assert.Contains(t, fe.Msg, tt.msg)
		})
	}

	// Parse is Limits{}.Parse.
	_, err := filter.Parse(chain(33), user)
	assert.True(t, errors.Is(err, filter.ErrLimit))
}

// TestParseValueFilter: the filter between the brackets of a value path parses on its own
// against a complex attribute, single-valued too; its comparisons name that attribute and one of
// its sub-attributes. Anything else is an *Error.
func TestParseValueFilter(t *testing.T) {
	user := schema.User()
	manager, _, err := user.Lookup(entURN + "manager")
	require.NoError(t, err)
	emails, _, err := user.Lookup("emails")
	require.NoError(t, err)
	userName, _, err := user.Lookup("userName")
	require.NoError(t, err)

	t.Run("valid", func(t *testing.T) {
		tests := []struct {
			name     string
			attr     *schema.Attribute
			in       string
			subs     []string // the sub-attributes compared, in order
			literals []string
		}{
			{name: "single-valued", attr: manager, in: `value eq "user_1"`, subs: []string{"value"}, literals: []string{"user_1"}},
			{name: "any case and spaces", attr: manager, in: `  VALUE Eq "user_1" `, subs: []string{"value"}, literals: []string{"user_1"}},
			{name: "multi-valued with and", attr: emails, in: `type eq "work" and value ew "@example.com"`,
				subs: []string{"type", "value"}, literals: []string{"work", "@example.com"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				e, err := filter.Limits{}.ParseValueFilter(tt.in, tt.attr)
				require.NoError(t, err)
				var subs, literals []string
				var walk func(filter.Expr)
				walk = func(e filter.Expr) {
					switch e := e.(type) {
					case *filter.And:
						walk(e.Left)
						walk(e.Right)
					case *filter.Compare:
						assert.Same(t, tt.attr, e.Attr)
						subs = append(subs, e.Sub.Name)
						literals = append(literals, e.Value.Str)
					default:
						t.Fatalf("unexpected %T", e)
					}
				}
				walk(e)
				assert.Equal(t, tt.subs, subs)
				assert.Equal(t, tt.literals, literals)
			})
		}
	})

	t.Run("invalid", func(t *testing.T) {
		tests := []struct {
			name string
			attr *schema.Attribute
			in   string
		}{
			{name: "empty", attr: manager, in: "  "},
			{name: "a simple attribute", attr: userName, in: `value eq "x"`},
			{name: "a sub-attribute", attr: manager.Sub("value"), in: `value eq "x"`},
			{name: "an unknown sub-attribute", attr: manager, in: `nosuch eq "x"`},
			{name: "a nested value filter", attr: emails, in: `emails[type eq "work"]`},
			{name: "text after the filter", attr: manager, in: `value eq "x" ]`},
			{name: "too long", attr: manager, in: `value eq "` + strings.Repeat("x", 5000) + `"`},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := filter.Limits{}.ParseValueFilter(tt.in, tt.attr)
				var fe *filter.Error
				require.True(t, errors.As(err, &fe), "%v", err)
				assert.NotEmpty(t, fe.Msg)
			})
		}
	})
}
