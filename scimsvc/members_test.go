package scimsvc_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
)

// memberReads is a store.Groups that counts the calls that read a group's member list whole:
// Get, Update, List without Query.WithoutMembers, and Patch with GroupPatch.WithMembers.
type memberReads struct {
	store.Groups
	n atomic.Int32
}

func (g *memberReads) Get(ctx context.Context, tenant, id string) (*store.Group, error) {
	g.n.Add(1)
	return g.Groups.Get(ctx, tenant, id)
}

func (g *memberReads) Update(ctx context.Context, tenant, id string, fn func(*store.Group) error) (*store.Group, error) {
	g.n.Add(1)
	return g.Groups.Update(ctx, tenant, id, fn)
}

func (g *memberReads) List(ctx context.Context, tenant string, q store.Query) (store.Page[store.Group], error) {
	if !q.WithoutMembers {
		g.n.Add(1)
	}
	return g.Groups.List(ctx, tenant, q)
}

func (g *memberReads) Patch(ctx context.Context, tenant, id string, p store.GroupPatch) (*store.Group, error) {
	if p.WithMembers {
		g.n.Add(1)
	}
	return g.Groups.Patch(ctx, tenant, id, p)
}

// reads returns the count since the last call.
func (g *memberReads) reads() int { return int(g.n.Swap(0)) }

// memberEnv is a backend env whose Groups count member reads.
type memberEnv struct {
	*backendEnv
	spy *memberReads
}

func forEachMemberEnv(t *testing.T, configure func(*scimsvc.Config), test func(t *testing.T, e *memberEnv)) {
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		b := e.backend
		spy := &memberReads{Groups: b.Groups}
		cfg := scimsvc.Config{Tenants: b.Tenants, Users: b.Users, Groups: spy, APIKeys: b.APIKeys, Events: b.Events,
			BaseURL: testBase, Now: e.clock.Now}
		if configure != nil {
			configure(&cfg)
		}
		h, err := scimsvc.New(cfg)
		require.NoError(t, err)
		e.handler = h
		test(t, &memberEnv{backendEnv: e, spy: spy})
	})
}

func (e *memberEnv) user(name string) string {
	e.t.Helper()
	r := e.do("POST", "/acme/Users", map[string]any{"userName": name})
	require.Equal(e.t, http.StatusCreated, r.Status, "%s", r.Body)
	return r.JSON(e.t)["id"].(string)
}

func (e *memberEnv) group(name string, members ...string) string {
	e.t.Helper()
	ms := []any{}
	for _, m := range members {
		ms = append(ms, map[string]any{"value": m})
	}
	r := e.do("POST", "/acme/Groups", map[string]any{"displayName": name, "members": ms})
	require.Equal(e.t, http.StatusCreated, r.Status, "%s", r.Body)
	return r.JSON(e.t)["id"].(string)
}

// members GETs the group and returns its members' values in order.
func (e *memberEnv) members(id string) []string {
	e.t.Helper()
	r := e.do("GET", "/acme/Groups/"+id, nil)
	require.Equal(e.t, http.StatusOK, r.Status, "%s", r.Body)
	out := []string{}
	for _, m := range jsonAt(r.JSON(e.t), "members").([]any) {
		out = append(out, m.(map[string]any)["value"].(string))
	}
	return out
}

// The PATCH shapes Entra ID and Okta send to change a group's members, and renames, never read
// the member list when the response excludes it; the result and the events are as the
// operations say, on every backend.
func TestGroupPatchMembersWithoutReadingThem(t *testing.T) {
	forEachMemberEnv(t, nil, func(t *testing.T, e *memberEnv) {
		u := make([]string, 5)
		for i := range u {
			u[i] = e.user(fmt.Sprintf("user%d", i))
		}
		g := e.group("Staff", u[0])
		path := "/acme/Groups/" + g + "?excludedAttributes=members"
		steps := []struct{ name, ops string }{
			{"Entra add", `[{"op":"Add","path":"members","value":[{"value":"` + u[1] + `"},{"value":"` + u[2] + `"}]}]`},
			{"Entra remove by value", `[{"op":"Remove","path":"members","value":[{"value":"` + u[0] + `"}]}]`},
			{"Entra remove by filter", `[{"op":"Remove","path":"members[value eq \"` + u[1] + `\"]"}]`},
			{"Okta remove and add", `[{"op":"remove","path":"members[value eq \"` + u[2] + `\"]"},` +
				`{"op":"add","path":"members","value":[{"value":"` + u[3] + `","display":"user3"}]}]`},
			{"Entra rename and add", `[{"op":"Replace","path":"displayName","value":"All staff"},` +
				`{"op":"Add","path":"members","value":[{"value":"` + u[4] + `"},{"value":"` + u[3] + `"}]}]`},
			{"Okta rename", `[{"op":"replace","value":{"id":"` + g + `","displayName":"Everyone"}}]`},
			{"add then remove in one request", `[{"op":"add","path":"members","value":[{"value":"` + u[0] + `"}]},` +
				`{"op":"remove","path":"members[value eq \"` + u[0] + `\"]"}]`},
		}
		for _, s := range steps {
			r := e.do("PATCH", path, patchOps(s.ops))
			require.Equal(t, http.StatusOK, r.Status, "%s: %s", s.name, r.Body)
			body := r.JSON(t)
			assert.Nil(t, body["members"], s.name)
			assert.Equal(t, g, body["id"], s.name)
			assert.Zero(t, e.spy.reads(), "%s read the member list", s.name)
		}
		assert.Equal(t, []string{u[3], u[4]}, e.members(g))
		r := e.do("GET", "/acme/Groups/"+g+"?excludedAttributes=members", nil)
		assert.Equal(t, "Everyone", r.JSON(t)["displayName"])
		assert.Nil(t, r.JSON(t)["members"])

		events, err := e.backend.Events.List(context.Background(), "acme", "", 1000)
		require.NoError(t, err)
		var added, removed []string
		for _, ev := range events {
			switch ev.Type {
			case store.EventGroupMemberAdded:
				added = append(added, string(ev.Data))
			case store.EventGroupMemberRemoved:
				removed = append(removed, string(ev.Data))
			}
		}
		ev := func(user string) string { return `{"group":"` + g + `","user":"` + user + `"}` }
		assert.Equal(t, []string{ev(u[1]), ev(u[2]), ev(u[3]), ev(u[4])}, added)
		assert.Equal(t, []string{ev(u[0]), ev(u[1]), ev(u[2])}, removed)
	})
}

// A member that is not a user of the tenant, or a group over MaxGroupMembers, is refused with
// the SCIM error and nothing is stored, renames in the same request included.
func TestGroupPatchMembersRefused(t *testing.T) {
	forEachMemberEnv(t, func(c *scimsvc.Config) { c.MaxGroupMembers = 2 }, func(t *testing.T, e *memberEnv) {
		a, b, c := e.user("a"), e.user("b"), e.user("c")
		g := e.group("Staff", a)
		r := e.do("PATCH", "/acme/Groups/"+g, patchOps(`[{"op":"replace","path":"displayName","value":"X"},`+
			`{"op":"add","path":"members","value":[{"value":"`+b+`"},{"value":"user_nobody"}]}]`))
		assert.Equal(t, http.StatusBadRequest, r.Status)
		assert.Equal(t, "invalidValue", r.JSON(t)["scimType"])
		r = e.do("PATCH", "/acme/Groups/"+g, patchOps(`[{"op":"add","path":"members","value":[{"value":"`+b+`"},{"value":"`+c+`"}]}]`))
		assert.Equal(t, http.StatusBadRequest, r.Status)
		assert.Contains(t, r.JSON(t)["detail"], "at most 2")
		assert.Equal(t, []string{a}, e.members(g))
		r = e.do("GET", "/acme/Groups/"+g, nil)
		assert.Equal(t, "Staff", r.JSON(t)["displayName"])
	})
}

// GET of a group, and a list of groups, whose projection leaves out members read none; asked
// for, members are there.
func TestGroupReadsWithoutMembers(t *testing.T) {
	forEachMemberEnv(t, nil, func(t *testing.T, e *memberEnv) {
		a := e.user("a")
		g := e.group("Staff", a)
		e.spy.reads()
		for _, path := range []string{
			"/acme/Groups/" + g + "?excludedAttributes=members",
			"/acme/Groups/" + g + "?attributes=displayName",
			"/acme/Groups?filter=" + url.QueryEscape(`displayName eq "Staff"`) + "&excludedAttributes=members",
			"/acme/Groups?excludedAttributes=members&startIndex=1&count=10",
		} {
			r := e.do("GET", path, nil)
			require.Equal(t, http.StatusOK, r.Status, "%s: %s", path, r.Body)
			assert.NotContains(t, string(r.Body), `"members"`, path)
			assert.Contains(t, string(r.Body), `"Staff"`, path)
			assert.Zero(t, e.spy.reads(), path)
		}
		assert.Equal(t, []string{a}, e.members(g))
		r := e.do("GET", "/acme/Groups?filter="+url.QueryEscape(`displayName eq "Staff"`), nil)
		assert.Equal(t, a, jsonAt(r.JSON(t), "Resources", 0, "members", 0, "value"))
	})
}

// Config.GroupNoContent answers PATCH and PUT of a group with 204 and no body; POST still gets
// 201 with the group; users are not affected.
func TestGroupNoContent(t *testing.T) {
	forEachMemberEnv(t, func(c *scimsvc.Config) { c.GroupNoContent = true }, func(t *testing.T, e *memberEnv) {
		a, b := e.user("a"), e.user("b")
		g := e.group("Staff", a)
		e.spy.reads()
		r := e.do("PATCH", "/acme/Groups/"+g, patchOps(`[{"op":"add","path":"members","value":[{"value":"`+b+`"}]}]`))
		assert.Equal(t, http.StatusNoContent, r.Status)
		assert.Empty(t, r.Body)
		assert.Zero(t, e.spy.reads())
		r = e.do("PUT", "/acme/Groups/"+g, map[string]any{"displayName": "Renamed", "members": []any{map[string]any{"value": b}}})
		assert.Equal(t, http.StatusNoContent, r.Status)
		assert.Empty(t, r.Body)
		assert.Equal(t, []string{b}, e.members(g))
		r = e.do("PATCH", "/acme/Users/"+a, patchOps(`[{"op":"replace","path":"displayName","value":"A"}]`))
		assert.Equal(t, http.StatusOK, r.Status)
		assert.Equal(t, "A", r.JSON(t)["displayName"])
	})
}

// attributes and excludedAttributes shape the responses of POST, PUT and PATCH too (RFC 7644
// §3.5.2, §3.9).
func TestWriteResponseProjection(t *testing.T) {
	e := newEnv(t)
	r := e.do("POST", "/acme/Users?attributes=userName", map[string]any{"userName": "ann", "displayName": "Ann",
		"emails": []any{map[string]any{"value": "ann@example.com"}}})
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	body := r.JSON(t)
	id := body["id"].(string)
	assert.Equal(t, "ann", body["userName"])
	assert.Nil(t, body["displayName"])
	assert.Nil(t, body["emails"])

	r = e.do("PUT", "/acme/Users/"+id+"?excludedAttributes=emails", map[string]any{"userName": "ann", "displayName": "Ann B",
		"emails": []any{map[string]any{"value": "ann@example.com"}}})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Nil(t, r.JSON(t)["emails"])
	assert.Equal(t, "Ann B", r.JSON(t)["displayName"])

	r = e.do("POST", "/acme/Groups?excludedAttributes=members", map[string]any{"displayName": "Staff",
		"members": []any{map[string]any{"value": id}}})
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	assert.Nil(t, r.JSON(t)["members"])
	g := r.JSON(t)["id"].(string)

	r = e.do("PATCH", "/acme/Groups/"+g+"?attributes=displayName", patchOps(`[{"op":"remove","path":"members[value eq \"`+id+`\"]"}]`))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Equal(t, "Staff", r.JSON(t)["displayName"])
	assert.Nil(t, r.JSON(t)["members"])
	r = e.do("PATCH", "/acme/Groups/"+g+"?attributes=members", patchOps(`[{"op":"add","path":"members","value":[{"value":"`+id+`"}]}]`))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Equal(t, id, jsonAt(r.JSON(t), "members", 0, "value"))
	assert.Nil(t, r.JSON(t)["displayName"])
}
