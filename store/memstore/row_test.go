package memstore

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

// randomUser sets each field with probability one half, to a value that names the field, so a
// field read from the wrong place shows.
func randomUser(r *rand.Rand) store.User {
	var u store.User
	k := 0
	str := func() string {
		k++
		switch r.IntN(4) {
		case 0:
			return ""
		case 1:
			return fmt.Sprintf("Ünï-%d", k)
		}
		return fmt.Sprintf("f%d-%d", k, r.IntN(1000))
	}
	mv := func() []store.MultiValue {
		var out []store.MultiValue
		for range r.IntN(4) {
			out = append(out, store.MultiValue{Value: str(), Display: str(), Type: str(), Primary: r.IntN(2) == 0})
		}
		return out
	}
	u.Emails, u.PhoneNumbers, u.Roles = mv(), mv(), mv()
	for range r.IntN(3) {
		u.Addresses = append(u.Addresses, store.Address{Formatted: str(), StreetAddress: str(), Locality: str(),
			Region: str(), PostalCode: str(), Country: str(), Type: str(), Primary: r.IntN(2) == 0})
	}
	for _, s := range scalars(&u) {
		*s = str()
	}
	u.Active = r.IntN(2) == 0
	if r.IntN(2) == 0 {
		u.Meta.Created = time.Unix(r.Int64N(1<<40)-1<<39, r.Int64N(1e9)).UTC()
	}
	if r.IntN(2) == 0 {
		u.Meta.LastModified = time.Unix(r.Int64N(1<<35), r.Int64N(1e9)).In(time.FixedZone("x", 3600))
	}
	return u
}

// TestRowRoundTrip checks that a row gives back the user it was made from, and that it
// answers filter.Resource exactly as *store.User does, for every attribute of the schema.
func TestRowRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	fields := newRowFields()
	rt := schema.User()
	for n := 0; n < 2000; n++ {
		u := randomUser(r)
		row := encode(&u)
		var got store.User
		row.decode(&got)
		want := u
		want.Meta.LastModified = want.Meta.LastModified.UTC()
		if want.Meta.LastModified.IsZero() {
			want.Meta.LastModified = time.Time{}
		}
		require.Equal(t, want, got, "user %d", n)

		for a := range rt.Attributes {
			if a.Name == "groups" || a.Name == "password" {
				continue
			}
			subs := append([]*schema.Attribute{nil}, a.SubAttributes...)
			for _, sub := range subs {
				if sub != nil && sub.Unfilterable { // derived when a response is written (meta.version)
					continue
				}
				for i := 0; i < 5; i++ {
					wv, wok := u.FilterValue(a, sub, i)
					gv, gok := fields.filterValue(row, a, sub, i)
					require.Equal(t, wok, gok, "%s sub %v i %d", a.Name, sub, i)
					if wv.Kind == filter.KindTime { // compare instants
						require.True(t, wv.Time.Equal(gv.Time), "%s.%v", a.Name, sub)
						continue
					}
					require.Equal(t, wv, gv, "user %d: %s sub %v i %d", n, a.Name, sub, i)
					if !a.MultiValued {
						break
					}
				}
			}
		}
	}
}
