package scimsvc_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
)

// countingUsers counts the reads and the writes a request makes of the users.
type countingUsers struct {
	store.Users
	reads, writes atomic.Int32
}

func (c *countingUsers) Get(ctx context.Context, tenant, id string) (*store.User, error) {
	c.reads.Add(1)
	return c.Users.Get(ctx, tenant, id)
}

func (c *countingUsers) Update(ctx context.Context, tenant, id string, fn func(*store.User) error) (*store.User, error) {
	c.writes.Add(1)
	return c.Users.Update(ctx, tenant, id, fn)
}

func (c *countingUsers) Delete(ctx context.Context, tenant, id string) error {
	c.writes.Add(1)
	return c.Users.Delete(ctx, tenant, id)
}

func (c *countingUsers) DeleteIfVersion(ctx context.Context, tenant, id string, version int64) error {
	c.writes.Add(1)
	return c.Users.DeleteIfVersion(ctx, tenant, id, version)
}

// counts returns and resets the reads and writes counted.
func (c *countingUsers) counts() (reads, writes int32) {
	return c.reads.Swap(0), c.writes.Swap(0)
}

// tags returns n entity tags W/"100", W/"101", …, with the tag of version last at the end when
// last is not 0.
func tags(n int, last int64) string {
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, fmt.Sprintf(`W/"%d"`, 100+i))
	}
	if last != 0 {
		out[n-1] = fmt.Sprintf(`W/"%d"`, last)
	}
	return strings.Join(out, ", ")
}

// TestConditionTagsCapped: an If-Match or If-None-Match of more than MaxConditionTags entity tags,
// or a Bulk version of as many, is 400 invalidValue naming the cap and changes nothing; up to the
// cap, a conditional request costs at most one read and one conditional write, whatever the count
// of tags (a DELETE with 100,001 tags once made a write per tag), on every backend.
func TestConditionTagsCapped(t *testing.T) {
	spy := &countingUsers{}
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		r := e.do("POST", "/acme/Users", `{"schemas":["`+userSchema+`"],"userName":"ann@example.com"}`)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		user := "/acme/Users/" + r.JSON(t)["id"].(string)
		spy.counts()

		tooMany := func(r *response, what string) {
			t.Helper()
			require.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", what, r.Body)
			body := r.JSON(t)
			assert.Equal(t, "invalidValue", body["scimType"], what)
			assert.Contains(t, body["detail"], fmt.Sprint(scimsvc.MaxConditionTags), what)
		}
		for _, n := range []int{scimsvc.MaxConditionTags + 1, 100_001} {
			all := tags(n, 1)
			tooMany(e.doIf("DELETE", user, "", "If-Match", all), "DELETE")
			tooMany(e.doIf("PATCH", user, patchBody(`{"op":"replace","path":"title","value":"x"}`), "If-Match", all), "PATCH")
			tooMany(e.doIf("PUT", user, `{"schemas":["`+userSchema+`"],"userName":"ann@example.com","title":"x"}`, "If-Match", all), "PUT")
			tooMany(e.doIf("GET", user, "", "If-None-Match", all), "GET")
			reads, writes := spy.counts()
			assert.Zero(t, reads+writes, "refused before any store call")
		}
		// The cap counts the tags of every If-Match line together.
		req := func() *http.Request {
			req, _ := http.NewRequest("DELETE", user, nil)
			req.Header.Set("Authorization", "Bearer "+e.key)
			for range 2 {
				req.Header.Add("If-Match", tags(scimsvc.MaxConditionTags/2+1, 0))
			}
			return req
		}()
		rec := httptest.NewRecorder()
		e.handler.ServeHTTP(rec, req)
		assert.Equal(t, http.StatusBadRequest, rec.Code, "%s", rec.Body)

		ops := bulkResponse(t, e.do("POST", "/acme/Bulk", bulkOps(0, `[
			{"method":"DELETE","path":"`+strings.TrimPrefix(user, "/acme")+`","version":"`+strings.ReplaceAll(tags(scimsvc.MaxConditionTags+1, 1), `"`, `\"`)+`"}]`)))
		require.Len(t, ops, 1)
		assert.Equal(t, "400", ops[0].Status)
		assert.Equal(t, "invalidValue", jsonAt(ops[0].Response, "scimType"))
		reads, writes := spy.counts()
		assert.Zero(t, reads+writes, "a Bulk version over the cap is refused before any store call")
		require.Equal(t, http.StatusOK, e.do("GET", user, nil).Status, "nothing was removed")
		spy.counts()

		// Up to the cap: at most one read and one conditional write.
		preconditionFailed(t, e.doIf("DELETE", user, "", "If-Match", tags(scimsvc.MaxConditionTags, 0)))
		reads, writes = spy.counts()
		assert.LessOrEqual(t, reads, int32(1))
		assert.LessOrEqual(t, writes, int32(1))
		preconditionFailed(t, e.doIf("PATCH", user, patchBody(`{"op":"replace","path":"title","value":"x"}`), "If-Match", tags(scimsvc.MaxConditionTags, 0)))
		reads, writes = spy.counts()
		assert.LessOrEqual(t, reads, int32(1))
		assert.LessOrEqual(t, writes, int32(1))
		r = e.doIf("DELETE", user, "", "If-Match", tags(scimsvc.MaxConditionTags, 1))
		require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
		reads, writes = spy.counts()
		assert.LessOrEqual(t, reads, int32(1))
		assert.Equal(t, int32(1), writes)
		assert.Equal(t, http.StatusNotFound, e.do("GET", user, nil).Status)
	}, func(c *scimsvc.Config) {
		spy.Users = c.Users
		c.Users = spy
	})
}
