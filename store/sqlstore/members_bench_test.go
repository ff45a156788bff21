package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

// benchGroupID is the id of the group bulkGroup makes.
const benchGroupID = "group_big"

// bulkGroup adds to tenant bench the group benchGroupID ("Big") whose members are the benchmark
// users 1 to n, in order, with the rows Groups.Create would write (members, the attrs rows of
// the members and of the users' groups, member_count), by INSERT … SELECT statements, so that a
// group of a million members takes seconds.
func bulkGroup(ctx context.Context, s *Store, n int) error {
	if _, err := s.Groups().Create(ctx, benchTenant, store.Group{ID: benchGroupID, DisplayName: "Big"}); err != nil {
		return err
	}
	const idMark, nameMark = "\x01id", "\x01name"
	quote := func(v string) string { return "'" + strings.ReplaceAll(v, "'", "''") + "'" }
	text := func(v sql.NullString) string {
		switch {
		case !v.Valid:
			return "NULL"
		case v.String == idMark:
			return "u.id"
		case v.String == nameMark:
			return "u.user_name" // benchmark userNames are folded already
		}
		return quote(v.String)
	}
	cols := func(r attrRow) string {
		c := []string{text(r.S), text(r.SF), "NULL", "NULL", "NULL"}
		if r.N.Valid {
			c[2] = strconv.FormatFloat(r.N.Float64, 'g', -1, 64)
		}
		if r.B.Valid {
			c[3] = strconv.FormatBool(r.B.Bool)
		}
		if r.T.Valid {
			c[4] = strconv.FormatInt(r.T.Int64, 10)
		}
		return strings.Join(c, ", ")
	}
	from := ` FROM members m JOIN users u ON u.tenant = m.tenant AND u.id = m.user_id
		WHERE m.tenant = '` + benchTenant + `' AND m.group_id = '` + benchGroupID + `'`
	return s.write(ctx, func(t *txn) error {
		if s.d == postgresDialect {
			// A million members take longer than DefaultStatementTimeout on a busy machine.
			if _, err := t.exec(ctx, `SET LOCAL statement_timeout = 0`); err != nil {
				return err
			}
		}
		if _, err := t.exec(ctx, `INSERT INTO members (tenant, group_id, user_id, pos)
			SELECT tenant, ?, id, seq FROM users WHERE tenant = ? AND id <= ?`, benchGroupID, benchTenant, benchUserID(n)); err != nil {
			return fmt.Errorf("bulk members: %w", err)
		}
		for _, r := range memberAttrRows(store.Member{Value: idMark, Display: nameMark, Type: "User"}) {
			if _, err := t.exec(ctx, `INSERT INTO attrs (tenant, kind, rid, attr, sub, idx, s, sf, n, b, t)
				SELECT m.tenant, 'g', m.group_id, 'members', '`+r.Sub+`', m.pos, `+cols(r)+from); err != nil {
				return fmt.Errorf("bulk attrs members.%s: %w", r.Sub, err)
			}
		}
		for _, r := range attrRows(kindUser, &store.User{Groups: []store.GroupRef{{Value: benchGroupID, Display: "Big", Type: "direct"}}}) {
			if r.Attr != "groups" {
				continue
			}
			if _, err := t.exec(ctx, `INSERT INTO attrs (tenant, kind, rid, attr, sub, idx, s, sf, n, b, t)
				SELECT u.tenant, 'u', u.id, 'groups', '`+r.Sub+`', `+strconv.Itoa(r.Idx)+`, `+cols(r)+from); err != nil {
				return fmt.Errorf("bulk attrs groups.%s: %w", r.Sub, err)
			}
		}
		_, err := t.exec(ctx, `UPDATE groups SET member_count = ? WHERE tenant = ? AND id = ?`, n, benchTenant, benchGroupID)
		return err
	})
}

// TestBulkGroup checks that bulkGroup writes what Groups.Create would, so BenchmarkGroupAddMember
// measures the data the store makes.
func TestBulkGroup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, open := range testStores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			require.NoError(t, s.Migrate(ctx))
			require.NoError(t, bulkUsers(ctx, s, 12, nil, 1, false))
			require.NoError(t, bulkGroup(ctx, s, 10))
			g, err := s.Groups().Get(ctx, benchTenant, benchGroupID)
			require.NoError(t, err)
			require.Len(t, g.Members, 10)
			for i, m := range g.Members {
				assert.Equal(t, store.Member{Value: benchUserID(i + 1), Display: benchUserName(i + 1), Type: "User"}, m)
			}
			checkAttrs(t, s, "after bulkGroup")
			_, err = s.Groups().Patch(ctx, benchTenant, benchGroupID, store.GroupPatch{Add: []string{benchUserID(11)}, MaxMembers: 10})
			assert.ErrorIs(t, err, store.ErrTooManyMembers, "member_count")
		})
	}
}

// BenchmarkGroupAddMember adds one member to a group of 10, 10,000 and 1,000,000 members with
// Groups.Patch, as a PATCH of Entra ID or Okta does, on SQLite and PostgreSQL. Each iteration
// adds a user who is not a member (timed) and removes it again (not timed), so the group keeps
// its size. Adding to the largest group should cost no more than twice adding to the smallest:
// nothing in the write grows with the group but B-tree depths. The group of 1,000,000 (built in
// about a minute per dialect, 1,000,000 users included) runs only with VISID_BENCH_LARGE=1:
//
//	VISID_BENCH_LARGE=1 go test ./store/sqlstore -run '^$' -bench BenchmarkGroupAddMember -benchtime 200x
func BenchmarkGroupAddMember(b *testing.B) {
	sizes := []int{10, 10_000}
	if os.Getenv("VISID_BENCH_LARGE") == "1" {
		sizes = append(sizes, 1_000_000)
	}
	ctx := context.Background()
	for _, d := range benchDialects {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("%s/members=%d", dialectName(d), n), func(b *testing.B) {
				s := benchGroupStore(b, d, n)
				newcomer := benchUserID(n + 1)
				for b.Loop() {
					if _, err := s.Groups().Patch(ctx, benchTenant, benchGroupID, store.GroupPatch{Add: []string{newcomer}, MaxMembers: 2_000_000}); err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					if _, err := s.Groups().Patch(ctx, benchTenant, benchGroupID, store.GroupPatch{Remove: []string{newcomer}}); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
			})
		}
	}
}

// benchGroupStore returns a store with n+1 benchmark users, the first n members of the group
// benchGroupID, built once per run and dialect.
func benchGroupStore(b *testing.B, d dialect, n int) *Store {
	b.Helper()
	s := benchStore(b, d, benchSet{name: fmt.Sprintf("group%d", n)}, n+1)
	ctx := context.Background()
	if _, err := s.Groups().GetWithoutMembers(ctx, benchTenant, benchGroupID); err == nil {
		return s
	}
	if err := bulkGroup(ctx, s, n); err != nil {
		b.Fatal(err)
	}
	if d == sqliteDialect {
		if _, err := s.db.ExecContext(ctx, "ANALYZE"); err != nil {
			b.Fatal(err)
		}
	}
	if d == postgresDialect {
		// The set's tables only: a bare ANALYZE would read every schema of the database.
		if _, err := s.db.ExecContext(ctx, "ANALYZE groups, members, attrs"); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkGroupGet reads a group of 10, 10,000 and (with VISID_BENCH_LARGE=1) 1,000,000
// members with Groups.Get (its members included) and with Groups.GetWithoutMembers, on SQLite
// and PostgreSQL: the first grows with the group, the second does not.
//
//	VISID_BENCH_LARGE=1 go test ./store/sqlstore -run '^$' -bench BenchmarkGroupGet -benchtime 3x
func BenchmarkGroupGet(b *testing.B) {
	sizes := []int{10, 10_000}
	if os.Getenv("VISID_BENCH_LARGE") == "1" {
		sizes = append(sizes, 1_000_000)
	}
	ctx := context.Background()
	for _, d := range benchDialects {
		for _, n := range sizes {
			for _, full := range []bool{true, false} {
				name := "members"
				if !full {
					name = "without-members"
				}
				b.Run(fmt.Sprintf("%s/members=%d/%s", dialectName(d), n, name), func(b *testing.B) {
					s := benchGroupStore(b, d, n)
					get := s.Groups().Get
					if !full {
						get = s.Groups().GetWithoutMembers
					}
					for b.Loop() {
						g, err := get(ctx, benchTenant, benchGroupID)
						if err != nil {
							b.Fatal(err)
						}
						if full && len(g.Members) != n {
							b.Fatalf("%d members", len(g.Members))
						}
					}
				})
			}
		}
	}
}
