package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

func textTests() []test {
	return []test{
		{"KeysNotTextAreNotFound", testKeysNotTextAreNotFound},
	}
}

// notText are keys that are not text: NUL, a byte that is not UTF-8, an overlong encoding, a
// surrogate. A request may carry them (an escaped path, Basic credentials); a database may refuse
// them as parameters (PostgreSQL: SQLSTATE 22021). No stored key can hold them.
var notText = []string{"\x00", "\xff", "a\x00b", "client_\xff", "\xc0\xaf", "\xed\xa0\x80"}

// testKeysNotTextAreNotFound: a lookup by a key that is not text finds nothing (ErrNotFound),
// as a lookup by any other missing key does; it is never another error.
func testKeysNotTextAreNotFound(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	in := newInteraction(acme, "kept")
	mustInteraction(t, b, in)
	for _, k := range notText {
		id := in.ID[:len(in.ID)-1] + k
		_, err := b.Tenants.Get(ctx(), k)
		require.ErrorIs(t, err, store.ErrNotFound, "Tenants.Get(%q)", k)
		_, err = b.Users.Get(ctx(), acme, "user_"+k)
		require.ErrorIs(t, err, store.ErrNotFound, "Users.Get(%q)", k)
		_, err = b.Groups.Get(ctx(), acme, "group_"+k)
		require.ErrorIs(t, err, store.ErrNotFound, "Groups.Get(%q)", k)
		_, err = b.Clients.Get(ctx(), acme, "client_"+k)
		require.ErrorIs(t, err, store.ErrNotFound, "Clients.Get(%q)", k)
		_, err = b.Clients.Get(ctx(), k, "client_1")
		require.ErrorIs(t, err, store.ErrNotFound, "Clients.Get of tenant %q", k)
		_, err = b.Interactions.Get(ctx(), id)
		require.ErrorIs(t, err, store.ErrNotFound, "Interactions.Get(%q)", id)
		_, err = b.Interactions.Update(ctx(), id, func(*store.Interaction) error { return nil })
		require.ErrorIs(t, err, store.ErrNotFound, "Interactions.Update(%q)", id)
		_, err = b.Interactions.Take(ctx(), id)
		require.ErrorIs(t, err, store.ErrNotFound, "Interactions.Take(%q)", id)
	}
	mustGetInteraction(t, b, in.ID)
}
