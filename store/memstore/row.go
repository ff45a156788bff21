package memstore

import (
	"encoding/binary"
	"time"
	"unsafe"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

// row is a stored user encoded in one byte slice. A row holds no pointers, so the garbage
// collector never scans it, and a lookup touches one block of memory instead of one per
// attribute: at a million users that keeps both memory and lookup cost close to the data's own
// size. Strings read from a row point into it; a row is never changed once made (an update
// makes a new one), so they stay valid.
//
// Layout (integers little-endian):
//
//	0   8 × uint16  how many emails, phoneNumbers, roles, ims, photos, entitlements,
//	                x509Certificates and addresses
//	16  byte        flags: active, meta.created set, meta.lastModified set
//	17  int64+int32 meta.created as Unix seconds and nanoseconds
//	29  int64+int32 meta.lastModified
//	41  uint32 × n  the end offset of each string, in eachString order
//	…   the strings' bytes
//	…   one byte per multi-value, in the same order: 1 when primary
type row []byte

const (
	rowFlags    = 2 * nLists
	rowCreated  = rowFlags + 1
	rowModified = rowCreated + 12
	rowEnds     = rowModified + 12

	flagActive   = 1
	flagCreated  = 2
	flagModified = 4

	// nScalars is how many single-valued strings eachString yields before the lists.
	nScalars = 25
	// Strings per value of the lists of store.MultiValue (value, display, type), and of
	// addresses (formatted, streetAddress, locality, region, postalCode, country, type).
	multiStrings   = 3
	addressStrings = 7
)

// The lists, in row order.
const (
	listEmails = iota
	listPhoneNumbers
	listRoles
	listIms
	listPhotos
	listEntitlements
	listX509Certificates
	listAddresses // last: the only list whose values are not store.MultiValue
	nLists
)

// multiLists returns u's lists of store.MultiValue in row order (those before listAddresses).
func multiLists(u *store.User) [listAddresses]*[]store.MultiValue {
	return [listAddresses]*[]store.MultiValue{&u.Emails, &u.PhoneNumbers, &u.Roles, &u.Ims, &u.Photos, &u.Entitlements, &u.X509Certificates}
}

// eachString calls fn with every string field of u in row order: the nScalars single-valued
// ones, then each value of the multiLists (value, display, type), then each address.
// Encoding and decoding both walk it, so they cannot disagree.
func eachString(u *store.User, fn func(*string)) {
	for _, s := range scalars(u) {
		fn(s)
	}
	for _, list := range multiLists(u) {
		list := *list
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

// scalars lists u's single-valued strings in row order; scalarPaths names them.
func scalars(u *store.User) [nScalars]*string {
	return [nScalars]*string{
		&u.ID, &u.ExternalID, &u.UserName, &u.DisplayName, &u.NickName, &u.ProfileURL, &u.Title,
		&u.UserType, &u.PreferredLanguage, &u.Locale, &u.Timezone,
		&u.Name.Formatted, &u.Name.FamilyName, &u.Name.GivenName, &u.Name.MiddleName,
		&u.Name.HonorificPrefix, &u.Name.HonorificSuffix,
		&u.Enterprise.EmployeeNumber, &u.Enterprise.CostCenter, &u.Enterprise.Organization,
		&u.Enterprise.Division, &u.Enterprise.Department,
		&u.Enterprise.Manager.Value, &u.Enterprise.Manager.Ref, &u.Enterprise.Manager.DisplayName,
	}
}

// scalarPaths are the attribute paths of scalars, in the same order.
func scalarPaths() [nScalars]string {
	const ent = schema.EnterpriseUserURN + ":"
	return [nScalars]string{
		"id", "externalId", "userName", "displayName", "nickName", "profileUrl", "title",
		"userType", "preferredLanguage", "locale", "timezone",
		"name.formatted", "name.familyName", "name.givenName", "name.middleName",
		"name.honorificPrefix", "name.honorificSuffix",
		ent + "employeeNumber", ent + "costCenter", ent + "organization",
		ent + "division", ent + "department",
		ent + "manager.value", ent + "manager.$ref", ent + "manager.displayName",
	}
}

// The positions of some scalars.
const (
	idxID         = 0
	idxExternalID = 1
	idxUserName   = 2
)

// encode makes the row of u; u.Groups is not stored.
func encode(u *store.User) row {
	var counts [nLists]int
	for l, list := range multiLists(u) {
		counts[l] = len(*list)
	}
	counts[listAddresses] = len(u.Addresses)
	values, strs, size := 0, 0, 0
	for l, n := range counts {
		values += n
		strs += n * perValue(l)
	}
	strs += nScalars
	eachString(u, func(s *string) { size += len(*s) })
	r := make(row, rowEnds+4*strs+size+values)
	for l, n := range counts {
		binary.LittleEndian.PutUint16(r[2*l:], uint16(n))
	}
	if u.Active {
		r[rowFlags] |= flagActive
	}
	putTime(r, rowCreated, flagCreated, u.Meta.Created)
	putTime(r, rowModified, flagModified, u.Meta.LastModified)
	k, off, data := 0, 0, rowEnds+4*strs
	eachString(u, func(s *string) {
		off += copy(r[data+off:], *s)
		binary.LittleEndian.PutUint32(r[rowEnds+4*k:], uint32(off))
		k++
	})
	p := data + off
	for _, list := range multiLists(u) {
		for _, v := range *list {
			r[p] = b2u(v.Primary)
			p++
		}
	}
	for _, a := range u.Addresses {
		r[p] = b2u(a.Primary)
		p++
	}
	return r
}

// decode fills dst with the user r holds (Groups left nil).
func (r row) decode(dst *store.User) {
	*dst = store.User{Active: r[rowFlags]&flagActive != 0}
	dst.Meta.Created = r.time(rowCreated, flagCreated)
	dst.Meta.LastModified = r.time(rowModified, flagModified)
	for l, list := range multiLists(dst) {
		if n := r.count(l); n > 0 {
			*list = make([]store.MultiValue, n)
		}
	}
	if n := r.count(listAddresses); n > 0 {
		dst.Addresses = make([]store.Address, n)
	}
	data := rowEnds + 4*r.strings()
	k, start := 0, 0
	eachString(dst, func(s *string) {
		end := int(binary.LittleEndian.Uint32(r[rowEnds+4*k:]))
		if end > start {
			*s = unsafe.String(&r[data+start], end-start)
		}
		start = end
		k++
	})
	primary := r[data+start:]
	for _, list := range multiLists(dst) {
		list := *list
		for i := range list {
			list[i].Primary, primary = primary[0] != 0, primary[1:]
		}
	}
	for i := range dst.Addresses {
		dst.Addresses[i].Primary, primary = primary[0] != 0, primary[1:]
	}
}

func perValue(list int) int {
	if list == listAddresses {
		return addressStrings
	}
	return multiStrings
}

func (r row) count(list int) int { return int(binary.LittleEndian.Uint16(r[2*list:])) }

// strings is how many strings the row holds.
func (r row) strings() int {
	n := nScalars
	for l := range nLists {
		n += r.count(l) * perValue(l)
	}
	return n
}

// str returns the k-th string, pointing into the row.
func (r row) str(k int) string {
	start := 0
	if k > 0 {
		start = int(binary.LittleEndian.Uint32(r[rowEnds+4*(k-1):]))
	}
	end := int(binary.LittleEndian.Uint32(r[rowEnds+4*k:]))
	if end == start {
		return ""
	}
	p := rowEnds + 4*r.strings() + start
	return unsafe.String(&r[p], end-start)
}

// first returns the index of the first string of the i-th value of list, and the value's
// index among all multi-values (for primary).
func (r row) first(list, i int) (str, value int) {
	str, value = nScalars, i
	for l := range list {
		n := r.count(l)
		str += n * perValue(l)
		value += n
	}
	return str + i*perValue(list), value
}

func (r row) primary(value int) bool {
	n := r.strings()
	end := int(binary.LittleEndian.Uint32(r[rowEnds+4*(n-1):]))
	return r[rowEnds+4*n+end+value] != 0
}

func (r row) time(at int, flag byte) time.Time {
	if r[rowFlags]&flag == 0 {
		return time.Time{}
	}
	sec := int64(binary.LittleEndian.Uint64(r[at:]))
	nsec := int64(binary.LittleEndian.Uint32(r[at+8:]))
	return time.Unix(sec, nsec).UTC()
}

func putTime(r row, at int, flag byte, t time.Time) {
	if t.IsZero() {
		return
	}
	r[rowFlags] |= flag
	binary.LittleEndian.PutUint64(r[at:], uint64(t.Unix()))
	binary.LittleEndian.PutUint32(r[at+8:], uint32(t.Nanosecond()))
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// rowFields maps the User schema's attributes to where a row keeps them: the string index of
// each single-valued string attribute (sub-attributes of name and the enterprise manager
// included), and the offset within a value of each sub-attribute of the multi-valued
// attributes a row keeps. It is built from the schema table once per Store.
type rowFields struct {
	scalar map[*schema.Attribute]int
	within map[*schema.Attribute]int
	lists  map[*schema.Attribute]int
	// enterprise holds the string indexes of the enterprise extension's values: a row has a
	// value in the extension when one of them is set.
	enterprise []int
}

func newRowFields() *rowFields {
	rt := schema.User()
	f := &rowFields{scalar: map[*schema.Attribute]int{}, within: map[*schema.Attribute]int{}, lists: map[*schema.Attribute]int{}}
	for k, path := range scalarPaths() {
		a, sub, err := rt.Lookup(path)
		if err != nil {
			panic("memstore: the row layout names an attribute the schema lacks: " + path)
		}
		if sub != nil {
			a = sub
		}
		f.scalar[a] = k
		if a.Schema == schema.EnterpriseUserURN {
			f.enterprise = append(f.enterprise, k)
		}
	}
	subs := func(name string, list int, names ...string) {
		a := rt.Schema.Attribute(name)
		f.lists[a] = list
		for i, n := range names {
			f.within[a.Sub(n)] = i
		}
	}
	subs("emails", listEmails, "value", "display", "type")
	subs("phoneNumbers", listPhoneNumbers, "value", "display", "type")
	subs("roles", listRoles, "value", "display", "type")
	subs("ims", listIms, "value", "display", "type")
	subs("photos", listPhotos, "value", "display", "type")
	subs("entitlements", listEntitlements, "value", "display", "type")
	subs("x509Certificates", listX509Certificates, "value", "display", "type")
	subs("addresses", listAddresses, "formatted", "streetAddress", "locality", "region", "postalCode", "country", "type")
	return f
}

// filterValue implements filter.Resource for a row (groups excepted: the view adds them).
func (f *rowFields) filterValue(r row, a, sub *schema.Attribute, i int) (filter.Value, bool) {
	if list, ok := f.lists[a]; ok {
		if i >= r.count(list) {
			return filter.Value{}, false
		}
		first, value := r.first(list, i)
		switch {
		case sub == nil:
			present := r.primary(value)
			for k := range perValue(list) {
				present = present || r.str(first+k) != ""
			}
			return filter.ComplexValue(present), true
		case sub.Name == "primary":
			return filter.BoolValue(r.primary(value)), true
		}
		return filter.StringValue(r.str(first + f.within[sub])), true
	}
	target := a
	if sub != nil {
		target = sub
	}
	if k, ok := f.scalar[target]; ok {
		return filter.StringValue(r.str(k)), true
	}
	switch a.Name {
	case "schemas":
		switch i {
		case 0:
			return filter.StringValue(schema.UserURN), true
		case 1:
			for _, k := range f.enterprise {
				if r.str(k) != "" {
					return filter.StringValue(schema.EnterpriseUserURN), true
				}
			}
		}
		return filter.Value{}, false
	case "active":
		return filter.BoolValue(r[rowFlags]&flagActive != 0), true
	case "meta":
		switch {
		case sub == nil:
			return filter.ComplexValue(true), true
		case sub.Name == "created":
			return filter.TimeValue(r.time(rowCreated, flagCreated)), true
		case sub.Name == "lastModified":
			return filter.TimeValue(r.time(rowModified, flagModified)), true
		case sub.Name == "resourceType":
			return filter.StringValue("User"), true
		}
	case "name", "manager":
		present := false
		for _, s := range a.SubAttributes {
			if k, ok := f.scalar[s]; ok && r.str(k) != "" {
				present = true
			}
		}
		return filter.ComplexValue(present), true
	}
	return filter.Value{}, i == 0
}
