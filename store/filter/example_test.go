package filter_test

import (
	"errors"
	"fmt"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

func ExampleParse() {
	for _, s := range []string{
		`USERNAME Eq "bjensen"`,
		`emails[type eq "work" and primary eq true] or not(active eq "True")`,
		`department eq "Sales" and (title pr or nickName pr)`,
	} {
		e, err := filter.Parse(s, schema.User())
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(e)
	}
	// Output:
	// userName eq "bjensen"
	// emails[type eq "work" and primary eq true] or not (active eq true)
	// urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq "Sales" and (title pr or nickName pr)
}

func ExampleParse_error() {
	_, err := filter.Parse(`userName eq "bjensen" nickName eq "babs"`, schema.User())
	var fe *filter.Error
	if errors.As(err, &fe) {
		// The SCIM API answers 400 with scimType invalidFilter.
		fmt.Println(fe.Pos, fe.Msg)
	}
	// Output:
	// 22 expected "and", "or" or the end of the filter, found "nickName"
}

func ExampleLimits_Parse() {
	limits := filter.Limits{MaxNodes: 3}
	_, err := limits.Parse(`title pr or nickName pr or locale pr`, schema.User())
	fmt.Println(errors.Is(err, filter.ErrLimit))
	fmt.Println(err)
	// Output:
	// true
	// invalid filter at offset 36: too complex: a filter may have at most 3 expressions
}

func ExampleMatch() {
	user := &store.User{
		UserName: "bjensen",
		Emails: []store.MultiValue{
			{Value: "bjensen@example.com", Type: "work"},
			{Value: "babs@jensen.org", Type: "home"},
		},
	}
	for _, s := range []string{
		`userName eq "BJensen"`,
		`emails[type eq "work" and value ew "jensen.org"]`,
		`emails[type eq "home"].value ew "jensen.org"`,
		`title ne "Manager"`,
		`not (title eq "Manager")`,
	} {
		e, err := filter.Parse(s, schema.User())
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%-50s %v\n", s, filter.Match(e, user))
	}
	// Output:
	// userName eq "BJensen"                              true
	// emails[type eq "work" and value ew "jensen.org"]   false
	// emails[type eq "home"].value ew "jensen.org"       true
	// title ne "Manager"                                 false
	// not (title eq "Manager")                           true
}
