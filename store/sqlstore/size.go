package sqlstore

import "context"

// Size returns the bytes the store's data takes in its database: on SQLite the main database
// file (page_count × page_size; its write-ahead log, which a checkpoint folds back, is not
// counted), on PostgreSQL the tables of the store's schema with their indexes and TOAST
// (pg_total_relation_size). It reads catalogue figures only, never the rows, so it may be asked
// every few seconds; a database that cannot answer is store.ErrUnavailable, as for any read.
func (s *Store) Size(ctx context.Context) (int64, error) {
	var n int64
	err := s.read(ctx, func(t *txn) error {
		if s.d == postgresDialect {
			return t.queryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
				FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace
				WHERE ns.nspname = current_schema() AND c.relkind IN ('r', 'm', 'p')`).Scan(&n)
		}
		return t.queryRow(ctx, `SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()`).Scan(&n)
	})
	return n, err
}
