// Package stamp sets the meta times (store.Meta) that a store keeps for the users and groups it
// creates and updates, the same way in every backend:
//
//   - Create: a zero Created becomes the time of the create, and a zero LastModified becomes
//     Created. Times the caller set are kept.
//   - Update: LastModified becomes the time of the update when the update function changed
//     the resource (anything but Meta and what the store derives: a user's groups, a
//     member's display and type) and left LastModified as it was; an update that changes
//     nothing keeps it, and so does one whose function set LastModified itself. A Created or
//     LastModified that the function zeroed is restored.
//   - Version (the resource's revision): 1 on Create; on Update one more than before when the
//     function changed the resource, as before otherwise. What a caller sets is ignored. A
//     write path that changes a resource without Update (say, of a group's members alone) calls
//     Bump on the stored Meta.
package stamp

import (
	"reflect"
	"slices"
	"time"

	"github.com/visid/visid/store"
)

// Now is the time the stores stamp: the wall clock, in UTC.
func Now() time.Time { return time.Now().UTC() }

// Create fills the zero times of m, the Meta of a resource created at now.
func Create(m *store.Meta, now time.Time) {
	if m.Created.IsZero() {
		m.Created = now
	}
	if m.LastModified.IsZero() {
		m.LastModified = m.Created
	}
	m.Version = 1
}

// Bump records a change of the resource whose stored Meta is m, at now: its version moves on and
// its LastModified becomes now.
func Bump(m *store.Meta, now time.Time) {
	m.Version++
	m.LastModified = now
}

// update sets after's times for an update at now from a resource whose Meta was before;
// changed says whether anything else changed.
func update(before store.Meta, after *store.Meta, changed bool, now time.Time) {
	if after.Created.IsZero() {
		after.Created = before.Created
	}
	after.Version = before.Version
	if changed {
		after.Version++
	}
	switch {
	case changed && (after.LastModified.IsZero() || after.LastModified.Equal(before.LastModified)):
		after.LastModified = now
	case after.LastModified.IsZero():
		after.LastModified = before.LastModified
	}
}

// CloneUser returns a copy of u that shares no slice with it.
func CloneUser(u *store.User) *store.User {
	c := *u
	c.Emails = slices.Clone(u.Emails)
	c.PhoneNumbers = slices.Clone(u.PhoneNumbers)
	c.Roles = slices.Clone(u.Roles)
	c.Addresses = slices.Clone(u.Addresses)
	c.Ims = slices.Clone(u.Ims)
	c.Photos = slices.Clone(u.Photos)
	c.Entitlements = slices.Clone(u.Entitlements)
	c.X509Certificates = slices.Clone(u.X509Certificates)
	c.Groups = slices.Clone(u.Groups)
	return &c
}

// CloneGroup returns a copy of g that shares no slice with it.
func CloneGroup(g *store.Group) *store.Group {
	c := *g
	c.Members = slices.Clone(g.Members)
	return &c
}

// User sets the times of after, what an update function left of before, for an update at now.
func User(before, after *store.User, now time.Time) {
	update(before.Meta, &after.Meta, !SameUser(before, after), now)
}

// Group sets the times of after, what an update function left of before, for an update at now.
func Group(before, after *store.Group, now time.Time) {
	update(before.Meta, &after.Meta, !sameGroup(before, after), now)
}

// SameUser reports whether a and b are the same user but for Meta and Groups (derived), an
// empty list being the same as none. It compares field by field (TestSameUserSeesEveryField
// fails for a field of store.User it does not compare), since an update compares on every write.
func SameUser(a, b *store.User) bool {
	return a.ID == b.ID && a.ExternalID == b.ExternalID && a.UserName == b.UserName &&
		a.Active == b.Active && a.DisplayName == b.DisplayName && a.NickName == b.NickName &&
		a.ProfileURL == b.ProfileURL && a.Title == b.Title && a.UserType == b.UserType &&
		a.PreferredLanguage == b.PreferredLanguage && a.Locale == b.Locale &&
		a.Timezone == b.Timezone && a.Name == b.Name && a.Enterprise == b.Enterprise &&
		slices.Equal(a.Emails, b.Emails) && slices.Equal(a.PhoneNumbers, b.PhoneNumbers) &&
		slices.Equal(a.Roles, b.Roles) && slices.Equal(a.Addresses, b.Addresses) &&
		slices.Equal(a.Ims, b.Ims) && slices.Equal(a.Photos, b.Photos) &&
		slices.Equal(a.Entitlements, b.Entitlements) &&
		slices.Equal(a.X509Certificates, b.X509Certificates) &&
		slices.Equal(a.Unique, b.Unique) && sameExtensions(a.Extensions, b.Extensions)
}

// sameExtensions reports whether a and b hold the same host-defined extension values, an empty
// set being the same as none.
func sameExtensions(a, b store.Extensions) bool {
	return len(a) == 0 && len(b) == 0 || reflect.DeepEqual(a, b)
}

// sameGroup reports whether a and b are the same group but for Meta, with the same members
// (by value, each once, in order; display and type are derived).
func sameGroup(a, b *store.Group) bool {
	if a.ID != b.ID || a.ExternalID != b.ExternalID || a.DisplayName != b.DisplayName {
		return false
	}
	if !sameExtensions(a.Extensions, b.Extensions) {
		return false
	}
	return slices.Equal(memberValues(a.Members), memberValues(b.Members))
}

// memberValues returns the values of ms, each once, in order of first appearance.
func memberValues(ms []store.Member) []string {
	var out []string
	seen := make(map[string]bool, len(ms))
	for _, m := range ms {
		if !seen[m.Value] {
			seen[m.Value] = true
			out = append(out, m.Value)
		}
	}
	return out
}

// GroupPatch sets the times of after, what a Groups.Patch left of the attributes of before
// (both with Members nil), for a patch at now that changed the membership when members is set.
func GroupPatch(before, after *store.Group, members bool, now time.Time) {
	update(before.Meta, &after.Meta, members || !sameGroup(before, after), now)
}
