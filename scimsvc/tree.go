package scimsvc

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

// toTree is the writable part of a stored resource as a tree, the form PATCH operates on.
// Read-only and write-only attributes are left out, as decodeTree leaves them out.
func toTree(rt *schema.ResourceType, res filter.Resource) object {
	t := object{}
	for a := range rt.Attributes {
		if !writable(a) {
			continue
		}
		var val any
		switch {
		case a.MultiValued:
			var list []any
			for i := 0; ; i++ {
				v, ok := res.FilterValue(a, nil, i)
				if !ok {
					break
				}
				switch {
				case v.Kind == filter.Absent:
				case a.Type == schema.Complex:
					list = append(list, complexTree(a, res, i))
				default: // a multi-valued simple attribute of a host-defined extension
					list = append(list, treeValue(v))
				}
			}
			if list != nil {
				val = list
			}
		case a.Type == schema.Complex:
			if v, _ := res.FilterValue(a, nil, 0); v.Kind != filter.Absent {
				val = emptyToNil(complexTree(a, res, 0))
			}
		default:
			v, _ := res.FilterValue(a, nil, 0)
			val = treeValue(v)
		}
		if val != nil {
			holder(t, a, true)[a.Name] = val
		}
	}
	return t
}

func complexTree(a *schema.Attribute, res filter.Resource, i int) object {
	m := object{}
	for _, s := range a.SubAttributes {
		if !writable(s) || s.Unfilterable {
			continue
		}
		v, _ := res.FilterValue(a, s, i)
		if v.Kind == filter.KindBool && !v.Bool {
			continue
		}
		put(m, s.Name, treeValue(v))
	}
	return m
}

func treeValue(v filter.Value) any {
	switch v.Kind {
	case filter.KindString:
		return v.Str
	case filter.KindBool:
		return v.Bool
	case filter.KindNumber: // of host-defined extensions only
		return json.Number(strconv.FormatFloat(v.Num, 'f', -1, 64))
	case filter.KindTime: // of host-defined extensions only (meta is read-only)
		return v.Time.UTC().Format(time.RFC3339Nano)
	}
	return nil
}

// activeOf is a user's active when a body holds the boolean b, set reporting whether it holds
// one: an absent active means true, as a user is active unless a client says otherwise. Every
// decoding of a user (the tree, the typed decoder, PATCH) follows it.
func activeOf(b, set bool) bool { return b || !set }

// userFromTree is the user a tree describes; its active follows activeOf.
func userFromTree(t object) store.User {
	ent, _ := t[schema.EnterpriseUserURN].(object)
	name, _ := t["name"].(object)
	manager, _ := ent["manager"].(object)
	active, isSet := t["active"].(bool)
	return store.User{
		ExternalID:        str(t, "externalId"),
		UserName:          str(t, "userName"),
		Active:            activeOf(active, isSet),
		DisplayName:       str(t, "displayName"),
		NickName:          str(t, "nickName"),
		ProfileURL:        str(t, "profileUrl"),
		Title:             str(t, "title"),
		UserType:          str(t, "userType"),
		PreferredLanguage: str(t, "preferredLanguage"),
		Locale:            str(t, "locale"),
		Timezone:          str(t, "timezone"),
		Name: store.Name{
			Formatted:       str(name, "formatted"),
			FamilyName:      str(name, "familyName"),
			GivenName:       str(name, "givenName"),
			MiddleName:      str(name, "middleName"),
			HonorificPrefix: str(name, "honorificPrefix"),
			HonorificSuffix: str(name, "honorificSuffix"),
		},
		Emails:           multiValues(t["emails"]),
		PhoneNumbers:     multiValues(t["phoneNumbers"]),
		Roles:            multiValues(t["roles"]),
		Addresses:        addresses(t["addresses"]),
		Ims:              multiValues(t["ims"]),
		Photos:           multiValues(t["photos"]),
		Entitlements:     multiValues(t["entitlements"]),
		X509Certificates: multiValues(t["x509Certificates"]),
		Enterprise: store.EnterpriseUser{
			EmployeeNumber: str(ent, "employeeNumber"),
			CostCenter:     str(ent, "costCenter"),
			Organization:   str(ent, "organization"),
			Division:       str(ent, "division"),
			Department:     str(ent, "department"),
			Manager: store.Manager{
				Value: str(manager, "value"),
				Ref:   str(manager, "$ref"),
			},
		},
	}
}

// groupFromTree is the group a tree describes.
func groupFromTree(t object) store.Group {
	g := store.Group{ExternalID: str(t, "externalId"), DisplayName: str(t, "displayName")}
	for _, el := range elements(t["members"]) {
		if v := str(el, "value"); v != "" {
			g.Members = append(g.Members, store.Member{Value: v})
		}
	}
	return g
}

func str(m object, k string) string {
	s, _ := m[k].(string)
	return s
}

func elements(v any) []object {
	list, _ := v.([]any)
	out := make([]object, 0, len(list))
	for _, el := range list {
		if m, ok := el.(object); ok {
			out = append(out, m)
		}
	}
	return out
}

func multiValues(v any) []store.MultiValue {
	var out []store.MultiValue
	for _, m := range elements(v) {
		primary, _ := m["primary"].(bool)
		out = append(out, store.MultiValue{Value: str(m, "value"), Display: str(m, "display"),
			Type: str(m, "type"), Primary: primary})
	}
	return out
}

func addresses(v any) []store.Address {
	var out []store.Address
	for _, m := range elements(v) {
		primary, _ := m["primary"].(bool)
		out = append(out, store.Address{
			Formatted:     str(m, "formatted"),
			StreetAddress: str(m, "streetAddress"),
			Locality:      str(m, "locality"),
			Region:        str(m, "region"),
			PostalCode:    str(m, "postalCode"),
			Country:       str(m, "country"),
			Type:          str(m, "type"),
			Primary:       primary,
		})
	}
	return out
}

// onePrimary keeps at most one primary value in each of attrs, multi-valued attributes of t: the
// last one marked, unless keep names the value a PATCH operation just made primary.
func onePrimary(attrs []*schema.Attribute, t object, keep map[*schema.Attribute]object) {
	for _, a := range attrs {
		if a.Sub("primary") == nil {
			continue
		}
		els := valuesOf(t, a)
		winner := keep[a]
		if winner == nil {
			for _, x := range els {
				if el, _ := x.(object); el["primary"] == true {
					winner = el
				}
			}
		}
		for _, x := range els {
			if el, _ := x.(object); el["primary"] == true && !sameObject(el, winner) {
				delete(el, "primary")
			}
		}
	}
}
