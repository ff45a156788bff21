package memstore

import (
	"strings"

	"github.com/visid/visid/store"
)

// pack makes all of u's strings share one allocation. A stored user then costs the garbage
// collector one string object to mark instead of one per attribute, and pays no size-class
// rounding per string: at a million users that is most of the difference between a lookup
// that stays flat and one that slows with the tenant.
func pack(u *store.User) {
	n := 0
	eachString(u, func(s *string) { n += len(*s) })
	var b strings.Builder
	b.Grow(n)
	eachString(u, func(s *string) { b.WriteString(*s) })
	all, off := b.String(), 0
	eachString(u, func(s *string) {
		*s = all[off : off+len(*s)]
		off += len(*s)
	})
}

// eachString calls fn with every string field of u, groups excepted (they are not stored).
func eachString(u *store.User, fn func(*string)) {
	for _, s := range [...]*string{
		&u.ID, &u.ExternalID, &u.UserName, &u.DisplayName, &u.NickName, &u.ProfileURL, &u.Title,
		&u.UserType, &u.PreferredLanguage, &u.Locale, &u.Timezone,
		&u.Name.Formatted, &u.Name.FamilyName, &u.Name.GivenName, &u.Name.MiddleName,
		&u.Name.HonorificPrefix, &u.Name.HonorificSuffix,
		&u.Enterprise.EmployeeNumber, &u.Enterprise.CostCenter, &u.Enterprise.Organization,
		&u.Enterprise.Division, &u.Enterprise.Department,
		&u.Enterprise.Manager.Value, &u.Enterprise.Manager.Ref, &u.Enterprise.Manager.DisplayName,
	} {
		fn(s)
	}
	for _, list := range [...][]store.MultiValue{u.Emails, u.PhoneNumbers, u.Roles} {
		for i := range list {
			fn(&list[i].Value)
			fn(&list[i].Display)
			fn(&list[i].Type)
		}
	}
	for i := range u.Addresses {
		a := &u.Addresses[i]
		for _, s := range [...]*string{&a.Formatted, &a.StreetAddress, &a.Locality, &a.Region, &a.PostalCode, &a.Country, &a.Type} {
			fn(s)
		}
	}
}
