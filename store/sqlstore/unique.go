package sqlstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/visid/visid/store"
)

// putUnique makes resource rid of kind the holder of vals (store.User.Unique or
// store.Group.Unique) in place of old, the values it held: one row of unique_values a value,
// whose primary key refuses a value another resource of the kind holds. That refusal is
// ErrConflict, and as it fails the write transaction nothing of the write is stored. Nothing is
// written when vals and old are the same.
func (t *txn) putUnique(ctx context.Context, tenant string, kind resourceKind, rid string, old, vals []store.UniqueValue) error {
	if slices.Equal(old, vals) {
		return nil
	}
	if len(old) > 0 {
		if _, err := t.exec(ctx, `DELETE FROM unique_values WHERE tenant = ? AND kind = ? AND rid = ?`, tenant, string(kind), rid); err != nil {
			return err
		}
	}
	seen := make(map[store.UniqueValue]bool, len(vals))
	for _, v := range vals {
		if seen[v] {
			continue
		}
		seen[v] = true
		_, err := t.exec(ctx, `INSERT INTO unique_values (tenant, kind, attr, value, rid) VALUES (?, ?, ?, ?, ?)`,
			tenant, string(kind), v.Attr, v.Key, rid)
		if isUnique(err) {
			return fmt.Errorf("%s %q is held by another resource: %w", v.Attr, v.Key, store.ErrConflict)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// uniqueColumns returns vals as the two arrays (attrs, keys) that createPostgres unnests, each
// value once.
func uniqueColumns(vals []store.UniqueValue) (attrs, keys []string) {
	seen := make(map[store.UniqueValue]bool, len(vals))
	for _, v := range vals {
		if !seen[v] {
			seen[v] = true
			attrs, keys = append(attrs, v.Attr), append(keys, v.Key)
		}
	}
	return attrs, keys
}
