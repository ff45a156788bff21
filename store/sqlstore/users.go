package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/internal/stamp"
	"github.com/visid/visid/store/schema"
)

// Users implements store.Users. A user is a row of users: its JSON document (store.User
// without Groups) and the columns its lookups and uniqueness need; its Groups come from members.
type Users struct{ s *Store }

var _ store.Users = (*Users)(nil)

// Create implements store.Users. The user's row and its attrs rows are written by two
// statements in a transaction on SQLite, and by one statement on PostgreSQL (createPostgres).
// The tenant's existence is a condition of the row's INSERT, and the uniqueness of the id and
// the userName the table's unique constraints: no query comes before the writes.
func (us *Users) Create(ctx context.Context, tenant string, u store.User) (*store.User, error) {
	if u.UserName == "" {
		return nil, fmt.Errorf("user without userName: %w", store.ErrInvalid)
	}
	if u.ID == "" {
		u.ID = store.NewID("user")
	}
	stamp.Create(&u.Meta, stamp.Now())
	doc, err := userDoc(&u)
	if err != nil {
		return nil, err
	}
	out, err := decodeUser(doc)
	if err != nil {
		return nil, err
	}
	rows := attrRows(kindUser, out)
	fold := schema.Fold(u.UserName)
	if us.s.d == postgresDialect {
		err = us.s.writeStatement(ctx, func(tx *txn) error {
			return tx.createPostgres(ctx, tenant, &u, fold, doc, rows)
		})
	} else {
		err = us.s.write(ctx, func(tx *txn) error {
			n, err := tx.affected(ctx, `INSERT INTO users (tenant, id, user_name, user_name_fold, external_id, doc)
				SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM tenants WHERE id = ?)`,
				tenant, u.ID, u.UserName, fold, u.ExternalID, doc, tenant)
			if err := tx.createFailed(ctx, tenant, &u, n, err); err != nil {
				return err
			}
			return tx.insertAttrs(ctx, tenant, kindUser, u.ID, rows)
		})
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// createPostgres writes user u (userName folded to fold, stored as doc) and its attrs rows in
// one statement, which takes the lock of lockTenant first. The attrs rows go as arrays, one a
// column, so that the statement is the same for every user and pgx prepares it once a
// connection. It is PostgreSQL's own SQL, with $n placeholders (one for several uses).
func (t *txn) createPostgres(ctx context.Context, tenant string, u *store.User, fold, doc string, rows []attrRow) error {
	var n int64
	err := t.queryRow(ctx, `WITH tenant_lock AS (
			SELECT pg_advisory_xact_lock(1449745669, hashtext(current_schema() || '/' || $1::text))
		), u AS (
			INSERT INTO users (tenant, id, user_name, user_name_fold, external_id, doc)
			SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::text FROM tenant_lock
			WHERE EXISTS (SELECT 1 FROM tenants WHERE id = $1::text)
			RETURNING tenant, id
		), a AS (
			INSERT INTO attrs (tenant, kind, rid, attr, sub, idx, s, sf, n, b, t)
			SELECT u.tenant, 'u', u.id, a.attr, a.sub, a.idx, a.s, a.sf, a.n, a.b, a.t
			FROM u, unnest($7::text[], $8::text[], $9::bigint[], $10::text[], $11::text[], $12::float8[], $13::bool[], $14::bigint[])
				AS a (attr, sub, idx, s, sf, n, b, t)
		)
		SELECT count(*) FROM u`,
		append([]any{tenant, u.ID, u.UserName, fold, u.ExternalID, doc}, attrColumns(rows)...)...).Scan(&n)
	return t.createFailed(ctx, tenant, u, n, err)
}

// createFailed returns the error of Create for the INSERT of user u that gave err and wrote n
// rows: ErrNotFound for a missing tenant (n is 0), ErrConflict for a taken id or userName.
func (t *txn) createFailed(ctx context.Context, tenant string, u *store.User, n int64, err error) error {
	switch {
	case isForeignKey(err), err == nil && n == 0:
		return fmt.Errorf("tenant %q: %w", tenant, store.ErrNotFound)
	case !isUnique(err) || violatedTable(err) == "attrs":
		return err
	}
	// Which one: after the failed INSERT on SQLite, in a transaction of its own on PostgreSQL.
	if dup, err := t.exists(ctx, `SELECT 1 FROM users WHERE tenant = ? AND id = ?`, tenant, u.ID); err != nil || dup {
		return cmp.Or(err, fmt.Errorf("user id %q: %w", u.ID, store.ErrConflict))
	}
	return fmt.Errorf("userName %q: %w", u.UserName, store.ErrConflict)
}

// Get implements store.Users.
func (us *Users) Get(ctx context.Context, tenant, id string) (*store.User, error) {
	var out *store.User
	err := us.s.read(ctx, func(tx *txn) error {
		u, err := tx.user(ctx, tenant, id, false)
		if err != nil {
			return err
		}
		refs, err := tx.groupRefs(ctx, tenant, []string{id})
		if err != nil {
			return err
		}
		u.Groups = refs[id]
		out = u
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Update implements store.Users.
func (us *Users) Update(ctx context.Context, tenant, id string, fn func(*store.User) error) (*store.User, error) {
	var out *store.User
	err := us.s.write(ctx, func(tx *txn) error {
		if err := tx.lockTenant(ctx, tenant); err != nil {
			return err
		}
		work, err := tx.user(ctx, tenant, id, true)
		if err != nil {
			return err
		}
		oldName := work.UserName
		refs, err := tx.groupRefs(ctx, tenant, []string{id})
		if err != nil {
			return err
		}
		groups := refs[id]
		work.Groups = append([]store.GroupRef(nil), groups...)
		before := stamp.CloneUser(work)
		if err := fn(work); err != nil {
			return err
		}
		stamp.User(before, work, stamp.Now())
		switch {
		case work.ID != id:
			return fmt.Errorf("user %q: the id cannot change: %w", id, store.ErrInvalid)
		case work.UserName == "":
			return fmt.Errorf("user %q: userName cannot be empty: %w", id, store.ErrInvalid)
		}
		fold := schema.Fold(work.UserName)
		taken, err := tx.exists(ctx, `SELECT 1 FROM users WHERE tenant = ? AND user_name_fold = ? AND id <> ?`, tenant, fold, id)
		if err != nil {
			return err
		}
		if taken {
			return fmt.Errorf("userName %q: %w", work.UserName, store.ErrConflict)
		}
		doc, err := userDoc(work)
		if err != nil {
			return err
		}
		_, err = tx.exec(ctx, `UPDATE users SET user_name = ?, user_name_fold = ?, external_id = ?, doc = ? WHERE tenant = ? AND id = ?`,
			work.UserName, fold, work.ExternalID, doc, tenant, id)
		if isUnique(err) {
			return fmt.Errorf("userName %q: %w", work.UserName, store.ErrConflict)
		}
		if err != nil {
			return err
		}
		if out, err = decodeUser(doc); err != nil {
			return err
		}
		out.Groups = groups
		if err := tx.putAttrs(ctx, tenant, kindUser, id, attrRows(kindUser, out)); err != nil {
			return err
		}
		if oldName != work.UserName && len(groups) > 0 { // the groups' members.display
			ms, err := tx.memberships(ctx, tenant, id)
			if err != nil {
				return err
			}
			return tx.syncMember(ctx, tenant, ms, &store.Member{Value: id, Display: work.UserName, Type: "User"})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Delete implements store.Users. The user's memberships and picture credential go with it.
func (us *Users) Delete(ctx context.Context, tenant, id string) error {
	return us.s.write(ctx, func(tx *txn) error {
		if err := tx.lockTenant(ctx, tenant); err != nil {
			return err
		}
		ok, err := tx.exists(ctx, `SELECT 1 FROM users WHERE tenant = ? AND id = ?`+tx.d.forUpdate(), tenant, id)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("user %q: %w", id, store.ErrNotFound)
		}
		ms, err := tx.memberships(ctx, tenant, id)
		if err != nil {
			return err
		}
		for _, q := range []string{
			`DELETE FROM members WHERE tenant = ? AND user_id = ?`,
			`DELETE FROM pictures WHERE tenant = ? AND user_id = ?`,
			`DELETE FROM attrs WHERE tenant = ? AND kind = 'u' AND rid = ?`,
			`DELETE FROM users WHERE tenant = ? AND id = ?`,
		} {
			if _, err := tx.exec(ctx, q, tenant, id); err != nil {
				return err
			}
		}
		return tx.syncMember(ctx, tenant, ms, nil)
	})
}

// List implements store.Users.
func (us *Users) List(ctx context.Context, tenant string, q store.Query) (store.Page[store.User], error) {
	page := store.Page[store.User]{Resources: []store.User{}}
	err := us.s.read(ctx, func(tx *txn) error {
		var ids []string
		var docs []string
		total, err := tx.list(ctx, "users", kindUser, tenant, q, func(id, doc string) {
			ids = append(ids, id)
			docs = append(docs, doc)
		})
		if err != nil {
			return err
		}
		page.TotalResults = total
		refs, err := tx.groupRefs(ctx, tenant, ids)
		if err != nil {
			return err
		}
		for i, doc := range docs {
			u, err := decodeUser(doc)
			if err != nil {
				return err
			}
			u.Groups = refs[ids[i]]
			page.Resources = append(page.Resources, *u)
		}
		return nil
	})
	if err != nil {
		return store.Page[store.User]{}, err
	}
	return page, nil
}

// lockTenant checks that the tenant exists and, on PostgreSQL, takes the transaction-scoped
// lock that orders the writes to the tenant's users and groups. A write to one of them can
// change what the attrs table derives for others (a user's groups, a group's members'
// userNames), so they take turns within a tenant, as SQLite's writers always do.
func (t *txn) lockTenant(ctx context.Context, tenant string) error {
	if err := t.advisoryLock(ctx, tenant); err != nil {
		return err
	}
	return t.tenantExists(ctx, tenant)
}

// advisoryLock takes the PostgreSQL lock of lockTenant, per schema and tenant.
func (t *txn) advisoryLock(ctx context.Context, tenant string) error {
	if t.d != postgresDialect {
		return nil
	}
	_, err := t.exec(ctx, `SELECT pg_advisory_xact_lock(1449745669, hashtext(current_schema() || '/' || ?))`, tenant)
	return err
}

// user reads one user without its groups, locking its row when lock is set.
func (t *txn) user(ctx context.Context, tenant, id string, lock bool) (*store.User, error) {
	q := `SELECT doc FROM users WHERE tenant = ? AND id = ?`
	if lock {
		q += t.d.forUpdate()
	}
	var doc string
	err := t.queryRow(ctx, q, tenant, id).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("user %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return decodeUser(doc)
}

// groupRefs returns the groups of each of the users ids, in the groups' creation order.
func (t *txn) groupRefs(ctx context.Context, tenant string, ids []string) (map[string][]store.GroupRef, error) {
	out := map[string][]store.GroupRef{}
	err := inChunks(ids, func(chunk []string) error {
		rows, err := t.query(ctx, `SELECT m.user_id, g.id, g.display_name FROM members m
			JOIN groups g ON g.tenant = m.tenant AND g.id = m.group_id
			WHERE m.tenant = ? AND m.user_id IN (`+placeholders(len(chunk))+`) ORDER BY g.seq`,
			append([]any{tenant}, strArgs(chunk)...)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var user string
			r := store.GroupRef{Type: "direct"}
			if err := rows.Scan(&user, &r.Value, &r.Display); err != nil {
				return err
			}
			out[user] = append(out[user], r)
		}
		return rows.Err()
	})
	return out, err
}

// strings returns the first column of query's rows.
func (t *txn) strings(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := t.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// userDoc returns the JSON document stored for u: u without Groups, which are derived.
func userDoc(u *store.User) (string, error) {
	c := *u
	c.Groups = nil
	b, err := json.Marshal(&c)
	return string(b), err
}

func decodeUser(doc string) (*store.User, error) {
	u := new(store.User)
	if err := json.Unmarshal([]byte(doc), u); err != nil {
		return nil, fmt.Errorf("sqlstore: a stored user does not decode: %w", err)
	}
	return u, nil
}
