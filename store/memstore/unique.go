package memstore

import (
	"fmt"
	"slices"

	"github.com/visid/visid/store"
)

// uniqueKey is a store.UniqueValue of a user (kind 'u') or a group (kind 'g').
type uniqueKey struct {
	kind byte
	store.UniqueValue
}

// checkUnique returns ErrConflict when a resource of kind other than owner holds one of vals.
// It is called under the tenant's write lock, before anything changes, and the change that
// follows claims the values under the same lock (claimUnique): the check and the write are one
// step for every other writer.
func (t *tenantData) checkUnique(kind byte, owner any, vals []store.UniqueValue) error {
	for _, v := range vals {
		if held, ok := t.unique[uniqueKey{kind, v}]; ok && held != owner {
			return fmt.Errorf("%s %q is held by another resource: %w", v.Attr, v.Key, store.ErrConflict)
		}
	}
	return nil
}

// claimUnique makes owner the holder of vals in place of old, the values it held.
func (t *tenantData) claimUnique(kind byte, owner any, old, vals []store.UniqueValue) {
	for _, v := range old {
		if t.unique[uniqueKey{kind, v}] == owner {
			delete(t.unique, uniqueKey{kind, v})
		}
	}
	for _, v := range vals {
		if t.unique == nil {
			t.unique = map[uniqueKey]any{}
		}
		t.unique[uniqueKey{kind, v}] = owner
	}
}

func cloneUnique(vals []store.UniqueValue) []store.UniqueValue {
	if len(vals) == 0 {
		return nil
	}
	return slices.Clone(vals)
}
