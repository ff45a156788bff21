package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/memstore"
	"github.com/visid/visid/store/schema"
)

// TestDifferentialSortColumns checks the sorts that the sort columns serve (sortColumns) against
// memstore, on data made for them: family names and emails that tie, many of them only under
// schema.Fold ("Straße", "STRASSE"), missing for some users; emails of which none, one or two
// are primary, some without a value; meta times that tie, and users and groups changed after
// their creation (Users.Update, Groups.Patch). Each sort is read in both directions, with and
// without a random filter, as a whole list, by StartIndex pages and by walks forward by Next and
// back by Prev with each backend's own positions; the ids, totals and the presence of Next and
// Prev must be the same.
func TestDifferentialSortColumns(t *testing.T) {
	t.Parallel()
	seeds := diffSeeds(t)
	ctx := context.Background()
	each := func(t *testing.T, sqlb store.Backend) {
		for _, seed := range seeds {
			mem := memstore.New().Backend()
			g := newDiffGen(seed, false)
			ds := g.dataset()
			tenant := "t" + strconv.FormatUint(seed, 10)
			families := []string{"Smith", "smith", "SMITH", "Straße", "STRASSE", "strasse", "Émile", "e\u0301mile", "ÉMILE", "\u212Aelvin", "kelvin", "a", "B", "日本"}
			emails := []string{"a@x", "A@X", "b@x", "straße@x", "STRASSE@x", "z@x", "Z@x", "ω@x", "Ω@x"}
			instants := []time.Time{day0, day0.Add(1), day0.Add(time.Second), day0.Add(-time.Hour), day0.Add(24 * time.Hour)}
			for _, u := range ds.userList {
				u.Name.FamilyName = ""
				if g.coin(0.8) {
					u.Name.FamilyName = diffPick(g, families)
				}
				u.Emails = nil
				for range g.rnd.IntN(4) {
					e := store.MultiValue{Type: "work", Primary: g.coin(0.3)}
					if g.coin(0.85) {
						e.Value = diffPick(g, emails)
					}
					u.Emails = append(u.Emails, e)
				}
				u.Meta = store.Meta{Created: diffPick(g, instants), LastModified: diffPick(g, instants)}
				if g.coin(0.2) {
					u.Meta.LastModified = time.Time{} // becomes Created
				}
			}
			for _, gr := range ds.groupList {
				gr.Meta = store.Meta{Created: diffPick(g, instants), LastModified: diffPick(g, instants)}
			}
			for _, b := range []store.Backend{mem, sqlb} {
				require.NoError(t, b.Tenants.Create(ctx, store.Tenant{ID: tenant}))
				for _, u := range ds.userList {
					u := *u
					u.Groups = nil
					_, err := b.Users.Create(ctx, tenant, u)
					require.NoError(t, err)
				}
				for _, gr := range ds.groupList {
					gr := *gr
					gr.Members = nil
					_, err := b.Groups.Create(ctx, tenant, gr)
					require.NoError(t, err)
				}
			}
			// Changes after the creates, the same in both backends: a user's familyName, its
			// primary email and lastModified (set by the change), a group's members (its
			// lastModified set by the patch).
			for i, u := range ds.userList {
				if !g.coin(0.4) {
					continue
				}
				family, primary := diffPick(g, families), g.rnd.IntN(3)
				setFamily := g.coin(0.5)
				modified := diffPick(g, instants).Add(time.Duration(i) * time.Minute)
				for _, b := range []store.Backend{mem, sqlb} {
					_, err := b.Users.Update(ctx, tenant, u.ID, func(u *store.User) error {
						if setFamily {
							u.Name.FamilyName = family
						}
						for k := range u.Emails {
							u.Emails[k].Primary = k == primary
						}
						u.Title += "!"
						u.Meta.LastModified = modified
						return nil
					})
					require.NoError(t, err)
				}
			}
			for i, gr := range ds.groupList {
				if !g.coin(0.5) {
					continue
				}
				add := []string{diffPick(g, ds.userIDs)}
				for _, b := range []store.Backend{mem, sqlb} {
					_, err := b.Groups.Patch(ctx, tenant, gr.ID, store.GroupPatch{Add: add, Modified: day0.Add(time.Duration(i%3) * time.Hour)})
					require.NoError(t, err)
				}
			}

			fails := 0
			check := func(what string, q store.Query, want, got diffPage) {
				t.Helper()
				if slices.Equal(want.ids, got.ids) && want.total == got.total && (want.next != nil) == (got.next != nil) && (want.prev != nil) == (got.prev != nil) {
					return
				}
				fails++
				t.Errorf("seed %d: %s, sort %s descending %v, filter %v, StartIndex %d, Count %d\nmemstore: %d %q next %v prev %v\nStore:    %d %q next %v prev %v",
					seed, what, q.Sort.Path(), q.Sort.Descending, q.Filter, q.StartIndex, q.Count,
					want.total, want.ids, want.next != nil, want.prev != nil, got.total, got.ids, got.next != nil, got.prev != nil)
				if fails >= 10 {
					t.Fatalf("seed %d: too many differences", seed)
				}
			}
			for _, kind := range []resourceKind{kindUser, kindGroup} {
				rt := attrResourceType(kind)
				list := func(b store.Backend, q store.Query) diffPage {
					if kind == kindUser {
						p, err := b.Users.List(ctx, tenant, q)
						require.NoError(t, err)
						return diffPage{diffUserIDs(p.Resources), p.TotalResults, p.Next, p.Prev}
					}
					p, err := b.Groups.List(ctx, tenant, q)
					require.NoError(t, err)
					return diffPage{diffGroupIDs(p.Resources), p.TotalResults, p.Next, p.Prev}
				}
				compare := func(what string, q store.Query) diffPage {
					want, got := list(mem, q), list(sqlb, q)
					check(what, q, want, got)
					return got
				}
				for _, c := range sortColumns(kind) {
					s, ok := columnSort(kind, c)
					require.True(t, ok, c.path)
					for _, desc := range []bool{false, true} {
						s.Descending = desc
						for f := range 4 {
							q := store.Query{Sort: s, Count: -1}
							if f > 0 {
								e, err := filter.Parse(g.filter(rt), rt)
								require.NoError(t, err)
								q.Filter = e
							}
							all := compare("all", q)
							for _, start := range []int{1, 2, len(all.ids) / 2, len(all.ids) - 1, len(all.ids) + 1} {
								q.StartIndex, q.Count = start, 1+g.rnd.IntN(7)
								compare("StartIndex page", q)
							}
							// A walk forward by Next to the end, then back by Prev to the start,
							// by each backend's own positions.
							q.StartIndex, q.Count = 1, 1+g.rnd.IntN(5)
							mq, sq := q, q
							back := false
							for step := 0; step < 200; step++ {
								want, got := list(mem, mq), list(sqlb, sq)
								check(fmt.Sprintf("walk step %d (back %v)", step, back), sq, want, got)
								if (want.next != nil) != (got.next != nil) || (want.prev != nil) != (got.prev != nil) {
									break
								}
								if !back && want.next != nil {
									mq.After, sq.After = want.next, got.next
									continue
								}
								if want.prev == nil {
									break
								}
								back = true
								mq.After, mq.Before, sq.After, sq.Before = nil, want.prev, nil, got.prev
							}
						}
					}
				}
			}
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		s, err := Open(ctx, "sqlite:"+t.TempDir()+"/visid.db")
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		require.NoError(t, s.Migrate(ctx))
		each(t, s.Backend())
		checkSortColumns(t, s, "after the changes")
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		s, err := New(Config{DB: ftPostgresSchema(t)}) // skips without VISID_TEST_POSTGRES_DSN
		require.NoError(t, err)
		require.NoError(t, s.Migrate(ctx))
		each(t, s.Backend())
		checkSortColumns(t, s, "after the changes")
	})
}

// day0 is an instant the sort tests' meta times are near.
var day0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// diffPage is a page of a list: its ids, total and positions.
type diffPage struct {
	ids        []string
	total      int
	next, prev *store.Position
}

// Migration 12 gives the users and groups written before it their sort columns, from their
// attrs rows: a multi-valued attribute's from its primary element with a value, else its first
// with a value.
func TestMigrateSortColumns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, open := range testStores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			require.NoError(t, s.Migrate(ctx))
			users, groups := s.Users(), s.Groups()
			require.NoError(t, s.Tenants().Create(ctx, store.Tenant{ID: "acme"}))
			var ids []string
			for i, u := range []store.User{
				{UserName: "u0", Name: store.Name{FamilyName: "Smith"}, Emails: []store.MultiValue{{Value: "B@x"}, {Value: "a@x", Primary: true}}},
				{UserName: "u1", Emails: []store.MultiValue{{Type: "work", Primary: true}, {Value: "C@x"}, {Value: "d@x"}}},
				{UserName: "u2", Name: store.Name{GivenName: "Ann"}},
				{UserName: "u3", Name: store.Name{FamilyName: "SMITH"}, Emails: []store.MultiValue{{Value: "e@x", Primary: true}, {Value: "f@x", Primary: true}}},
			} {
				u.Meta = store.Meta{Created: day0.Add(time.Duration(i%2) * time.Hour)}
				created, err := users.Create(ctx, "acme", u)
				require.NoError(t, err)
				ids = append(ids, created.ID)
			}
			g, err := groups.Create(ctx, "acme", store.Group{DisplayName: "Staff", Meta: store.Meta{Created: day0}})
			require.NoError(t, err)
			_, err = groups.Patch(ctx, "acme", g.ID, store.GroupPatch{Add: ids[:2], Modified: day0.Add(time.Hour)})
			require.NoError(t, err)
			// The database as a version before 12 left it.
			for _, q := range []string{
				`DROP INDEX users_family_name_order`, `DROP INDEX users_email_order`, `DROP INDEX users_created_order`,
				`DROP INDEX users_last_modified_order`, `DROP INDEX groups_created_order`, `DROP INDEX groups_last_modified_order`,
				`ALTER TABLE users DROP COLUMN family_name_fold`, `ALTER TABLE users DROP COLUMN email_fold`,
				`ALTER TABLE users DROP COLUMN created`, `ALTER TABLE users DROP COLUMN last_modified`,
				`ALTER TABLE groups DROP COLUMN created`, `ALTER TABLE groups DROP COLUMN last_modified`,
				`DELETE FROM schema_migrations WHERE version = 12`,
			} {
				_, err := s.db.ExecContext(ctx, q)
				require.NoError(t, err, q)
			}
			require.NoError(t, s.Migrate(ctx))
			checkSortColumns(t, s, "after migration 12")
			sorted := func(path string) []string {
				a, sub, err := schema.User().Lookup(path)
				require.NoError(t, err)
				p, err := users.List(ctx, "acme", store.Query{Sort: store.Sort{Attr: a, Sub: sub}, Count: 2})
				require.NoError(t, err)
				out := diffUserIDs(p.Resources)
				for p.Next != nil {
					p, err = users.List(ctx, "acme", store.Query{Sort: store.Sort{Attr: a, Sub: sub}, After: p.Next, Count: 2})
					require.NoError(t, err)
					out = append(out, diffUserIDs(p.Resources)...)
				}
				return out
			}
			assert.Equal(t, []string{ids[0], ids[3], ids[1], ids[2]}, sorted("name.familyName"), "ties under schema.Fold in creation order, the missing last")
			assert.Equal(t, []string{ids[0], ids[1], ids[3], ids[2]}, sorted("emails.value"), "a@x (primary), C@x (first with a value), e@x (first primary)")
			assert.Equal(t, []string{ids[0], ids[2], ids[1], ids[3]}, sorted("meta.created"))
		})
	}
}
