package filter_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

// FuzzParse checks that no input makes Parse or Match panic, that every error is a *filter.Error
// pointing into the input, and that a parsed filter prints to a canonical form that parses back
// to an equal tree and prints the same again.
func FuzzParse(f *testing.F) {
	for _, c := range validFilters() {
		f.Add(c.in)
		f.Add(c.want)
	}
	for _, c := range matchCases() {
		f.Add(c.filter)
	}
	for _, s := range []string{
		``, ` `, `(`, `)`, `[`, `]`, `"`, `\`, `not`, `not (`, `not()`, `and`, `or`,
		`userName`, `userName eq`, `userName eq "`, `userName eq "\`, `userName eq "\u`, `userName eq "\ud83d\u`,
		`userName eq "\ud83d\`, "userName eq \"\x00\"", "userName eq \"\xff\"", `userName eq 1`, `userName eq -`,
		`userName eq 1e`, `userName eq 01`, `userName eq 1.5e+308`, `userName eq 1e999`, `active gt true`,
		`active eq "yes"`, `meta.created co "x"`, `meta.created gt "2024-13-01T00:00:00Z"`, `name eq "x"`,
		`password pr`, `meta.location pr`, `groups.$ref pr`, `emails[type[value eq "x"]]`, `name[givenName pr]`,
		`emails[type eq "work"].`, `emails[type eq "work"].value`, `emails[type eq "work"].nope eq "x"`,
		`emails[type eq "work"`, `emails[]`, `emails.value[type pr]`, `urn:`, `urn:ietf:params:scim:schemas:core:2.0:User`,
		`urn:ietf:params:scim:schemas:core:2.0:User:`, `urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager[value pr]`,
		`title pr or`, `title pr and and title pr`, `title pr)`, `((title pr)`, `title pr title pr`,
		strings.Repeat("(", 40) + "title pr" + strings.Repeat(")", 40),
		strings.Repeat("not (", 40) + "title pr" + strings.Repeat(")", 40),
		chain(40),
		strings.Repeat("x", 4097),
	} {
		f.Add(s)
	}

	user, group, widgetType := schema.User(), schema.Group(), widgets()
	targets := []struct {
		rt  *schema.ResourceType
		res filter.Resource
	}{
		{user, testUser()},
		{user, &store.User{}},
		{group, testGroup()},
		{group, &store.Group{}},
		{widgetType, testWidget()},
		{widgetType, widget{}},
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, target := range targets {
			e, err := filter.Parse(s, target.rt)
			if err != nil {
				var fe *filter.Error
				if !errors.As(err, &fe) {
					t.Fatalf("Parse(%q) over %s: %T %v, not a *filter.Error", s, target.rt.Name, err, err)
				}
				if fe.Pos < 0 || fe.Pos > len(s) || fe.Msg == "" {
					t.Fatalf("Parse(%q) over %s: Pos %d, Msg %q", s, target.rt.Name, fe.Pos, fe.Msg)
				}
				continue
			}
			// The canonical form may be longer than the input (URN-qualified extension
			// attributes, "emails.value" for "emails"), so it is parsed without the length limit.
			printed := e.String()
			again, err := filter.Limits{MaxLength: len(printed)}.Parse(printed, target.rt)
			if err != nil {
				t.Fatalf("Parse(%q) over %s printed %q, which does not parse: %v", s, target.rt.Name, printed, err)
			}
			if !reflect.DeepEqual(e, again) {
				t.Fatalf("Parse(%q) over %s printed %q, which parses to another tree: %s, not %s", s, target.rt.Name, printed, shape(again), shape(e))
			}
			if p2 := again.String(); p2 != printed {
				t.Fatalf("Parse(%q) over %s printed %q, then %q", s, target.rt.Name, printed, p2)
			}
			if filter.Match(e, target.res) == filter.Match(&filter.Not{X: e}, target.res) {
				t.Fatalf("Parse(%q) over %s: e and not (e) agree", s, target.rt.Name)
			}
		}
	})
}
