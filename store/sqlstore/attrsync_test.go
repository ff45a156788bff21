package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

// TestAttrsInSync checks, after each of a series of writes, that the attrs table holds exactly
// the rows attrRows gives for every user and group as Get returns them: the writes keep their
// own rows and the derived rows of the resources they touch (a group's members' userNames, a
// user's groups) in step, and leave no row of a deleted resource behind.
func TestAttrsInSync(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, open := range testStores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			require.NoError(t, s.Migrate(ctx))
			users, groups := s.Users(), s.Groups()
			require.NoError(t, s.Tenants().Create(ctx, store.Tenant{ID: "acme"}))
			require.NoError(t, s.Tenants().Create(ctx, store.Tenant{ID: "globex"}))
			ids := map[string]string{}
			for _, name := range []string{"ann", "bob", "cid", "dee", "eve"} {
				u, err := users.Create(ctx, "acme", store.User{UserName: name, Active: true,
					Emails: []store.MultiValue{{Value: name + "@example.com", Type: "work"}}})
				require.NoError(t, err)
				ids[name] = u.ID
			}
			_, err := users.Create(ctx, "globex", store.User{UserName: "ann"})
			require.NoError(t, err)
			members := func(names ...string) []store.Member {
				var ms []store.Member
				for _, n := range names {
					ms = append(ms, store.Member{Value: ids[n]})
				}
				return ms
			}
			for _, g := range []struct {
				name    string
				members []string
			}{
				{"Staff", []string{"ann", "bob"}}, {"Ops", []string{"bob", "cid"}}, {"Empty", nil},
			} {
				created, err := groups.Create(ctx, "acme", store.Group{DisplayName: g.name, Members: members(g.members...)})
				require.NoError(t, err)
				ids[g.name] = created.ID
			}
			checkAttrs(t, s, "after the creates")

			steps := []struct {
				name string
				do   func() error
			}{
				{"rename a member", func() error {
					_, err := users.Update(ctx, "acme", ids["bob"], func(u *store.User) error { u.UserName = "Robert"; return nil })
					return err
				}},
				{"change a user's emails", func() error {
					_, err := users.Update(ctx, "acme", ids["ann"], func(u *store.User) error {
						u.Emails = append(u.Emails, store.MultiValue{Value: "ann@home.example", Type: "home", Primary: true})
						u.Title = "Boss"
						return nil
					})
					return err
				}},
				{"rename a group", func() error {
					_, err := groups.Update(ctx, "acme", ids["Staff"], func(g *store.Group) error { g.DisplayName = "Team"; return nil })
					return err
				}},
				{"replace members", func() error {
					_, err := groups.Update(ctx, "acme", ids["Ops"], func(g *store.Group) error {
						g.Members = members("cid", "dee", "eve")
						return nil
					})
					return err
				}},
				{"reorder members", func() error {
					_, err := groups.Update(ctx, "acme", ids["Ops"], func(g *store.Group) error {
						g.Members = members("eve", "dee", "cid")
						return nil
					})
					return err
				}},
				{"delete a member", func() error { return users.Delete(ctx, "acme", ids["dee"]) }},
				{"rename a member after a gap", func() error {
					_, err := users.Update(ctx, "acme", ids["cid"], func(u *store.User) error { u.UserName = "Cyd"; return nil })
					return err
				}},
				{"add a member after a gap", func() error {
					_, err := groups.Update(ctx, "acme", ids["Ops"], func(g *store.Group) error {
						g.Members = append(g.Members, store.Member{Value: ids["ann"]})
						return nil
					})
					return err
				}},
				{"patch: add and remove members", func() error {
					_, err := groups.Patch(ctx, "acme", ids["Ops"], store.GroupPatch{Add: []string{ids["bob"], ids["cid"]}, Remove: []string{ids["eve"]}})
					return err
				}},
				{"patch: rename and remove", func() error {
					_, err := groups.Patch(ctx, "acme", ids["Ops"], store.GroupPatch{
						Attrs:  func(g *store.Group) error { g.DisplayName, g.ExternalID = "Operations", "ops"; return nil },
						Remove: []string{ids["cid"]}})
					return err
				}},
				{"rename a member after patches", func() error {
					_, err := users.Update(ctx, "acme", ids["bob"], func(u *store.User) error { u.UserName = "Bobby"; return nil })
					return err
				}},
				{"patch: add to an empty group", func() error {
					_, err := groups.Patch(ctx, "acme", ids["Empty"], store.GroupPatch{Add: []string{ids["eve"], ids["bob"]}})
					return err
				}},
				{"delete a member after patches", func() error { return users.Delete(ctx, "acme", ids["eve"]) }},
				{"replace members after patches", func() error {
					_, err := groups.Update(ctx, "acme", ids["Ops"], func(g *store.Group) error {
						g.Members = append(members("cid"), g.Members...)
						return nil
					})
					return err
				}},
				{"delete a group", func() error { return groups.Delete(ctx, "acme", ids["Team"]) }},
				{"clear a user", func() error {
					_, err := users.Update(ctx, "acme", ids["ann"], func(u *store.User) error {
						*u = store.User{ID: u.ID, UserName: u.UserName}
						return nil
					})
					return err
				}},
				{"delete the other tenant", func() error { return s.Tenants().Delete(ctx, "globex") }},
			}
			ids["Team"] = ids["Staff"]
			for _, step := range steps {
				require.NoError(t, step.do(), step.name)
				checkAttrs(t, s, "after: "+step.name)
			}
		})
	}
}

// testStores returns, by dialect name, functions that open a Store over a new empty database,
// not migrated, closed (and dropped) when the test ends. PostgreSQL skips t without
// VISID_TEST_POSTGRES_DSN, or fails it when VISID_REQUIRE_SERVICES=1.
func testStores() map[string]func(t *testing.T) *Store {
	ctx := context.Background()
	return map[string]func(t *testing.T) *Store{
		"SQLite": func(t *testing.T) *Store {
			s, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "visid.db"))
			require.NoError(t, err)
			t.Cleanup(func() { s.Close() })
			return s
		},
		"Postgres": func(t *testing.T) *Store {
			dsn := os.Getenv("VISID_TEST_POSTGRES_DSN")
			if dsn == "" {
				if os.Getenv("VISID_REQUIRE_SERVICES") == "1" {
					t.Fatal("VISID_TEST_POSTGRES_DSN is not set and VISID_REQUIRE_SERVICES=1")
				}
				t.Skip("VISID_TEST_POSTGRES_DSN is not set")
			}
			var r [6]byte
			rand.Read(r[:])
			schema := fmt.Sprintf("t_attrs_%x", r)
			s := openBench(t, postgresDialect, dsn, schema, true)
			t.Cleanup(func() {
				s.db.Exec("DROP SCHEMA " + schema + " CASCADE")
				s.Close()
			})
			return s
		},
	}
}

// checkAttrs compares the attrs table with attrRows of every user and group of every tenant,
// and the sort columns of their rows with sortColumnArgs.
func checkAttrs(t *testing.T, s *Store, when string) {
	t.Helper()
	checkSortColumns(t, s, when)
	ctx := context.Background()
	want := map[resourceKind]map[string][]attrRow{kindUser: {}, kindGroup: {}}
	tenants, err := s.Tenants().List(ctx, "", store.MaxTenantPage)
	require.NoError(t, err)
	for _, tn := range tenants {
		us, err := s.Users().List(ctx, tn.ID, store.Query{Count: -1})
		require.NoError(t, err)
		for _, u := range us.Resources {
			want[kindUser][tn.ID+"/"+u.ID] = attrRows(kindUser, &u)
		}
		gs, err := s.Groups().List(ctx, tn.ID, store.Query{Count: -1})
		require.NoError(t, err)
		for _, g := range gs.Resources {
			// A member's rows have its position as their idx (syncMember).
			var pos []int
			rows, err := s.db.Query(s.d.rebind(`SELECT pos FROM members WHERE tenant = ? AND group_id = ? ORDER BY pos`), tn.ID, g.ID)
			require.NoError(t, err)
			for rows.Next() {
				var p int
				require.NoError(t, rows.Scan(&p))
				pos = append(pos, p)
			}
			require.NoError(t, rows.Err())
			rows.Close()
			require.Len(t, pos, len(g.Members))
			rs := attrRows(kindGroup, &g)
			for i := range rs {
				if rs[i].Attr == "members" {
					rs[i].Idx = pos[rs[i].Idx]
				}
			}
			want[kindGroup][tn.ID+"/"+g.ID] = rs
		}
	}
	rows, err := s.db.Query(`SELECT DISTINCT tenant, kind, rid FROM attrs`)
	require.NoError(t, err)
	type res struct{ tenant, kind, rid string }
	var stored []res
	for rows.Next() {
		var r res
		require.NoError(t, rows.Scan(&r.tenant, &r.kind, &r.rid))
		stored = append(stored, r)
	}
	require.NoError(t, rows.Err())
	rows.Close()
	for _, r := range stored {
		_, ok := want[resourceKind(r.kind)][r.tenant+"/"+r.rid]
		assert.True(t, ok, "%s: attrs rows of %s %s/%s, which does not exist", when, r.kind, r.tenant, r.rid)
	}
	err = s.read(ctx, func(tx *txn) error {
		for kind, byID := range want {
			for key, rows := range byID {
				tenant, rid, _ := strings.Cut(key, "/")
				got, err := tx.storedAttrs(ctx, tenant, kind, rid)
				if err != nil {
					return err
				}
				wantRows := map[attrKey]attrRow{}
				for _, r := range rows {
					wantRows[attrKey{r.Attr, r.Sub, r.Idx}] = r
				}
				assert.Equal(t, wantRows, got, "%s: attrs rows of %s %s", when, kind, key)
			}
		}
		return nil
	})
	require.NoError(t, err)
}

// checkSortColumns compares the sort columns of every user's and group's row with what
// sortColumnArgs gives for the resource as Get returns it.
func checkSortColumns(t *testing.T, s *Store, when string) {
	t.Helper()
	ctx := context.Background()
	tenants, err := s.Tenants().List(ctx, "", store.MaxTenantPage)
	require.NoError(t, err)
	stored := func(table string, kind resourceKind, tenant, id string) []any {
		cols := sortColumns(kind)
		dst := make([]any, len(cols))
		strs, ints := make([]sql.NullString, len(cols)), make([]sql.NullInt64, len(cols))
		for i, c := range cols {
			if c.column == "created" || c.column == "last_modified" {
				dst[i] = &ints[i]
			} else {
				dst[i] = &strs[i]
			}
		}
		require.NoError(t, s.db.QueryRowContext(ctx, s.d.rebind(`SELECT `+sortColumnNames(kind)+` FROM `+table+` WHERE tenant = ? AND id = ?`),
			tenant, id).Scan(dst...))
		out := make([]any, len(cols))
		for i := range cols {
			switch {
			case strs[i].Valid:
				out[i] = strs[i].String
			case ints[i].Valid:
				out[i] = ints[i].Int64
			}
		}
		return out
	}
	for _, tn := range tenants {
		us, err := s.Users().List(ctx, tn.ID, store.Query{Count: -1})
		require.NoError(t, err)
		for _, u := range us.Resources {
			assert.Equal(t, sortColumnArgs(kindUser, &u), stored("users", kindUser, tn.ID, u.ID), "%s: sort columns of user %s/%s", when, tn.ID, u.ID)
		}
		gs, err := s.Groups().List(ctx, tn.ID, store.Query{Count: -1})
		require.NoError(t, err)
		for _, g := range gs.Resources {
			assert.Equal(t, sortColumnArgs(kindGroup, &g), stored("groups", kindGroup, tn.ID, g.ID), "%s: sort columns of group %s/%s", when, tn.ID, g.ID)
		}
	}
}
