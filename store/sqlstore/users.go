package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/internal/changes"
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
// the userName the table's unique constraints: no query comes before the writes. Under a
// store.Change the user.created event is written by the same transaction (statement).
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
	sortArgs := sortColumnArgs(kindUser, out)
	fold := schema.Fold(u.UserName)
	p := changes.New(ctx, tenant)
	if err := p.Add(store.EventUserCreated, store.SubjectUser, u.ID, out); err != nil {
		return nil, err
	}
	if us.s.d == postgresDialect {
		err = us.s.writeStatement(ctx, func(tx *txn) error {
			return tx.createPostgres(ctx, tenant, &u, fold, doc, sortArgs, rows, p.Events(time.Now))
		})
	} else {
		err = us.s.write(ctx, func(tx *txn) error {
			args := append([]any{tenant, u.ID, u.UserName, fold, u.ExternalID, doc}, sortArgs...)
			n, err := tx.affected(ctx, `INSERT INTO users (tenant, id, user_name, user_name_fold, external_id, doc, `+sortColumnNames(kindUser)+`)
				SELECT ?, ?, ?, ?, ?, ?, `+placeholders(len(sortArgs))+` WHERE EXISTS (SELECT 1 FROM tenants WHERE id = ?)`,
				append(args, tenant)...)
			if err := tx.createFailed(ctx, tenant, &u, n, err); err != nil {
				return err
			}
			if err := tx.insertAttrs(ctx, tenant, kindUser, u.ID, rows); err != nil {
				return err
			}
			if err := tx.putUnique(ctx, tenant, kindUser, u.ID, nil, u.Unique); err != nil {
				return err
			}
			return tx.recordEvents(ctx, tenant, p)
		})
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// createPostgres writes user u (userName folded to fold, stored as doc, with the values
// sortArgs of its sort columns) and its attrs rows in one statement, which takes the lock of lockTenant first. The attrs rows go as arrays, one a
// column, so that the statement is the same for every user and pgx prepares it once a
// connection. It is PostgreSQL's own SQL, with $n placeholders (one for several uses).
func (t *txn) createPostgres(ctx context.Context, tenant string, u *store.User, fold, doc string, sortArgs []any, rows []attrRow, events []store.Event) error {
	if len(sortArgs) != 4 {
		return fmt.Errorf("sqlstore: %d sort columns, the statement has 4", len(sortArgs))
	}
	args := append([]any{tenant, u.ID, u.UserName, fold, u.ExternalID, doc}, sortArgs...)
	args = append(args, attrColumns(rows)...)
	// The user.created event, when there is one, is numbered and written by the same
	// statement: the row of event_heads it updates stays locked until the statement commits,
	// so the tenant's events are numbered in commit order (recordEvents).
	// The user's unique values, when it has some, are written by the same statement: a value
	// another user holds fails it on unique_values' primary key (createFailed).
	unique := ""
	if len(u.Unique) > 0 {
		attrs, keys := uniqueColumns(u.Unique)
		unique = fmt.Sprintf(`, uv AS (
			INSERT INTO unique_values (tenant, kind, attr, value, rid)
			SELECT u.tenant, 'u', x.attr, x.value, u.id FROM u, unnest($%d::text[], $%d::text[]) AS x (attr, value)
		)`, len(args)+1, len(args)+2)
		args = append(args, attrs, keys)
	}
	recorded := ""
	if len(events) == 1 {
		e := events[0]
		base := len(args)
		n := func(i int) string { return strconv.Itoa(base + i) }
		recorded = `, h AS (
			INSERT INTO event_heads (tenant, last) SELECT u.tenant, 1 FROM u
			ON CONFLICT (tenant) DO UPDATE SET last = event_heads.last + 1,
				woken_at = CASE WHEN event_heads.hooks > 0 THEN coalesce(event_heads.woken_at, $` + n(6) + `::bigint) END
			RETURNING last
		), e AS (
			INSERT INTO events (tenant, seq, type, at, actor, subject_kind, subject_id, data)
			SELECT $1::text, h.last, $` + n(1) + `::text, $` + n(2) + `::bigint, $` + n(3) + `::text, $` + n(4) + `::text, $2::text, $` + n(5) + `::text FROM h
		)`
		args = append(args, string(e.Type), e.Time.UnixNano(), e.Actor, e.SubjectKind, string(e.Data), time.Now().UnixNano())
	} else if len(events) > 1 {
		return fmt.Errorf("sqlstore: a user's creation records one event, not %d", len(events))
	}
	var n int64
	err := t.queryRow(ctx, `WITH tenant_lock AS (
			SELECT pg_advisory_xact_lock(1449745669, hashtext(current_schema() || '/' || $1::text))
		), u AS (
			INSERT INTO users (tenant, id, user_name, user_name_fold, external_id, doc, family_name_fold, email_fold, created, last_modified)
			SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text, $8::text, $9::bigint, $10::bigint FROM tenant_lock
			WHERE EXISTS (SELECT 1 FROM tenants WHERE id = $1::text)
			RETURNING tenant, id
		), a AS (
			INSERT INTO attrs (tenant, kind, rid, attr, sub, idx, s, sf, n, b, t)
			SELECT u.tenant, 'u', u.id, a.attr, a.sub, a.idx, a.s, a.sf, a.n, a.b, a.t
			FROM u, unnest($11::text[], $12::text[], $13::bigint[], $14::text[], $15::text[], $16::float8[], $17::bool[], $18::bigint[])
				AS a (attr, sub, idx, s, sf, n, b, t)
		)`+unique+recorded+`
		SELECT count(*) FROM u`, args...).Scan(&n)
	return t.createFailed(ctx, tenant, u, n, err)
}

// createFailed returns the error of Create for the INSERT of user u that gave err and wrote n
// rows: ErrNotFound for a missing tenant (n is 0), ErrConflict for a taken id or userName.
func (t *txn) createFailed(ctx context.Context, tenant string, u *store.User, n int64, err error) error {
	switch {
	case isForeignKey(err), err == nil && n == 0:
		return fmt.Errorf("tenant %q: %w", tenant, store.ErrNotFound)
	case isUnique(err) && violatedTable(err) == "unique_values":
		return fmt.Errorf("user %q: a unique value is held by another user: %w", u.ID, store.ErrConflict)
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

// Update implements store.Users. fn runs outside the write transaction, on the user as a read
// transaction found it: the write transaction then checks that the user's document and groups
// are still what fn saw, and stores fn's result with the changes to its attrs rows computed
// beforehand. When another write came between, Update reads again and calls fn again; after
// optimisticAttempts such rounds it calls fn inside the write transaction (updateLocked), which
// no write can come between. The write transaction (on SQLite, the database's one writer) is
// thus held for the writes only, not for reading, decoding, fn, encoding and diffing a user
// that may have tens of thousands of values.
func (us *Users) Update(ctx context.Context, tenant, id string, fn func(*store.User) error) (*store.User, error) {
	for range optimisticAttempts {
		out, err := us.updateOptimistic(ctx, tenant, id, fn)
		if !errors.Is(err, errChanged) {
			return out, err
		}
	}
	return us.updateLocked(ctx, tenant, id, fn)
}

// optimisticAttempts bounds how often Update and Groups.Update run fn outside the write
// transaction before they run it inside.
const optimisticAttempts = 3

// errChanged is what a write transaction of an optimistic update returns when the resource is
// no longer what fn saw.
var errChanged = errors.New("sqlstore: changed since it was read")

// updateOptimistic is one round of Update with fn outside the write transaction; errChanged
// when another write came between the read and the write.
func (us *Users) updateOptimistic(ctx context.Context, tenant, id string, fn func(*store.User) error) (*store.User, error) {
	var doc string
	var groups []store.GroupRef
	var stored map[attrKey]attrRow
	err := us.s.read(ctx, func(tx *txn) error {
		if err := tx.tenantExists(ctx, tenant); err != nil {
			return err
		}
		var err error
		if doc, err = tx.userDocOf(ctx, tenant, id, false); err != nil {
			return err
		}
		refs, err := tx.groupRefs(ctx, tenant, []string{id})
		if err != nil {
			return err
		}
		groups = refs[id]
		stored, err = tx.storedAttrs(ctx, tenant, kindUser, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	work, err := decodeUser(doc)
	if err != nil {
		return nil, err
	}
	oldName, oldUnique := work.UserName, work.Unique
	work.Groups = append([]store.GroupRef(nil), groups...)
	p := changes.New(ctx, tenant)
	before := stamp.CloneUser(work)
	out, newDoc, err := applyUserFn(work, id, fn)
	if err != nil {
		return nil, err
	}
	out.Groups = groups
	// The events, their data rendered here too, outside the write transaction.
	if err := changes.User(p, before, out); err != nil {
		return nil, err
	}
	changed, gone := attrDiff(stored, attrRows(kindUser, out))
	err = us.s.write(ctx, func(tx *txn) error {
		if err := tx.lockTenant(ctx, tenant); err != nil {
			return err
		}
		cur, err := tx.userDocOf(ctx, tenant, id, true)
		if err != nil {
			return err
		}
		if cur != doc {
			return errChanged
		}
		refs, err := tx.groupRefs(ctx, tenant, []string{id})
		if err != nil {
			return err
		}
		if !slices.Equal(refs[id], groups) {
			return errChanged
		}
		if err := tx.storeUser(ctx, tenant, id, out, newDoc); err != nil {
			return err
		}
		if err := tx.applyAttrDiff(ctx, tenant, kindUser, id, changed, gone, len(stored) > 0); err != nil {
			return err
		}
		if err := tx.putUnique(ctx, tenant, kindUser, id, oldUnique, out.Unique); err != nil {
			return err
		}
		if err := tx.renamedMember(ctx, tenant, id, oldName, out.UserName, groups); err != nil {
			return err
		}
		return tx.recordEvents(ctx, tenant, p)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// updateLocked is Update with fn inside the write transaction.
func (us *Users) updateLocked(ctx context.Context, tenant, id string, fn func(*store.User) error) (*store.User, error) {
	var out *store.User
	err := us.s.write(ctx, func(tx *txn) error {
		if err := tx.lockTenant(ctx, tenant); err != nil {
			return err
		}
		doc, err := tx.userDocOf(ctx, tenant, id, true)
		if err != nil {
			return err
		}
		work, err := decodeUser(doc)
		if err != nil {
			return err
		}
		oldName, oldUnique := work.UserName, work.Unique
		refs, err := tx.groupRefs(ctx, tenant, []string{id})
		if err != nil {
			return err
		}
		groups := refs[id]
		work.Groups = append([]store.GroupRef(nil), groups...)
		p := changes.New(ctx, tenant)
		before := stamp.CloneUser(work)
		o, newDoc, err := applyUserFn(work, id, fn)
		if err != nil {
			return err
		}
		o.Groups = groups
		if err := tx.storeUser(ctx, tenant, id, o, newDoc); err != nil {
			return err
		}
		if err := tx.putAttrs(ctx, tenant, kindUser, id, attrRows(kindUser, o)); err != nil {
			return err
		}
		if err := tx.putUnique(ctx, tenant, kindUser, id, oldUnique, o.Unique); err != nil {
			return err
		}
		if err := changes.User(p, before, o); err != nil {
			return err
		}
		out = o
		if err := tx.renamedMember(ctx, tenant, id, oldName, o.UserName, groups); err != nil {
			return err
		}
		return tx.recordEvents(ctx, tenant, p)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// applyUserFn calls fn with work, the stored user id, checks what fn left and stamps its meta
// times. It returns the user as it is to be stored (without groups) and its document.
func applyUserFn(work *store.User, id string, fn func(*store.User) error) (*store.User, string, error) {
	before := stamp.CloneUser(work)
	if err := fn(work); err != nil {
		return nil, "", err
	}
	switch {
	case work.ID != id:
		return nil, "", fmt.Errorf("user %q: the id cannot change: %w", id, store.ErrInvalid)
	case work.UserName == "":
		return nil, "", fmt.Errorf("user %q: userName cannot be empty: %w", id, store.ErrInvalid)
	}
	stamp.User(before, work, stamp.Now())
	doc, err := userDoc(work)
	if err != nil {
		return nil, "", err
	}
	out, err := decodeUser(doc)
	if err != nil {
		return nil, "", err
	}
	return out, doc, nil
}

// storeUser writes user u's row, with document doc and its sort columns: ErrConflict if its
// userName is taken.
func (t *txn) storeUser(ctx context.Context, tenant, id string, u *store.User, doc string) error {
	fold := schema.Fold(u.UserName)
	taken, err := t.exists(ctx, `SELECT 1 FROM users WHERE tenant = ? AND user_name_fold = ? AND id <> ?`, tenant, fold, id)
	if err != nil {
		return err
	}
	if taken {
		return fmt.Errorf("userName %q: %w", u.UserName, store.ErrConflict)
	}
	args := append([]any{u.UserName, fold, u.ExternalID, doc}, sortColumnArgs(kindUser, u)...)
	_, err = t.exec(ctx, `UPDATE users SET user_name = ?, user_name_fold = ?, external_id = ?, doc = ?, `+sortColumnSet(kindUser)+` WHERE tenant = ? AND id = ?`,
		append(args, tenant, id)...)
	if isUnique(err) {
		return fmt.Errorf("userName %q: %w", u.UserName, store.ErrConflict)
	}
	return err
}

// renamedMember updates the members.display rows of the groups of user id after its userName
// changed from oldName to newName.
func (t *txn) renamedMember(ctx context.Context, tenant, id, oldName, newName string, groups []store.GroupRef) error {
	if oldName == newName || len(groups) == 0 {
		return nil
	}
	ms, err := t.memberships(ctx, tenant, id)
	if err != nil {
		return err
	}
	return t.syncMember(ctx, tenant, ms, &store.Member{Value: id, Display: newName, Type: "User"})
}

// Delete implements store.Users. The user's memberships and picture credential go with it.
func (us *Users) Delete(ctx context.Context, tenant, id string) error {
	return us.delete(ctx, tenant, id, func(*store.User) error { return nil })
}

// DeleteIfVersion implements store.Users. The version is compared on the row the write
// transaction locked.
func (us *Users) DeleteIfVersion(ctx context.Context, tenant, id string, version int64) error {
	return us.delete(ctx, tenant, id, func(u *store.User) error {
		return checkVersion("user", id, u.Meta.Version, version)
	})
}

// checkVersion returns ErrVersionMismatch unless the resource kind id, at version got, is at want.
func checkVersion(kind, id string, got, want int64) error {
	if got != want {
		return fmt.Errorf("%s %q is at version %d, not %d: %w", kind, id, got, want, store.ErrVersionMismatch)
	}
	return nil
}

// delete removes user id when check accepts the user as the write transaction read it.
func (us *Users) delete(ctx context.Context, tenant, id string, check func(*store.User) error) error {
	return us.s.write(ctx, func(tx *txn) error {
		if err := tx.lockTenant(ctx, tenant); err != nil {
			return err
		}
		gone, err := tx.user(ctx, tenant, id, true)
		if err != nil {
			return err
		}
		if err := check(gone); err != nil {
			return err
		}
		p := changes.New(ctx, tenant)
		if p != nil {
			refs, err := tx.groupRefs(ctx, tenant, []string{id})
			if err != nil {
				return err
			}
			gone.Groups = refs[id]
			if err := p.Add(store.EventUserDeleted, store.SubjectUser, id, gone); err != nil {
				return err
			}
		}
		ms, err := tx.memberships(ctx, tenant, id)
		if err != nil {
			return err
		}
		groups := make([]string, len(ms))
		for i, m := range ms {
			groups[i] = m.group
		}
		err = inChunks(groups, func(chunk []string) error {
			_, err := tx.exec(ctx, `UPDATE groups SET member_count = member_count - 1 WHERE tenant = ? AND id IN (`+placeholders(len(chunk))+`)`,
				append([]any{tenant}, strArgs(chunk)...)...)
			return err
		})
		if err != nil {
			return err
		}
		for _, q := range []string{
			`DELETE FROM members WHERE tenant = ? AND user_id = ?`,
			`DELETE FROM picture_failures WHERE tenant = ? AND user_id = ?`,
			`DELETE FROM pictures WHERE tenant = ? AND user_id = ?`,
			`DELETE FROM passkeys WHERE tenant = ? AND user_id = ?`,
			`DELETE FROM attrs WHERE tenant = ? AND kind = 'u' AND rid = ?`,
			`DELETE FROM unique_values WHERE tenant = ? AND kind = 'u' AND rid = ?`,
			`DELETE FROM users WHERE tenant = ? AND id = ?`,
		} {
			if _, err := tx.exec(ctx, q, tenant, id); err != nil {
				return err
			}
		}
		if err := tx.syncMember(ctx, tenant, ms, nil); err != nil {
			return err
		}
		if err := tx.bumpGroupVersions(ctx, tenant, ms); err != nil {
			return err
		}
		return tx.recordEvents(ctx, tenant, p)
	})
}

// List implements store.Users.
func (us *Users) List(ctx context.Context, tenant string, q store.Query) (store.Page[store.User], error) {
	page := store.Page[store.User]{Resources: []store.User{}}
	err := us.s.read(ctx, func(tx *txn) error {
		var ids []string
		var docs []string
		l, err := tx.list(ctx, "users", kindUser, tenant, q, func(id, doc string) {
			ids = append(ids, id)
			docs = append(docs, doc)
		})
		if err != nil {
			return err
		}
		l.into(&page.TotalResults, &page.Next, &page.Prev)
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
	doc, err := t.userDocOf(ctx, tenant, id, lock)
	if err != nil {
		return nil, err
	}
	return decodeUser(doc)
}

// userDocOf reads the document of one user, locking its row when lock is set.
func (t *txn) userDocOf(ctx context.Context, tenant, id string, lock bool) (string, error) {
	q := `SELECT doc FROM users WHERE tenant = ? AND id = ?`
	if lock {
		q += t.d.forUpdate()
	}
	var doc string
	err := t.queryRow(ctx, q, tenant, id).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("user %q: %w", id, store.ErrNotFound)
	}
	return doc, err
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
