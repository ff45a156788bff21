package scimsvc

import (
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/schema"
)

// typedPatch is a PATCH whose every operation sets one single-valued simple attribute of a
// User — replace active, add or replace displayName, name.givenName, an enterprise attribute,
// as identity providers send on every change — applied to the stored user's fields directly
// instead of through the generic tree of applyPatch. It does what applyPatch would do with those
// operations and nothing else; parseTypedPatch returns nil for any request it does not cover,
// which then takes the generic path.
type typedPatch []typedSet

// maxTypedOps is the most operations a typedPatch holds.
const maxTypedOps = 8

// typedSet sets one field to a value already checked as applyPatch would check it.
type typedSet struct {
	str  func(*store.User) *string // a string attribute, or nil
	bool func(*store.User) *bool   // a boolean attribute, or nil
	s    string
	b    bool
}

// parseTypedPatch returns ops as a typedPatch, or nil when one of them is outside what it covers:
// a remove, no path, a value filter, a multi-valued or complex target, an attribute that is not
// plainly readWrite, a value that would remove the attribute (null or ""), or any error, which
// the generic engine reports with its own words.
func parseTypedPatch(rt *schema.ResourceType, ops []patchOp) typedPatch {
	if rt.Name != "User" || len(ops) > maxTypedOps {
		return nil
	}
	out := make(typedPatch, 0, len(ops))
	for _, op := range ops {
		p := op.path
		if op.op != "add" && op.op != "replace" || p == nil || p.filter != nil || p.attr.MultiValued {
			return nil
		}
		target := p.attr
		if p.sub != nil {
			if p.attr.Type != schema.Complex || p.attr.Mutability != schema.ReadWrite {
				return nil
			}
			target = p.sub
		}
		if target.MultiValued || target.Mutability != schema.ReadWrite {
			return nil
		}
		v, err := coerceSimple(target, op.value)
		if err != nil || v == nil {
			return nil
		}
		set := typedSet{}
		switch v := v.(type) {
		case string:
			if set.str = userString(p.attr, p.sub); set.str == nil {
				return nil
			}
			set.s = v
		case bool:
			if set.bool = userBool(p.attr, p.sub); set.bool == nil {
				return nil
			}
			set.b = v
		default:
			return nil
		}
		out = append(out, set)
	}
	return out
}

// apply sets the fields of u and reports whether u differs from what it was (an operation that
// a later one undoes changes nothing).
func (tp typedPatch) apply(u *store.User) bool {
	var strs [maxTypedOps]string
	var bools [maxTypedOps]bool
	for i, s := range tp {
		if s.str != nil {
			strs[i] = *s.str(u)
		} else {
			bools[i] = *s.bool(u)
		}
	}
	for _, s := range tp {
		if s.str != nil {
			*s.str(u) = s.s
		} else {
			*s.bool(u) = s.b
		}
	}
	for i, s := range tp {
		if s.str != nil && *s.str(u) != strs[i] || s.bool != nil && *s.bool(u) != bools[i] {
			return true
		}
	}
	return false
}

// userBool is the field of the boolean attribute a (sub-attribute sub, or nil) of a User, or nil.
func userBool(a, sub *schema.Attribute) func(*store.User) *bool {
	if sub == nil && !a.Extension && a.Name == "active" {
		return func(u *store.User) *bool { return &u.Active }
	}
	return nil
}

// userString is the field of the string attribute a (sub-attribute sub, or nil) of a User, or
// nil for one it does not know.
func userString(a, sub *schema.Attribute) func(*store.User) *string {
	switch {
	case a.Extension && a.Schema == schema.EnterpriseUserURN && sub == nil:
		return enterpriseFields[a.Name]
	case a.Extension:
		return nil
	case sub == nil:
		return userFields[a.Name]
	case a.Name == "name":
		return nameFields[sub.Name]
	}
	return nil
}

var userFields = map[string]func(*store.User) *string{
	"externalId":        func(u *store.User) *string { return &u.ExternalID },
	"userName":          func(u *store.User) *string { return &u.UserName },
	"displayName":       func(u *store.User) *string { return &u.DisplayName },
	"nickName":          func(u *store.User) *string { return &u.NickName },
	"profileUrl":        func(u *store.User) *string { return &u.ProfileURL },
	"title":             func(u *store.User) *string { return &u.Title },
	"userType":          func(u *store.User) *string { return &u.UserType },
	"preferredLanguage": func(u *store.User) *string { return &u.PreferredLanguage },
	"locale":            func(u *store.User) *string { return &u.Locale },
	"timezone":          func(u *store.User) *string { return &u.Timezone },
}

var nameFields = map[string]func(*store.User) *string{
	"formatted":       func(u *store.User) *string { return &u.Name.Formatted },
	"familyName":      func(u *store.User) *string { return &u.Name.FamilyName },
	"givenName":       func(u *store.User) *string { return &u.Name.GivenName },
	"middleName":      func(u *store.User) *string { return &u.Name.MiddleName },
	"honorificPrefix": func(u *store.User) *string { return &u.Name.HonorificPrefix },
	"honorificSuffix": func(u *store.User) *string { return &u.Name.HonorificSuffix },
}

var enterpriseFields = map[string]func(*store.User) *string{
	"employeeNumber": func(u *store.User) *string { return &u.Enterprise.EmployeeNumber },
	"costCenter":     func(u *store.User) *string { return &u.Enterprise.CostCenter },
	"organization":   func(u *store.User) *string { return &u.Enterprise.Organization },
	"division":       func(u *store.User) *string { return &u.Enterprise.Division },
	"department":     func(u *store.User) *string { return &u.Enterprise.Department },
}
