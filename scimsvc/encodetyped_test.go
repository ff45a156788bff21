package scimsvc

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
	"github.com/visid/visid/store/schema"
)

const (
	badgeURN = "urn:example:params:scim:schemas:extension:badge:2.0:User"
	teamURN2 = "urn:example:params:scim:schemas:extension:team:2.0:User"
)

// encoderUserTypes are the User resource types the typed encoder is compared on: the built-in
// one, and one with two host-defined extensions.
func encoderUserTypes(t testing.TB) map[string]*schema.ResourceType {
	t.Helper()
	badge := &schema.Schema{ID: badgeURN, Name: "Badge", Attributes: []*schema.Attribute{
		{Name: "badge", Type: schema.String},
		{Name: "level", Type: schema.Integer},
		{Name: "since", Type: schema.DateTime},
		{Name: "tags", Type: schema.String, MultiValued: true},
		{Name: "devices", Type: schema.Complex, MultiValued: true, SubAttributes: []*schema.Attribute{
			{Name: "serial", Type: schema.String},
			{Name: "primary", Type: schema.Boolean},
		}},
		{Name: "pin", Type: schema.String, Mutability: schema.WriteOnly, Returned: schema.Never},
		{Name: "note", Type: schema.String, Returned: schema.OnRequest},
	}}
	team := &schema.Schema{ID: teamURN2, Name: "Team", Attributes: []*schema.Attribute{{Name: "team", Type: schema.String}}}
	extended, err := schema.User().WithExtensions(schema.Extension{Schema: badge}, schema.Extension{Schema: team})
	require.NoError(t, err)
	return map[string]*schema.ResourceType{"builtin": schema.User(), "host extensions": extended}
}

// encodeUserBoth returns what write (the typed encoder) and writeResource (the schema-driven one)
// write for u of rt in tenant, under the zero projection.
func encodeUserBoth(t testing.TB, rt *schema.ResourceType, base, tenant string, u *store.User) (typed, generic string) {
	t.Helper()
	var p projection
	require.True(t, writesUser(rt, &p), "the typed encoder writes users of %s", rt.Name)
	k := (&handler{base: base, userRT: rt}).userKind()
	var e encoder
	k.write(&e, tenant, u, &p)
	typed = string(e.buf)
	g := encoder{}
	g.writeResource(&resourceOut{rt: rt, res: u, base: base, tenant: tenant, id: u.ID, extended: k.extended(u)}, &p)
	return typed, string(g.buf)
}

// TestTypedUserEncoder compares the typed encoder of users with the schema-driven one, which
// must write the same bytes: the order of attributes, the values left out, schemas, $ref,
// meta and the escaping of strings.
func TestTypedUserEncoder(t *testing.T) {
	created := time.Date(2026, 3, 1, 10, 20, 30, 0, time.UTC)
	modified := time.Date(2026, 3, 2, 10, 20, 30, 123456789, time.FixedZone("CET", 3600))
	mv := func(vs ...store.MultiValue) []store.MultiValue { return vs }
	escapes := "q\"b\\s</script>&\u2028\u2029\x00\x1f\t\n\r\b\féü😀\xff\xe2\x80"
	cases := []struct {
		name         string
		base, tenant string
		u            store.User
	}{
		{name: "empty"},
		{name: "id only", u: store.User{ID: "u1"}},
		{name: "benchmark user", u: store.User{
			ID: "u1", UserName: "user0000001@example.com", ExternalID: "ext-0000001", Active: true,
			DisplayName: "Ann Lee", Name: store.Name{GivenName: "Ann", FamilyName: "Lee", Formatted: "Ann Lee"},
			Emails:     mv(store.MultiValue{Value: "user0000001@example.com", Type: "work", Primary: true}),
			Enterprise: store.EnterpriseUser{Department: "R&D", EmployeeNumber: "1234"},
			Meta:       store.Meta{Created: created, LastModified: modified, Version: 7},
		}},
		{name: "every single-valued attribute", u: store.User{
			ID: "u2", ExternalID: "x", UserName: "ann", Active: true, DisplayName: "d", NickName: "n",
			ProfileURL: "https://p.example/ann", Title: "t", UserType: "Employee", PreferredLanguage: "de-CH",
			Locale: "de-CH", Timezone: "Europe/Zurich",
			Name: store.Name{Formatted: "f", FamilyName: "fa", GivenName: "g", MiddleName: "m", HonorificPrefix: "Ms.", HonorificSuffix: "III"},
			Meta: store.Meta{Created: created, LastModified: created, Version: 1},
		}},
		{name: "every multi-valued attribute", u: store.User{
			ID:               "u3",
			Emails:           mv(store.MultiValue{Value: "a@x", Type: "work"}, store.MultiValue{}, store.MultiValue{Value: "b@x", Display: "B", Type: "home", Primary: true}),
			PhoneNumbers:     mv(store.MultiValue{Value: "+41 1"}, store.MultiValue{Primary: true}),
			Roles:            mv(store.MultiValue{Display: "admin"}),
			Ims:              mv(store.MultiValue{Value: "ann", Type: "xmpp"}),
			Photos:           mv(store.MultiValue{Value: "https://p.example/a.png", Type: "photo", Primary: true}),
			Entitlements:     mv(store.MultiValue{Type: "only type"}),
			X509Certificates: mv(store.MultiValue{Value: "MIIB", Display: "cert"}),
			Addresses: []store.Address{
				{}, {Formatted: "f", StreetAddress: "s", Locality: "l", Region: "r", PostalCode: "8000", Country: "CH", Type: "work", Primary: true},
				{Primary: true}, {Country: "DE"},
			},
			Meta: store.Meta{Version: 2},
		}},
		{name: "only empty values", u: store.User{
			ID: "u4", Emails: mv(store.MultiValue{}, store.MultiValue{}), Addresses: []store.Address{{}},
			Groups: []store.GroupRef{{}}, Roles: []store.MultiValue{},
		}},
		{name: "primary only", u: store.User{ID: "u5", Emails: mv(store.MultiValue{Primary: true})}},
		{name: "groups", base: "https://id.example.com/scim/v2", tenant: "acme", u: store.User{ID: "u6", Groups: []store.GroupRef{
			{Value: "g1", Display: "Admins", Type: "direct"}, {}, {Display: "no value", Type: "direct"},
			{Value: "g/2?x=\"y\"", Type: "indirect"}, {Value: "g3"},
		}}},
		{name: "enterprise manager", u: store.User{ID: "u7", Enterprise: store.EnterpriseUser{Manager: store.Manager{Ref: "../Users/m"}}}},
		{name: "enterprise every attribute", u: store.User{ID: "u8", Enterprise: store.EnterpriseUser{
			EmployeeNumber: "1", CostCenter: "c", Organization: "o", Division: "d", Department: "R&D",
			Manager: store.Manager{Value: "m1", Ref: "https://id.example.com/scim/v2/acme/Users/m1", DisplayName: "Boss"},
		}}},
		{name: "escapes", base: "https://id.example.com/ü\xff<&>", tenant: "t\"\\" + escapes, u: store.User{
			ID: "id" + escapes, ExternalID: escapes, UserName: escapes, DisplayName: escapes,
			Name:       store.Name{Formatted: escapes, MiddleName: escapes},
			Emails:     mv(store.MultiValue{Value: escapes, Display: escapes, Type: escapes}),
			Addresses:  []store.Address{{StreetAddress: escapes}},
			Groups:     []store.GroupRef{{Value: escapes, Display: escapes}},
			Enterprise: store.EnterpriseUser{Department: escapes, Manager: store.Manager{DisplayName: escapes}},
		}},
		{name: "times and versions", u: store.User{ID: "u9", Meta: store.Meta{
			Created: time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), LastModified: time.Unix(1<<40, 999).In(time.FixedZone("x", -7*3600-1800)), Version: -3,
		}}},
		{name: "large version", u: store.User{ID: "u10", Meta: store.Meta{Version: 1<<63 - 1}}},
		{name: "extension values", u: store.User{ID: "u11", Extensions: store.Extensions{
			badgeURN: {"badge": "B-1", "level": 3.5, "since": "2026-01-02T03:04:05Z", "tags": []any{"a", "b"},
				"devices": []any{map[string]any{"serial": "s1", "primary": true}, map[string]any{}}, "pin": "1234", "note": "n"},
		}}},
		{name: "extension values and enterprise", u: store.User{ID: "u12", Enterprise: store.EnterpriseUser{Division: "d"}, Extensions: store.Extensions{
			teamURN2: {"team": "blue"},
		}}},
		{name: "extension without values", u: store.User{ID: "u13", Extensions: store.Extensions{badgeURN: {}}}},
		{name: "values of an unknown extension", u: store.User{ID: "u14", Extensions: store.Extensions{"urn:example:gone": {"x": "y"}}}},
	}
	for rtName, rt := range encoderUserTypes(t) {
		for _, c := range cases {
			t.Run(rtName+"/"+c.name, func(t *testing.T) {
				typed, generic := encodeUserBoth(t, rt, c.base, c.tenant, &c.u)
				require.Equal(t, generic, typed)
				require.True(t, json.Valid([]byte(typed)), typed)
			})
		}
	}
}

// TestTypedUserEncoderFallback checks that the typed encoder is not used where it would write
// other bytes: under a projection, or for a User type other than the built-in one.
func TestTypedUserEncoderFallback(t *testing.T) {
	rt := schema.User()
	for _, q := range []string{"attributes=userName", "excludedAttributes=emails", "attributes=", "excludedAttributes=nothing"} {
		t.Run(q, func(t *testing.T) {
			p := parseProjection(mustQuery(t, q), rt)
			require.False(t, writesUser(rt, &p))
		})
	}
	t.Run("other resource type", func(t *testing.T) {
		var p projection
		require.False(t, writesUser(schema.Group(), &p))
		own := *schema.User()
		own.Schema = &schema.Schema{ID: schema.UserURN, Attributes: schema.User().Schema.Attributes[:3]}
		require.False(t, writesUser(&own, &p))
	})
}

// mustQuery parses the query string q.
func mustQuery(t testing.TB, q string) url.Values {
	t.Helper()
	v, err := url.ParseQuery(q)
	require.NoError(t, err)
	return v
}

// userBytes makes the fields of a user from fuzz bytes.
type userBytes struct{ b []byte }

// byte takes the next byte; 0 when none is left.
func (f *userBytes) byte() byte {
	if len(f.b) == 0 {
		return 0
	}
	c := f.b[0]
	f.b = f.b[1:]
	return c
}

// str takes a string: empty half of the time, else up to 15 raw bytes (perhaps not UTF-8).
func (f *userBytes) str() string {
	c := f.byte()
	if c&1 == 0 {
		return ""
	}
	n := min(int(c>>1)&15, len(f.b))
	s := string(f.b[:n])
	f.b = f.b[n:]
	return s
}

func (f *userBytes) bool() bool { return f.byte()&1 == 1 }

// count takes a number of values, 0 to 3.
func (f *userBytes) count() int { return int(f.byte() & 3) }

func (f *userBytes) multiValues() []store.MultiValue {
	var vs []store.MultiValue
	for range f.count() {
		vs = append(vs, store.MultiValue{Value: f.str(), Display: f.str(), Type: f.str(), Primary: f.bool()})
	}
	return vs
}

func (f *userBytes) time() time.Time {
	if !f.bool() {
		return time.Time{}
	}
	sec := int64(f.byte())<<32 | int64(f.byte())<<16 | int64(f.byte())
	return time.Unix(sec, int64(f.byte())*1_000_003).In(time.FixedZone("z", (int(f.byte())-128)*60))
}

// user makes a user of every attribute the typed encoder writes, and a few extension values.
func (f *userBytes) user() store.User {
	u := store.User{
		ID: f.str(), ExternalID: f.str(), UserName: f.str(), Active: f.bool(), DisplayName: f.str(),
		NickName: f.str(), ProfileURL: f.str(), Title: f.str(), UserType: f.str(),
		PreferredLanguage: f.str(), Locale: f.str(), Timezone: f.str(),
		Name: store.Name{Formatted: f.str(), FamilyName: f.str(), GivenName: f.str(), MiddleName: f.str(),
			HonorificPrefix: f.str(), HonorificSuffix: f.str()},
		Emails: f.multiValues(), PhoneNumbers: f.multiValues(), Roles: f.multiValues(), Ims: f.multiValues(),
		Photos: f.multiValues(), Entitlements: f.multiValues(), X509Certificates: f.multiValues(),
		Enterprise: store.EnterpriseUser{EmployeeNumber: f.str(), CostCenter: f.str(), Organization: f.str(),
			Division: f.str(), Department: f.str(), Manager: store.Manager{Value: f.str(), Ref: f.str(), DisplayName: f.str()}},
		Meta: store.Meta{Created: f.time(), LastModified: f.time(), Version: int64(f.byte()) - 8},
	}
	for range f.count() {
		u.Addresses = append(u.Addresses, store.Address{Formatted: f.str(), StreetAddress: f.str(), Locality: f.str(),
			Region: f.str(), PostalCode: f.str(), Country: f.str(), Type: f.str(), Primary: f.bool()})
	}
	for range f.count() {
		u.Groups = append(u.Groups, store.GroupRef{Value: f.str(), Display: f.str(), Type: f.str()})
	}
	switch f.byte() % 4 {
	case 1:
		u.Extensions = store.Extensions{badgeURN: {"badge": f.str(), "tags": []any{f.str()}}}
	case 2:
		u.Extensions = store.Extensions{teamURN2: {"team": f.str()}}
	}
	return u
}

// FuzzTypedUserEncoder compares the typed encoder of users with the schema-driven one on users
// made from the fuzz bytes.
func FuzzTypedUserEncoder(f *testing.F) {
	f.Add([]byte{}, "acme")
	f.Add([]byte("\x01\x1fuser0000001@example.com\x03abc\x01\x07\"\\<>&\xff\xe2"), "acme")
	f.Add([]byte("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"), "T\u2028")
	rts := encoderUserTypes(f)
	f.Fuzz(func(t *testing.T, data []byte, tenant string) {
		rt := rts["builtin"]
		if len(data) > 0 && data[0]&0x80 != 0 {
			rt = rts["host extensions"]
		}
		src := userBytes{b: data}
		u := src.user()
		typed, generic := encodeUserBoth(t, rt, "https://id.example.com/scim/v2", tenant, &u)
		if typed != generic {
			t.Fatalf("typed encoder:\n%s\nschema-driven encoder:\n%s", typed, generic)
		}
	})
}

// BenchmarkEncodeUser writes the user of BenchmarkVsHandWritten with the typed encoder and with
// the schema-driven one; the figure to quote is typed's time per op divided by schema's.
func BenchmarkEncodeUser(b *testing.B) {
	u := store.User{
		ID: "0b6f7d2c-4a1e-4f51-9a0d-3c1f2b7e8d90", UserName: "user0000001@example.com", ExternalID: "ext-0000001",
		Active: true, DisplayName: "Ann Lee", Name: store.Name{GivenName: "Ann", FamilyName: "Lee", Formatted: "Ann Lee"},
		Emails:     []store.MultiValue{{Value: "user0000001@example.com", Type: "work", Primary: true}},
		Enterprise: store.EnterpriseUser{Department: "R&D", EmployeeNumber: "1234"},
		Meta:       store.Meta{Created: time.Now(), LastModified: time.Now(), Version: 3},
	}
	k := (&handler{base: "https://id.example.com/scim/v2", userRT: schema.User()}).userKind()
	var p projection
	b.Run("impl=typed", func(b *testing.B) {
		e := encoder{buf: make([]byte, 0, 1024)}
		for b.Loop() {
			e.buf = e.buf[:0]
			k.write(&e, "acme", &u, &p)
		}
	})
	b.Run("impl=schema", func(b *testing.B) {
		e := encoder{buf: make([]byte, 0, 1024)}
		for b.Loop() {
			e.buf = e.buf[:0]
			e.writeResource(&resourceOut{rt: k.rt, res: &u, base: k.h.base, tenant: "acme", id: u.ID, extended: k.extended(&u)}, &p)
		}
	})
}

// encoderGroupTypes are the Group resource types the typed encoder is compared on: the
// built-in one, and one with a host-defined extension.
func encoderGroupTypes(t testing.TB) map[string]*schema.ResourceType {
	t.Helper()
	team := &schema.Schema{ID: teamURN2, Name: "Team", Attributes: []*schema.Attribute{
		{Name: "team", Type: schema.String},
		{Name: "codes", Type: schema.String, MultiValued: true},
	}}
	extended, err := schema.Group().WithExtensions(schema.Extension{Schema: team})
	require.NoError(t, err)
	return map[string]*schema.ResourceType{"builtin": schema.Group(), "host extension": extended}
}

// groupProjections are the projections the typed encoder of groups writes.
var groupProjections = []string{"", "excludedAttributes=members", "excludedAttributes=MEMBERS,members"}

// encodeGroupBoth returns what write (the typed encoder) and writeResource (the schema-driven
// one) write for g of rt in tenant under the projection of query.
func encodeGroupBoth(t testing.TB, rt *schema.ResourceType, tenant, query string, g *store.Group) (typed, generic string) {
	t.Helper()
	p := parseProjection(mustQuery(t, query), rt)
	require.True(t, writesGroup(rt, &p), "the typed encoder writes groups of %s under %q", rt.Name, query)
	h := &handler{base: "https://id.example.com/scim/v2", groupRT: rt, cfg: Config{Groups: memstore.New().Groups()}}
	k := h.groupKind()
	var e encoder
	k.write(&e, tenant, g, &p)
	typed = string(e.buf)
	gen := encoder{}
	gen.writeResource(&resourceOut{rt: rt, res: g, base: k.h.base, tenant: tenant, id: g.ID, extended: k.extended(g)}, &p)
	return typed, string(gen.buf)
}

// TestTypedGroupEncoder compares the typed encoder of groups with the schema-driven one, which
// must write the same bytes, with members and without.
func TestTypedGroupEncoder(t *testing.T) {
	escapes := "q\"b\\</script>&\u2028\x00\x1f\téü😀\xff\xe2\x80"
	at := time.Date(2026, 3, 1, 10, 20, 30, 5, time.FixedZone("x", 5400))
	cases := []struct {
		name string
		g    store.Group
	}{
		{name: "empty"},
		{name: "no members", g: store.Group{ID: "g1", DisplayName: "Admins", Meta: store.Meta{Created: at, LastModified: at, Version: 4}}},
		{name: "members", g: store.Group{ID: "g2", ExternalID: "e", DisplayName: "Admins", Members: []store.Member{
			{Value: "u1", Display: "ann@example.com", Type: "User"}, {}, {Display: "no value"}, {Value: "u/2\"", Type: "User"},
		}}},
		{name: "only empty members", g: store.Group{ID: "g3", Members: []store.Member{{}, {}}}},
		{name: "escapes", g: store.Group{ID: escapes, ExternalID: escapes, DisplayName: escapes, Members: []store.Member{{Value: escapes, Display: escapes}}}},
		{name: "extension values", g: store.Group{ID: "g4", Extensions: store.Extensions{teamURN2: {"team": "blue", "codes": []any{"a", "b"}}}}},
		{name: "extension without values", g: store.Group{ID: "g5", Extensions: store.Extensions{teamURN2: {}}}},
		{name: "values of an unknown extension", g: store.Group{ID: "g6", Extensions: store.Extensions{"urn:example:gone": {"x": "y"}}}},
	}
	for rtName, rt := range encoderGroupTypes(t) {
		for _, q := range groupProjections {
			for _, c := range cases {
				t.Run(rtName+"/"+q+"/"+c.name, func(t *testing.T) {
					typed, generic := encodeGroupBoth(t, rt, "acme"+escapes, q, &c.g)
					require.Equal(t, generic, typed)
					require.True(t, json.Valid([]byte(typed)), typed)
				})
			}
		}
	}
	t.Run("fallback", func(t *testing.T) {
		rt := schema.Group()
		for _, q := range []string{"attributes=members", "excludedAttributes=displayName", "excludedAttributes=members,externalId", "excludedAttributes=members.display"} {
			p := parseProjection(mustQuery(t, q), rt)
			require.False(t, writesGroup(rt, &p), q)
		}
		var p projection
		require.False(t, writesGroup(schema.User(), &p))
	})
}

// FuzzTypedGroupEncoder compares the typed encoder of groups with the schema-driven one on
// groups made from the fuzz bytes.
func FuzzTypedGroupEncoder(f *testing.F) {
	f.Add([]byte{}, "acme")
	f.Add([]byte("\x01\x1fAdmins\x03\x01\x07u1\"\\<>&\xff\xe2\x03ann"), "acme")
	rts := encoderGroupTypes(f)
	f.Fuzz(func(t *testing.T, data []byte, tenant string) {
		src := userBytes{b: data}
		c := src.byte()
		rt := rts["builtin"]
		if c&1 != 0 {
			rt = rts["host extension"]
		}
		g := store.Group{ID: src.str(), ExternalID: src.str(), DisplayName: src.str()}
		for range src.count() {
			g.Members = append(g.Members, store.Member{Value: src.str(), Display: src.str(), Type: src.str()})
		}
		if c&2 != 0 {
			g.Extensions = store.Extensions{teamURN2: {"team": src.str()}}
		}
		g.Meta = store.Meta{Created: src.time(), LastModified: src.time(), Version: int64(src.byte())}
		typed, generic := encodeGroupBoth(t, rt, tenant, groupProjections[int(c>>2)%len(groupProjections)], &g)
		if typed != generic {
			t.Fatalf("typed encoder:\n%s\nschema-driven encoder:\n%s", typed, generic)
		}
	})
}
