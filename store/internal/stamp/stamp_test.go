package stamp

import (
	"reflect"
	"testing"
	"time"

	"github.com/visid/visid/store"
)

// TestSameUserSeesEveryField changes each field of store.User, and each field of its structs and
// of a list's element, one at a time, and checks that SameUser sees the change — except Meta and
// Groups, which an update does not count — so a field added to store.User cannot be forgotten.
func TestSameUserSeesEveryField(t *testing.T) {
	base := func() store.User {
		return store.User{
			Emails:           []store.MultiValue{{}},
			PhoneNumbers:     []store.MultiValue{{}},
			Roles:            []store.MultiValue{{}},
			Addresses:        []store.Address{{}},
			Ims:              []store.MultiValue{{}},
			Photos:           []store.MultiValue{{}},
			Entitlements:     []store.MultiValue{{}},
			X509Certificates: []store.MultiValue{{}},
			Groups:           []store.GroupRef{{}},
			Unique:           []store.UniqueValue{{}},
			Extensions:       store.Extensions{"urn:x": {"a": "b"}},
		}
	}
	typ := reflect.TypeFor[store.User]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		ignored := f.Name == "Meta" || f.Name == "Groups"
		for _, change := range changesOf(f.Type) {
			a, b := base(), base()
			change(reflect.ValueOf(&b).Elem().Field(i))
			if got := SameUser(&a, &b); got != ignored {
				t.Errorf("changing %s: SameUser = %v, want %v", f.Name, got, ignored)
			}
		}
	}
}

// changesOf returns functions that each change one part of a value of type t that was made by
// base: a scalar, a field of a struct, a field of a list's first element, the list's length.
func changesOf(t reflect.Type) []func(reflect.Value) {
	switch t.Kind() {
	case reflect.String:
		return []func(reflect.Value){func(v reflect.Value) { v.SetString(v.String() + "x") }}
	case reflect.Bool:
		return []func(reflect.Value){func(v reflect.Value) { v.SetBool(!v.Bool()) }}
	case reflect.Int, reflect.Int64:
		return []func(reflect.Value){func(v reflect.Value) { v.SetInt(v.Int() + 1) }}
	case reflect.Struct:
		if t == reflect.TypeFor[time.Time]() {
			return []func(reflect.Value){func(v reflect.Value) { v.Set(reflect.ValueOf(time.Unix(1, 0))) }}
		}
		var out []func(reflect.Value)
		for i := range t.NumField() {
			for _, c := range changesOf(t.Field(i).Type) {
				out = append(out, func(v reflect.Value) { c(v.Field(i)) })
			}
		}
		return out
	case reflect.Slice:
		out := []func(reflect.Value){func(v reflect.Value) { v.Set(reflect.Append(v, reflect.New(t.Elem()).Elem())) }}
		for _, c := range changesOf(t.Elem()) {
			out = append(out, func(v reflect.Value) {
				c2 := reflect.MakeSlice(t, v.Len(), v.Len())
				reflect.Copy(c2, v)
				c(c2.Index(0))
				v.Set(c2)
			})
		}
		return out
	case reflect.Map:
		return []func(reflect.Value){func(v reflect.Value) {
			v.Set(reflect.ValueOf(store.Extensions{"urn:x": {"a": "c"}}).Convert(t))
		}}
	}
	panic("changesOf: no change for " + t.String())
}

// TestSameUserEmptyListIsNone checks that an empty list and no list are the same user.
func TestSameUserEmptyListIsNone(t *testing.T) {
	a := store.User{UserName: "a"}
	b := store.User{UserName: "a", Emails: []store.MultiValue{}, Addresses: []store.Address{}, Unique: []store.UniqueValue{}, Extensions: store.Extensions{}}
	if !SameUser(&a, &b) {
		t.Error("an empty list differs from none")
	}
}
