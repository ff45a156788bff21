package sqlstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/memstore"
	"github.com/visid/visid/store/schema"
)

// The differential tests generate random users, groups and filters and check that the SQL of
// whereFilter keeps the same resources, in the same order, as filter.Match.
//
// Each run uses the fixed seed 1 and a random seed, both logged. VISID_FILTER_SEED=n runs seed
// n instead of a random one, to reproduce a failure; VISID_FILTER_CASES=n sets the filters per
// seed and resource type (default 1200 user filters and 400 group filters).

// diffSeeds returns the seeds of this run.
func diffSeeds(t *testing.T) []uint64 {
	seed := rand.Uint64() >> 1
	if s := os.Getenv("VISID_FILTER_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "VISID_FILTER_SEED")
		seed = n
	}
	t.Logf("seeds 1 and %d (reproduce with VISID_FILTER_SEED=%d)", seed, seed)
	return []uint64{1, seed}
}

// diffCases returns how many user and group filters to run per seed.
func diffCases(t *testing.T) (users, groups int) {
	users, groups = 1200, 400
	if s := os.Getenv("VISID_FILTER_CASES"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "VISID_FILTER_CASES")
		users, groups = n, max(n/3, 1)
	}
	return users, groups
}

func TestDifferentialFilterSQL(t *testing.T) {
	t.Parallel()
	seeds := diffSeeds(t)
	nu, ng := diffCases(t)
	ftEachDialect(t, func(t *testing.T, db *ftDB) {
		var total, some int
		for _, seed := range seeds {
			// Tenant t2 holds a data set with the same ids and other values: a filter that
			// looked past r.tenant would find its resources.
			other := newDiffGen(seed+1000, db.textBytes).dataset()
			db.load(t, "t2-"+strconv.FormatUint(seed, 10), kindUser, schema.User(), other.userIDs, other.users)
			db.load(t, "t2-"+strconv.FormatUint(seed, 10), kindGroup, schema.Group(), other.groupIDs, other.groups)

			g := newDiffGen(seed, db.textBytes)
			ds := g.dataset()
			tenant := "t1-" + strconv.FormatUint(seed, 10)
			db.load(t, tenant, kindUser, schema.User(), ds.userIDs, ds.users)
			db.load(t, tenant, kindGroup, schema.Group(), ds.groupIDs, ds.groups)

			var fails int
			run := func(kind resourceKind, rt *schema.ResourceType, ids []string, rs []filter.Resource, n int) {
				for range n {
					f := g.filter(rt)
					e, err := filter.Parse(f, rt)
					require.NoError(t, err, "seed %d: the generator wrote an invalid filter %q", seed, f)
					want := ftMatch(e, ids, rs)
					got, where := db.list(t, tenant, kind, e)
					total++
					if len(want) > 0 && len(want) < len(ids) {
						some++
					}
					if !slices.Equal(want, got) {
						fails++
						t.Errorf("seed %d: filter %s\nparsed: %s\nSQL: %s\nfilter.Match: %q\nSQL:          %q\n%s",
							seed, f, e, where, want, got, diffExplain(want, got, ids, rs))
						if fails >= 10 {
							t.Fatalf("seed %d: too many differences", seed)
						}
					}
				}
			}
			run(kindUser, schema.User(), ds.userIDs, ds.users, nu)
			run(kindGroup, schema.Group(), ds.groupIDs, ds.groups, ng)
		}
		t.Logf("%d filters over %d seeds; %d kept some but not all resources", total, len(seeds), some)
		// A generator whose filters keep all or nothing tests little.
		require.Greater(t, some, total/5, "too few filters keep some but not all resources")
	})
}

// diffExplain prints the resources on which Match and the SQL disagree.
func diffExplain(want, got, ids []string, rs []filter.Resource) string {
	var b strings.Builder
	for i, id := range ids {
		if slices.Contains(want, id) != slices.Contains(got, id) {
			fmt.Fprintf(&b, "%s (Match %v): %+v\n", id, slices.Contains(want, id), rs[i])
		}
	}
	return b.String()
}

// diffDataset is a random tenant: users and groups in creation order, with their ids.
type diffDataset struct {
	userIDs, groupIDs []string
	users, groups     []filter.Resource
	userList          []*store.User
	groupList         []*store.Group
}

// diffGen generates data sets and filters. The literals of its filters are mostly taken from
// the values of its last data set, so that filters keep some resources.
type diffGen struct {
	rnd *rand.Rand
	// textBytes allows NUL and invalid UTF-8 in values (SQLite keeps them, PostgreSQL does not).
	textBytes bool
	// seen holds the values of the data set by path ("emails.value"), for literals.
	seen  map[string][]string
	times []time.Time // the instants of the data set
}

func newDiffGen(seed uint64, textBytes bool) *diffGen {
	return &diffGen{rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), textBytes: textBytes, seen: map[string][]string{}}
}

// diffPieces are the parts random strings are made of: case-folding traps (ß and ẞ, the
// Kelvin and Ohm signs, long s, final sigma, dotted and dotless i, titlecase digraphs,
// ligatures, decomposed accents), LIKE's wildcards and escape, quotes, digits and ASCII
// neighbours for ordering.
func diffPieces() []string {
	return []string{
		"alice", "Alice", "ALICE", "bob", "Bob", "émile", "ÉMILE", "Émile", "e\u0301mile", "straße", "STRASSE",
		"STRAẞE", "strasse", "\u212Aelvin", "kelvin", "KELVIN", "\u2126m", "ωm", "ſ", "S", "s", "σοφία",
		"ΣΟΦΊΑ", "σοφίας", "ǅemal", "Ǆ", "ǆ", "İstanbul", "istanbul", "ı", "I", "i", "ﬀ", "FF", "µ", "Μ", "日本",
		"😀", "x%y", "a_b", "100%", "\\", "'", "\"", " ", "a b", "~", "@example.com", "@Example.COM", "work",
		"Work", "home", "0", "1", "9", "10", "-", ".", "z", "Z", "zz", "a", "A", "\u00a0", "\u0080", "\U0010FFFF",
	}
}

// diffBytes are pieces only SQLite can store.
func diffBytes() []string {
	return []string{"\x00", "a\x00b", "\xff", "\xc3", "\xe2\x82", "\xed\xa0\x80", "\xc3\xa9\xff"}
}

func (g *diffGen) coin(p float64) bool { return g.rnd.Float64() < p }

func diffPick[T any](g *diffGen, xs []T) T { return xs[g.rnd.IntN(len(xs))] }

// str returns a random string, empty with probability pEmpty.
func (g *diffGen) str(pEmpty float64) string {
	if g.coin(pEmpty) {
		return ""
	}
	var b strings.Builder
	for n := 1 + g.rnd.IntN(3); n > 0; n-- {
		if g.textBytes && g.coin(0.05) {
			b.WriteString(diffPick(g, diffBytes()))
		} else {
			b.WriteString(diffPick(g, diffPieces()))
		}
	}
	s := b.String()
	if g.coin(0.2) {
		s = g.recase(s)
	}
	return s
}

// recase changes the case of some runes of s.
func (g *diffGen) recase(s string) string {
	if !utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case g.coin(0.3):
			r = unicode.ToUpper(r)
		case g.coin(0.3):
			r = unicode.ToLower(r)
		case g.coin(0.2):
			r = unicode.SimpleFold(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// see records a value of path for literals.
func (g *diffGen) see(path, v string) string {
	if v != "" {
		g.seen[path] = append(g.seen[path], v)
	}
	return v
}

// diffTimes are instants next to each other and to the ends of the range t holds exactly.
func diffTimes() []time.Time {
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	return []time.Time{
		base, base.Add(1), base.Add(-1), base.Add(time.Second), base.Add(24 * time.Hour),
		time.Unix(0, 0).UTC(), time.Unix(0, -1).UTC(), time.Unix(0, 1).UTC(),
		time.Date(2000, 2, 29, 12, 34, 56, 789000000, time.UTC),
		time.Unix(0, attrMinNanos).UTC(), time.Unix(0, attrMaxNanos).UTC(),
		time.Date(2024, 1, 1, 1, 0, 0, 1, time.FixedZone("", 3600)),
	}
}

// when returns an instant for a value, absent with probability pZero. Now and then it is
// before or after the range t holds exactly; such instants are not used as literals, since t
// cannot tell them from a literal beyond the same end of the range (see attrs.go).
func (g *diffGen) when(pZero float64) time.Time {
	switch {
	case g.coin(pZero):
		return time.Time{}
	case g.coin(0.03):
		return time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)
	case g.coin(0.03):
		return time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	t := diffPick(g, diffTimes())
	g.times = append(g.times, t)
	return t
}

func (g *diffGen) multiValues(path string, n int, types ...string) []store.MultiValue {
	var vs []store.MultiValue
	for range g.rnd.IntN(n + 1) {
		if g.coin(0.1) {
			vs = append(vs, store.MultiValue{})
			continue
		}
		typ := g.str(0.3)
		if g.coin(0.6) {
			typ = diffPick(g, types)
		}
		vs = append(vs, store.MultiValue{
			Value:   g.see(path+".value", g.str(0.15)),
			Display: g.see(path+".display", g.str(0.7)),
			Type:    g.see(path+".type", typ),
			Primary: g.coin(0.3),
		})
	}
	return vs
}

// dataset returns a random tenant. Users' userNames differ under schema.Fold, as a store
// requires.
func (g *diffGen) dataset() *diffDataset {
	g.seen = map[string][]string{"meta.resourceType": {"User", "Group"},
		"schemas": {schema.UserURN, schema.EnterpriseUserURN, schema.GroupURN}}
	g.times = nil
	ds := &diffDataset{}
	folded := map[string]bool{}
	nu := 20 + g.rnd.IntN(40)
	for i := range nu {
		u := &store.User{
			ID:          fmt.Sprintf("%c%03d", 'a'+rune(g.rnd.IntN(26)), i),
			UserName:    g.str(0),
			ExternalID:  g.str(0.5),
			Active:      g.coin(0.5),
			DisplayName: g.str(0.6),
			NickName:    g.str(0.7),
			ProfileURL:  g.str(0.8),
			Title:       g.str(0.5),
			UserType:    g.str(0.8),
			Locale:      g.str(0.8),
			Name: store.Name{
				Formatted:  g.str(0.8),
				FamilyName: g.str(0.6),
				GivenName:  g.str(0.6),
				MiddleName: g.str(0.9),
			},
			Emails:           g.multiValues("emails", 3, "work", "Work", "home", "other"),
			PhoneNumbers:     g.multiValues("phoneNumbers", 2, "work", "mobile", "fax"),
			Roles:            g.multiValues("roles", 2, "admin", "user"),
			Ims:              g.multiValues("ims", 2, "xmpp", "skype", "aim"),
			Photos:           g.multiValues("photos", 2, "photo", "thumbnail"),
			Entitlements:     g.multiValues("entitlements", 2, "vpn", "wiki"),
			X509Certificates: g.multiValues("x509Certificates", 1, "signing"),
			Enterprise: store.EnterpriseUser{
				EmployeeNumber: g.str(0.5),
				CostCenter:     g.str(0.7),
				Organization:   g.str(0.7),
				Division:       g.str(0.8),
				Department:     g.str(0.5),
				Manager:        store.Manager{DisplayName: g.str(0.7), Ref: g.str(0.9)},
			},
			Meta: store.Meta{Created: g.when(0.1), LastModified: g.when(0.4)},
		}
		if g.coin(0.2) {
			u.Enterprise = store.EnterpriseUser{} // schemas lists the core URN only
		}
		for folded[schema.Fold(u.UserName)] {
			u.UserName += strconv.Itoa(i)
		}
		folded[schema.Fold(u.UserName)] = true
		for range g.rnd.IntN(3) {
			u.Addresses = append(u.Addresses, store.Address{
				Locality:   g.see("addresses.locality", g.str(0.4)),
				Country:    g.see("addresses.country", g.str(0.4)),
				Type:       g.see("addresses.type", g.str(0.5)),
				PostalCode: g.see("addresses.postalCode", g.str(0.7)),
				Primary:    g.coin(0.3),
			})
		}
		if i > 0 && g.coin(0.3) {
			u.Enterprise.Manager.Value = ds.userIDs[g.rnd.IntN(i)]
		}
		for path, v := range map[string]string{
			"userName": u.UserName, "externalId": u.ExternalID, "displayName": u.DisplayName,
			"nickName": u.NickName, "title": u.Title, "name.familyName": u.Name.FamilyName,
			"name.givenName": u.Name.GivenName, "employeeNumber": u.Enterprise.EmployeeNumber,
			"department": u.Enterprise.Department, "manager.value": u.Enterprise.Manager.Value,
			"manager.displayName": u.Enterprise.Manager.DisplayName, "id": u.ID,
		} {
			g.see(path, v)
		}
		ds.userIDs = append(ds.userIDs, u.ID)
		ds.userList = append(ds.userList, u)
	}
	for i := range 4 + g.rnd.IntN(8) {
		gr := &store.Group{
			ID:          fmt.Sprintf("g%c%02d", 'a'+rune(g.rnd.IntN(26)), i),
			DisplayName: g.see("displayName", g.str(0)),
			ExternalID:  g.str(0.5),
			Meta:        store.Meta{Created: g.when(0.1)},
		}
		for _, j := range g.rnd.Perm(nu)[:g.rnd.IntN(min(nu, 8))] {
			u := ds.userList[j]
			gr.Members = append(gr.Members, store.Member{Value: u.ID, Display: u.UserName, Type: "User"})
			u.Groups = append(u.Groups, store.GroupRef{Value: gr.ID, Display: gr.DisplayName, Type: "direct"})
			g.see("members.value", u.ID)
			g.see("groups.value", gr.ID)
		}
		ds.groupIDs = append(ds.groupIDs, gr.ID)
		ds.groupList = append(ds.groupList, gr)
	}
	for _, u := range ds.userList {
		ds.users = append(ds.users, u)
	}
	for _, gr := range ds.groupList {
		ds.groups = append(ds.groups, gr)
	}
	return ds
}

// filter returns a random filter over rt, as a string: and, or, not, value paths, value
// filters in attribute paths, every operator a type allows, null, and attribute names in any
// case, URN-qualified or not.
func (g *diffGen) filter(rt *schema.ResourceType) string {
	return g.expr(rt, nil, 2+g.rnd.IntN(2))
}

// expr writes an expression; inner is the attribute whose value filter it is, or nil.
func (g *diffGen) expr(rt *schema.ResourceType, inner *schema.Attribute, depth int) string {
	if depth > 0 {
		switch n := g.rnd.IntN(100); {
		case n < 15:
			return g.group(rt, inner, depth-1) + diffPick(g, []string{" and ", " AND ", " and\t"}) + g.group(rt, inner, depth-1)
		case n < 28:
			return g.group(rt, inner, depth-1) + diffPick(g, []string{" or ", " OR "}) + g.group(rt, inner, depth-1)
		case n < 36:
			return diffPick(g, []string{"not ", "NOT", "not"}) + "(" + g.expr(rt, inner, depth-1) + ")"
		case n < 46 && inner == nil:
			a := g.multiComplex(rt)
			return g.attrName(a) + "[" + g.expr(rt, a, min(depth-1, 2)) + "]"
		}
	}
	return g.compare(rt, inner)
}

// group writes an expression, in parentheses or not (and and or then bind as they do).
func (g *diffGen) group(rt *schema.ResourceType, inner *schema.Attribute, depth int) string {
	e := g.expr(rt, inner, depth)
	if g.coin(0.6) {
		return "(" + e + ")"
	}
	return e
}

// diffAttributes returns the filterable attributes and sub-attributes of rt: pairs (attr, sub)
// with sub nil for the attribute itself.
func diffAttributes(rt *schema.ResourceType) [][2]*schema.Attribute {
	var out [][2]*schema.Attribute
	for a := range rt.Attributes {
		if !filterableAttr(a) {
			continue
		}
		out = append(out, [2]*schema.Attribute{a, nil})
		for _, s := range a.SubAttributes {
			if filterableAttr(s) {
				out = append(out, [2]*schema.Attribute{a, s})
			}
		}
	}
	return out
}

func (g *diffGen) multiComplex(rt *schema.ResourceType) *schema.Attribute {
	var as []*schema.Attribute
	for a := range rt.Attributes {
		if a.MultiValued && a.Type == schema.Complex {
			as = append(as, a)
		}
	}
	return diffPick(g, as)
}

// attrName writes a top-level attribute's name in a random case, qualified or not.
func (g *diffGen) attrName(a *schema.Attribute) string {
	name := a.Name
	if name == "externalId" && g.coin(0.2) {
		name = "external_id"
	}
	name = g.asciiCase(name)
	if a.Extension || g.coin(0.1) {
		if a.Extension && g.coin(0.4) {
			return name // unqualified: the only extension attribute of its name
		}
		return g.asciiCase(a.Schema) + ":" + name
	}
	return name
}

func (g *diffGen) asciiCase(s string) string {
	switch g.rnd.IntN(4) {
	case 0:
		return strings.ToUpper(s)
	case 1:
		return strings.ToLower(s)
	}
	return s
}

// compare writes a comparison; inside a value filter, of one of inner's sub-attributes.
func (g *diffGen) compare(rt *schema.ResourceType, inner *schema.Attribute) string {
	var attr, sub *schema.Attribute
	var path string
	if inner != nil {
		var subs []*schema.Attribute
		for _, s := range inner.SubAttributes {
			if filterableAttr(s) {
				subs = append(subs, s)
			}
		}
		attr, sub = inner, diffPick(g, subs)
		path = g.asciiCase(sub.Name)
	} else {
		p := diffPick(g, diffAttributes(rt))
		attr, sub = p[0], p[1]
		path = g.attrName(attr)
		if attr.MultiValued && attr.Type == schema.Complex && g.coin(0.3) {
			path += "[" + g.expr(rt, attr, g.rnd.IntN(2)) + "]"
			if sub == nil {
				sub = attr.Sub("value")
				if sub == nil || g.coin(0.3) {
					var subs []*schema.Attribute
					for _, s := range attr.SubAttributes {
						if filterableAttr(s) {
							subs = append(subs, s)
						}
					}
					sub = diffPick(g, subs)
				}
			}
		}
		if sub != nil {
			path += "." + g.asciiCase(sub.Name)
		}
	}
	def, seenPath := attr, attr.Name
	if sub != nil {
		def, seenPath = sub, attr.Name+"."+sub.Name
	}
	if def.Type == schema.Complex {
		// The attribute itself: present or not, or its value sub-attribute compared.
		if v := def.Sub("value"); v == nil || g.coin(0.5) {
			return path + diffPick(g, []string{" pr", " eq null", " ne null", " PR", " Eq NULL"})
		}
		def, seenPath = def.Sub("value"), attr.Name+".value"
	}
	switch g.rnd.IntN(12) {
	case 0:
		return path + " pr"
	case 1:
		return path + diffPick(g, []string{" eq null", " ne null"})
	}
	switch def.Type {
	case schema.Boolean:
		return path + diffPick(g, []string{" eq ", " ne "}) + diffPick(g, []string{"true", "false", "True", `"FALSE"`, `"true"`})
	case schema.DateTime:
		return path + " " + diffPick(g, []string{"eq", "ne", "gt", "ge", "lt", "le"}) + " " + g.timeLiteral()
	}
	op := diffPick(g, []string{"eq", "eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le"})
	if def.Type == schema.Binary {
		op = diffPick(g, []string{"eq", "ne"})
	}
	return path + " " + g.asciiCase(op) + " " + diffQuote(g, g.stringLiteral(seenPath, op))
}

func (g *diffGen) timeLiteral() string {
	switch {
	case g.coin(0.05):
		return diffPick(g, []string{`"0001-01-01T00:00:00Z"`, `"9999-12-31T23:59:59.999999999Z"`})
	case len(g.times) == 0 || g.coin(0.2):
		return `"` + diffPick(g, diffTimes()).Format(time.RFC3339Nano) + `"`
	}
	t := diffPick(g, g.times)
	switch g.rnd.IntN(4) {
	case 0:
		// A nanosecond either way, within the range t holds exactly: a literal beyond it is
		// only compared with instants within it (see when).
		if u := t.Add(time.Duration(g.rnd.IntN(3) - 1)); !u.Before(time.Unix(0, attrMinNanos)) && !u.After(time.Unix(0, attrMaxNanos)) {
			t = u
		}
	case 1:
		t = t.In(time.FixedZone("", (g.rnd.IntN(27)-12)*3600))
	}
	return `"` + t.Format(time.RFC3339Nano) + `"`
}

// stringLiteral returns a value of path, or a part of one, or a random string, in some case.
func (g *diffGen) stringLiteral(path, op string) string {
	vs := g.seen[path]
	if len(vs) == 0 || g.coin(0.2) {
		return g.str(0.05)
	}
	v := diffPick(g, vs)
	runes := []rune(v)
	if !utf8.ValidString(v) {
		runes = nil
	}
	switch {
	case len(runes) > 1 && (op == "sw" || g.coin(0.1)):
		v = string(runes[:1+g.rnd.IntN(len(runes)-1)])
	case len(runes) > 1 && (op == "ew" || g.coin(0.1)):
		v = string(runes[g.rnd.IntN(len(runes)):])
	case len(runes) > 2 && op == "co":
		i := g.rnd.IntN(len(runes) - 1)
		v = string(runes[i : i+1+g.rnd.IntN(len(runes)-i-1)])
	case g.coin(0.1):
		v += diffPick(g, []string{"\x00", "a", "\U0010FFFF", "~"})
	}
	if g.coin(0.4) {
		v = g.recase(v)
	}
	return v
}

// diffQuote writes s as a filter string, escaping some characters as \uXXXX.
func diffQuote(g *diffGen, s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteByte(s[i]) // Parse reads it as U+FFFD
			i++
			continue
		}
		i += size
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || (r >= 0x80 && g.coin(0.2)):
			if r > 0xFFFF {
				r1, r2 := utf16Pair(r)
				fmt.Fprintf(&b, `\u%04x\u%04X`, r1, r2)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xD800 + (r>>10)&0x3FF, 0xDC00 + r&0x3FF
}

// TestDifferentialStore checks the Store end to end: the same users and groups created in
// memstore and in the Store, and Users.List and Groups.List with random filters, pages and
// sorts (by every sortable attribute, both directions; those that a column serves as often as
// all the others), and walks by each store's own keyset
// positions, give the same ids in the same order and the same totals.
func TestDifferentialStore(t *testing.T) {
	t.Parallel()
	seeds := diffSeeds(t)
	nu, ng := diffCases(t)
	nu, ng = max(nu/4, 1), max(ng/4, 1)
	ctx := context.Background()
	each := func(t *testing.T, sql store.Backend) {
		var total int
		for _, seed := range seeds {
			mem := memstore.New().Backend()
			g := newDiffGen(seed, false)
			ds := g.dataset()
			tenant := "t" + strconv.FormatUint(seed, 10)
			for _, b := range []store.Backend{mem, sql} {
				require.NoError(t, b.Tenants.Create(ctx, store.Tenant{ID: tenant}))
				for _, u := range ds.userList {
					u := *u
					u.Groups = nil
					_, err := b.Users.Create(ctx, tenant, u)
					require.NoError(t, err)
				}
				for _, gr := range ds.groupList {
					gr := *gr
					gr.Members = slices.Clone(gr.Members)
					for i := range gr.Members {
						gr.Members[i] = store.Member{Value: gr.Members[i].Value}
					}
					_, err := b.Groups.Create(ctx, tenant, gr)
					require.NoError(t, err)
				}
			}
			// page is a random page: by StartIndex or all, in creation order or sorted by a
			// random sortable attribute of rt.
			page := func(rt *schema.ResourceType) store.Query {
				var q store.Query
				switch g.rnd.IntN(4) {
				case 0:
					q = store.Query{StartIndex: g.rnd.IntN(5), Count: g.rnd.IntN(5)}
				case 1:
					q = store.Query{StartIndex: 2, Count: -1}
				default:
					q = store.Query{Count: -1}
				}
				switch n := g.rnd.IntN(4); {
				case n == 0:
					// One of the sorts that a column serves (userName, displayName and
					// sortColumns), whose reads differ from the others'.
					kind, paths := kindUser, []string{"userName"}
					if rt == schema.Group() {
						kind, paths = kindGroup, []string{"displayName"}
					}
					for _, c := range sortColumns(kind) {
						paths = append(paths, c.path)
					}
					attr, sub, err := rt.Lookup(diffPick(g, paths))
					require.NoError(t, err)
					q.Sort = store.Sort{Attr: attr, Sub: sub, Descending: g.coin(0.5)}
				case n == 1:
					var sortable [][2]*schema.Attribute
					for _, as := range diffAttributes(rt) {
						if store.Sortable(as[0], as[1]) {
							sortable = append(sortable, as)
						}
					}
					as := diffPick(g, sortable)
					q.Sort = store.Sort{Attr: as[0], Sub: as[1], Descending: g.coin(0.5)}
				}
				return q
			}
			var fails int
			check := func(f string, q store.Query, wantIDs, gotIDs []string, wantTotal, gotTotal int) {
				total++
				if slices.Equal(wantIDs, gotIDs) && wantTotal == gotTotal {
					return
				}
				fails++
				t.Errorf("seed %d: filter %s, sort %q descending %v, StartIndex %d, Count %d, after %v, before %v\nmemstore: %d %q\nStore:    %d %q",
					seed, f, q.Sort.Path(), q.Sort.Descending, q.StartIndex, q.Count, q.After != nil, q.Before != nil, wantTotal, wantIDs, gotTotal, gotIDs)
				if fails >= 10 {
					t.Fatalf("seed %d: too many differences", seed)
				}
			}
			// walk follows each backend's own Next (then Prev) from a first page of a few, each
			// backend's positions being its own, and compares the pages.
			walk := func(f string, q store.Query, list func(b store.Backend, q store.Query) ([]string, int, *store.Position, *store.Position)) {
				q.StartIndex, q.Count = 1, 1+g.rnd.IntN(4)
				mq, sq := q, q
				for range 3 {
					want, wantTotal, mNext, mPrev := list(mem, mq)
					got, gotTotal, sNext, sPrev := list(sql, sq)
					check(f, sq, want, got, wantTotal, gotTotal)
					if (mNext == nil) != (sNext == nil) || (mPrev == nil) != (sPrev == nil) {
						check(f+" (Next and Prev)", sq, []string{fmt.Sprint(mNext != nil, mPrev != nil)}, []string{fmt.Sprint(sNext != nil, sPrev != nil)}, 0, 0)
						return
					}
					switch {
					case mNext != nil && g.coin(0.8):
						mq.After, mq.Before, sq.After, sq.Before = mNext, nil, sNext, nil
					case mPrev != nil:
						mq.After, mq.Before, sq.After, sq.Before = nil, mPrev, nil, sPrev
					default:
						return
					}
				}
			}
			listUsers := func(b store.Backend, q store.Query) ([]string, int, *store.Position, *store.Position) {
				p, err := b.Users.List(ctx, tenant, q)
				require.NoError(t, err)
				return diffUserIDs(p.Resources), p.TotalResults, p.Next, p.Prev
			}
			listGroups := func(b store.Backend, q store.Query) ([]string, int, *store.Position, *store.Position) {
				p, err := b.Groups.List(ctx, tenant, q)
				require.NoError(t, err)
				return diffGroupIDs(p.Resources), p.TotalResults, p.Next, p.Prev
			}
			for range nu {
				f := g.filter(schema.User())
				e, err := filter.Parse(f, schema.User())
				require.NoError(t, err, f)
				q := page(schema.User())
				q.Filter = e
				want, wantTotal, _, _ := listUsers(mem, q)
				got, gotTotal, _, _ := listUsers(sql, q)
				check(f, q, want, got, wantTotal, gotTotal)
				if g.coin(0.3) {
					walk(f, q, listUsers)
				}
			}
			for range ng {
				f := g.filter(schema.Group())
				e, err := filter.Parse(f, schema.Group())
				require.NoError(t, err, f)
				q := page(schema.Group())
				q.Filter = e
				want, wantTotal, _, _ := listGroups(mem, q)
				got, gotTotal, _, _ := listGroups(sql, q)
				check(f, q, want, got, wantTotal, gotTotal)
				if g.coin(0.3) {
					walk(f, q, listGroups)
				}
			}
		}
		t.Logf("%d filters over %d seeds", total, len(seeds))
	}
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		s, err := Open(ctx, "sqlite:"+t.TempDir()+"/visid.db")
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		require.NoError(t, s.Migrate(ctx))
		each(t, s.Backend())
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		s, err := New(Config{DB: ftPostgresSchema(t)}) // skips without VISID_TEST_POSTGRES_DSN
		require.NoError(t, err)
		require.NoError(t, s.Migrate(ctx))
		each(t, s.Backend())
	})
}

func diffUserIDs(us []store.User) []string {
	ids := make([]string, len(us))
	for i := range us {
		ids[i] = us[i].ID
	}
	return ids
}

func diffGroupIDs(gs []store.Group) []string {
	ids := make([]string, len(gs))
	for i := range gs {
		ids[i] = gs[i].ID
	}
	return ids
}
