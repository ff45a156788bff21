package scimsvc

import (
	"unicode/utf8"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/schema"
)

// decodeUser decodes body, the request body of a POST or PUT of a User of schema.User() (no
// host-defined extension), straight into the store.User the generic path (parseBody,
// decodeTree, complete, onePrimary, userFromTree) makes of it, in one pass over the bytes and
// without a tree. It takes only the shapes identity providers send: attribute names spelt
// exactly as the schemas spell them, the enterprise extension in an object under its URN,
// strings, booleans (or "true"/"false" in any case where a boolean is expected) and nulls,
// multi-valued attributes as arrays of objects, and read-only attributes (id, meta, groups,
// schemas) and password, which it drops as decodeTree does. ok is false for anything else —
// another case or a URN-qualified or dotted name, an unknown attribute, a number, a duplicate
// member, an escape other than the short ones or \u of a character that is neither NUL nor a
// surrogate, a missing userName, a syntax error — and for every body the generic path refuses:
// the caller then runs the generic path on the same bytes, which gives the answer (proved by
// FuzzTypedUserDecode).
func decodeUser(body []byte) (u store.User, ok bool) {
	d := bodyDecoder{treeParser{b: body}}
	u.Active = activeOf(false, false) // until the body says otherwise
	d.space()
	if !d.object(func(k []byte) (uint, bool) { return d.userMember(&u, k) }) {
		return store.User{}, false
	}
	d.space()
	if d.i != len(d.b) || u.UserName == "" {
		return store.User{}, false
	}
	return u, true
}

// bodyDecoder is the state of decodeUser and decodePatch: the body and the offset of the next
// byte to read.
type bodyDecoder struct {
	treeParser // for space and literal
}

// userMember decodes the value of the top-level member key into u, and returns the bit that
// stands for key among the names of the object.
func (d *bodyDecoder) userMember(u *store.User, key []byte) (uint, bool) {
	switch string(key) {
	case "schemas":
		return 0, d.stringArray()
	case "id":
		return 1, d.skipString()
	case "externalId":
		return d.str(2, &u.ExternalID)
	case "userName":
		return d.str(3, &u.UserName)
	case "displayName":
		return d.str(4, &u.DisplayName)
	case "nickName":
		return d.str(5, &u.NickName)
	case "profileUrl":
		return d.str(6, &u.ProfileURL)
	case "title":
		return d.str(7, &u.Title)
	case "userType":
		return d.str(8, &u.UserType)
	case "preferredLanguage":
		return d.str(9, &u.PreferredLanguage)
	case "locale":
		return d.str(10, &u.Locale)
	case "timezone":
		return d.str(11, &u.Timezone)
	case "active":
		b, set, ok := d.boolean()
		u.Active = activeOf(b, set)
		return 12, ok
	case "password":
		return 13, d.skipString()
	case "meta":
		return 14, d.skipObject(metaMember)
	case "groups":
		return 15, d.array(func() bool { return d.skipObject(groupRefMember) })
	case "name":
		return 16, d.object(func(k []byte) (uint, bool) { return d.nameMember(&u.Name, k) })
	case "emails":
		return 17, d.multiValues(&u.Emails)
	case "phoneNumbers":
		return 18, d.multiValues(&u.PhoneNumbers)
	case "ims":
		return 19, d.multiValues(&u.Ims)
	case "photos":
		return 20, d.multiValues(&u.Photos)
	case "entitlements":
		return 21, d.multiValues(&u.Entitlements)
	case "roles":
		return 22, d.multiValues(&u.Roles)
	case "addresses":
		return 23, d.addresses(&u.Addresses)
	case schema.EnterpriseUserURN:
		return 24, d.object(func(k []byte) (uint, bool) { return d.enterpriseMember(&u.Enterprise, k) })
	}
	return 0, false
}

// claimBit sets bit in seen, and reports whether it was clear: a member name met twice in one
// object is refused by parseBody.
func claimBit(seen *uint64, bit uint) bool {
	if *seen&(1<<bit) != 0 {
		return false
	}
	*seen |= 1 << bit
	return true
}

// nameMember decodes the member key of name.
func (d *bodyDecoder) nameMember(n *store.Name, key []byte) (uint, bool) {
	switch string(key) {
	case "formatted":
		return d.str(0, &n.Formatted)
	case "familyName":
		return d.str(1, &n.FamilyName)
	case "givenName":
		return d.str(2, &n.GivenName)
	case "middleName":
		return d.str(3, &n.MiddleName)
	case "honorificPrefix":
		return d.str(4, &n.HonorificPrefix)
	case "honorificSuffix":
		return d.str(5, &n.HonorificSuffix)
	}
	return 0, false
}

// enterpriseMember decodes the member key of the enterprise extension's object.
func (d *bodyDecoder) enterpriseMember(e *store.EnterpriseUser, key []byte) (uint, bool) {
	switch string(key) {
	case "employeeNumber":
		return d.str(0, &e.EmployeeNumber)
	case "costCenter":
		return d.str(1, &e.CostCenter)
	case "organization":
		return d.str(2, &e.Organization)
	case "division":
		return d.str(3, &e.Division)
	case "department":
		return d.str(4, &e.Department)
	case "manager":
		return 5, d.manager(&e.Manager)
	}
	return 0, false
}

// manager decodes the manager: an object, null, or a bare string standing for its value.
func (d *bodyDecoder) manager(m *store.Manager) bool {
	if d.peek() != '{' {
		_, ok := d.str(0, &m.Value)
		return ok
	}
	return d.object(func(key []byte) (uint, bool) {
		switch string(key) {
		case "value":
			return d.str(0, &m.Value)
		case "$ref":
			return d.str(1, &m.Ref)
		case "displayName": // read-only
			return 2, d.skipString()
		}
		return 0, false
	})
}

// values decodes an array of values of a multi-valued complex attribute, or null, into *out:
// member decodes the member key of one value, and primary points at a value's primary. Of the
// values marked primary only the last stays so (onePrimary); an empty array leaves *out nil. A
// null or empty value is dropped, as coerce drops it.
func values[V comparable](d *bodyDecoder, out *[]V, member func(v *V, key []byte) (uint, bool), primary func(v *V) *bool) bool {
	last := -1
	ok := d.array(func() bool {
		var zero V
		*out = append(*out, zero)
		v := &(*out)[len(*out)-1] // decoded in place: no append happens meanwhile
		ok := d.object(func(key []byte) (uint, bool) { return member(v, key) })
		switch {
		case *v == zero:
			*out = (*out)[:len(*out)-1]
		case *primary(v):
			last = len(*out) - 1
		}
		return ok
	})
	if len(*out) == 0 {
		*out = nil
	}
	for i := range *out {
		*primary(&(*out)[i]) = i == last
	}
	return ok
}

// multiValueMember decodes the member key of a value of emails, phoneNumbers, ims, photos,
// entitlements or roles.
func (d *bodyDecoder) multiValueMember(v *store.MultiValue, key []byte) (uint, bool) {
	switch string(key) {
	case "value":
		return d.str(0, &v.Value)
	case "display":
		return d.str(1, &v.Display)
	case "type":
		return d.str(2, &v.Type)
	case "primary":
		var ok bool
		v.Primary, _, ok = d.boolean()
		return 3, ok
	}
	return 0, false
}

// addressMember decodes the member key of a value of addresses.
func (d *bodyDecoder) addressMember(a *store.Address, key []byte) (uint, bool) {
	switch string(key) {
	case "formatted":
		return d.str(0, &a.Formatted)
	case "streetAddress":
		return d.str(1, &a.StreetAddress)
	case "locality":
		return d.str(2, &a.Locality)
	case "region":
		return d.str(3, &a.Region)
	case "postalCode":
		return d.str(4, &a.PostalCode)
	case "country":
		return d.str(5, &a.Country)
	case "type":
		return d.str(6, &a.Type)
	case "primary":
		var ok bool
		a.Primary, _, ok = d.boolean()
		return 7, ok
	}
	return 0, false
}

// multiValues decodes the values of emails, phoneNumbers, ims, photos, entitlements or roles.
func (d *bodyDecoder) multiValues(out *[]store.MultiValue) bool {
	return values(d, out, func(v *store.MultiValue, key []byte) (uint, bool) { return d.multiValueMember(v, key) },
		func(v *store.MultiValue) *bool { return &v.Primary })
}

// addresses decodes the values of addresses.
func (d *bodyDecoder) addresses(out *[]store.Address) bool {
	return values(d, out, func(a *store.Address, key []byte) (uint, bool) { return d.addressMember(a, key) },
		func(a *store.Address) *bool { return &a.Primary })
}

// metaMember names the sub-attributes of meta, which decodeTree drops (read-only).
func metaMember(key []byte) (bit uint, ok bool) {
	switch string(key) {
	case "resourceType":
		return 0, true
	case "created":
		return 1, true
	case "lastModified":
		return 2, true
	case "location":
		return 3, true
	case "version":
		return 4, true
	}
	return 0, false
}

// groupRefMember names the sub-attributes of a value of groups, which decodeTree drops
// (read-only).
func groupRefMember(key []byte) (bit uint, ok bool) {
	switch string(key) {
	case "value":
		return 0, true
	case "$ref":
		return 1, true
	case "display":
		return 2, true
	case "type":
		return 3, true
	}
	return 0, false
}

// skipObject reads an object, or null, whose members are named by member and are strings or
// null, and keeps nothing of it.
func (d *bodyDecoder) skipObject(member func(key []byte) (uint, bool)) bool {
	return d.object(func(key []byte) (uint, bool) {
		bit, ok := member(key)
		return bit, ok && d.skipString()
	})
}

// stringArray reads an array of strings, or null, and keeps nothing of it.
func (d *bodyDecoder) stringArray() bool {
	return d.array(d.skipString)
}

// object reads an object, or null, calling member for the name of each member with the
// offset at its value; member reads the value and the white space before it, and returns a bit
// (below 64) that stands for the name, so that a name met twice is refused.
func (d *bodyDecoder) object(member func(key []byte) (bit uint, ok bool)) bool {
	if d.null() {
		return true
	}
	if !d.consume('{') {
		return false
	}
	var seen uint64
	if d.consume('}') {
		return true
	}
	for {
		key, ok := d.key()
		if !ok {
			return false
		}
		if bit, ok := member(key); !ok || !claimBit(&seen, bit) {
			return false
		}
		d.space()
		if d.consume(',') {
			continue
		}
		return d.consume('}')
	}
}

// array reads an array, or null, calling elem at each element.
func (d *bodyDecoder) array(elem func() bool) bool {
	if d.null() {
		return true
	}
	if !d.consume('[') {
		return false
	}
	if d.consume(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		d.space()
		if d.consume(',') {
			continue
		}
		return d.consume(']')
	}
}

// key reads a member name, without escapes, and the colon after it.
func (d *bodyDecoder) key() ([]byte, bool) {
	if d.peek() != '"' {
		return nil, false
	}
	start := d.i + 1
	for j := start; j < len(d.b); j++ {
		switch c := d.b[j]; {
		case c == '"':
			d.i = j + 1
			return d.b[start:j], d.consume(':')
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return nil, false // no name this decoder knows is escaped or beyond ASCII
		}
	}
	return nil, false
}

// str reads a string or null into *dst ("" for null, as for an absent attribute) and
// returns bit with whether it could.
func (d *bodyDecoder) str(bit uint, dst *string) (uint, bool) {
	if d.null() {
		*dst = ""
		return bit, true
	}
	raw, escaped, ok := d.rawString()
	switch {
	case !ok:
		return bit, false
	case escaped:
		*dst, ok = unescape(raw)
	default:
		*dst = string(raw)
	}
	return bit, ok
}

// skipString reads a string or null, which is checked as str checks it and dropped.
func (d *bodyDecoder) skipString() bool {
	if d.null() {
		return true
	}
	raw, escaped, ok := d.rawString()
	if ok && escaped {
		_, ok = unescape(raw)
	}
	return ok
}

// boolean reads a boolean, null (set is false) or a string "true" or "false" in any case, as
// coerceSimple takes them.
func (d *bodyDecoder) boolean() (b, set, ok bool) {
	d.space()
	switch {
	case d.literal("true"):
		return true, true, true
	case d.literal("false"):
		return false, true, true
	case d.literal("null"):
		return false, false, true
	}
	raw, escaped, ok := d.rawString()
	if !ok || escaped {
		return false, false, false
	}
	switch {
	case asciiEqualFold(raw, "true"):
		return true, true, true
	case asciiEqualFold(raw, "false"):
		return false, true, true
	}
	return false, false, false
}

// asciiEqualFold reports whether b, which must be ASCII to match, equals the lower-case ASCII
// word s with letters in any case. Like strings.EqualFold, but no non-ASCII letter (such as the
// Kelvin sign) folds to an ASCII one here: those bodies are left to the generic path.
func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		if b[i]|0x20 != s[i] {
			return false
		}
	}
	return true
}

// rawString reads a string, after any white space, and returns what is between its quotes and
// whether that holds a backslash. It refuses control characters and invalid UTF-8, as JSON and
// parseBody do.
func (d *bodyDecoder) rawString() (raw []byte, escaped, ok bool) {
	d.space()
	if d.peek() != '"' {
		return nil, false, false
	}
	start := d.i + 1
	wide := false
	for j := start; j < len(d.b); j++ {
		switch c := d.b[j]; {
		case c == '"':
			d.i = j + 1
			raw = d.b[start:j]
			return raw, escaped, !wide || utf8.Valid(raw)
		case c == '\\':
			escaped = true
			j++ // the escaped character, checked by unescape
		case c < 0x20:
			return nil, false, false
		case c >= utf8.RuneSelf:
			wide = true
		}
	}
	return nil, false, false
}

// unescape decodes the escapes of raw, a string's text: the short escapes, and \u of a
// character that is neither NUL nor a surrogate, which encoding/json decodes the same way.
// Anything else is left to the generic path (parseBody refuses NUL and lone surrogates, and
// pairs are rare enough not to be worth a second decoder of them).
func unescape(raw []byte) (string, bool) {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i >= len(raw) {
			return "", false
		}
		switch raw[i] {
		case '"', '\\', '/':
			out = append(out, raw[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(raw, i+1)
			if !ok || r == 0 || 0xD800 <= r && r <= 0xDFFF {
				return "", false
			}
			out = utf8.AppendRune(out, r)
			i += 4
		default:
			return "", false
		}
	}
	return string(out), true
}

// null reads null, after any white space, if it is next.
func (d *bodyDecoder) null() bool {
	d.space()
	return d.literal("null")
}

// consume reads c, after any white space, if it is next.
func (d *bodyDecoder) consume(c byte) bool {
	d.space()
	if d.peek() != c {
		return false
	}
	d.i++
	return true
}

// peek returns the next byte after any white space, or 0 at the end.
func (d *bodyDecoder) peek() byte {
	d.space()
	if d.i >= len(d.b) {
		return 0
	}
	return d.b[d.i]
}
