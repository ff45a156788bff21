package scimsvc_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
)

// emailsJSON is a JSON array of n work emails numbered from first, the first of them primary.
func emailsJSON(first, n int) string {
	parts := make([]string, n)
	for i := range parts {
		primary := ""
		if i == 0 {
			primary = `,"primary":true`
		}
		parts[i] = fmt.Sprintf(`{"value":"ann%06d@example.com","type":"work"%s}`, first+i, primary)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// shout is s with the emails and types of emailsJSON in upper case.
func shout(s string) string {
	return strings.NewReplacer("ann", "ANN", "example.com", "EXAMPLE.COM", `"work"`, `"WORK"`).Replace(s)
}

// membersJSON is a JSON array of members with these ids.
func membersJSON(ids ...string) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = `{"value":"` + id + `"}`
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// TestMultiValuedLimit proves the limits on the values of multi-valued attributes: more than
// MaxMultiValued emails, phone numbers, addresses or roles, or more than MaxGroupMembers members,
// after a POST, PUT or PATCH is 400 invalidValue naming the attribute and the limit, and nothing
// is stored; a resource that is already above the limit can still be changed as long as it does
// not grow.
func TestMultiValuedLimit(t *testing.T) {
	const userSchema = `"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"]`
	for _, tt := range []struct {
		name   string
		config func(*scimsvc.Config)
		// stored is the number of emails of the user "big" before the request.
		stored int
		method string
		path   string // {big}, {u1}…{u5} and {team} stand for ids
		body   string
		want   int
		// detail holds what the error detail must say.
		detail []string
	}{
		{name: "POST at the limit", method: "POST", path: "/acme/Users",
			body: `{` + userSchema + `,"userName":"new","emails":` + emailsJSON(0, 3) + `}`, want: 201},
		{name: "POST above the limit", method: "POST", path: "/acme/Users",
			body: `{` + userSchema + `,"userName":"new","emails":` + emailsJSON(0, 4) + `}`, want: 400,
			detail: []string{"emails", "4", "at most 3"}},
		{name: "POST with too many roles", method: "POST", path: "/acme/Users",
			body: `{` + userSchema + `,"userName":"new","roles":["a","b","c","d"]}`, want: 400,
			detail: []string{"roles", "at most 3"}},
		{name: "POST with too many addresses", method: "POST", path: "/acme/Users",
			body: `{` + userSchema + `,"userName":"new","addresses":[{"locality":"a"},{"locality":"b"},{"locality":"c"},{"locality":"d"}]}`,
			want: 400, detail: []string{"addresses", "at most 3"}},
		{name: "PUT above the limit", method: "PUT", path: "/acme/Users/{big}", stored: 1,
			body: `{` + userSchema + `,"userName":"big","phoneNumbers":["1","2","3","4"]}`, want: 400,
			detail: []string{"phoneNumbers", "at most 3"}},
		{name: "PATCH add to the limit", method: "PATCH", path: "/acme/Users/{big}", stored: 2,
			body: patchBody(`{"op":"add","path":"emails","value":` + emailsJSON(2, 1) + `}`), want: 200},
		{name: "PATCH add beyond the limit", method: "PATCH", path: "/acme/Users/{big}", stored: 2,
			body: patchBody(`{"op":"add","path":"emails","value":` + emailsJSON(2, 2) + `}`), want: 400,
			detail: []string{"emails", "4", "at most 3"}},
		{name: "PATCH add of values already there, in another case", method: "PATCH", path: "/acme/Users/{big}", stored: 3,
			body: patchBody(`{"op":"add","path":"emails","value":` + shout(emailsJSON(0, 3)) + `}`), want: 200},
		{name: "PATCH without path beyond the limit", method: "PATCH", path: "/acme/Users/{big}", stored: 3,
			body: patchBody(`{"op":"add","value":{"emails":` + emailsJSON(3, 1) + `}}`), want: 400,
			detail: []string{"emails", "at most 3"}},
		{name: "PATCH that grows an attribute and shrinks it again", method: "PATCH", path: "/acme/Users/{big}", stored: 3,
			body: patchBody(`{"op":"add","path":"emails","value":`+emailsJSON(3, 1)+`}`,
				`{"op":"remove","path":"emails[value eq \"ann000000@example.com\"]"}`), want: 200},
		{name: "PATCH that grows an attribute beyond twice the limit on the way", method: "PATCH", path: "/acme/Users/{big}", stored: 3,
			body: patchBody(`{"op":"add","path":"emails","value":`+emailsJSON(3, 4)+`}`,
				`{"op":"remove","path":"emails","value":`+emailsJSON(3, 4)+`}`), want: 400,
			detail: []string{"emails", "7", "at most 3"}},
		{name: "above the limit already: another attribute changes", method: "PATCH", path: "/acme/Users/{big}", stored: 5,
			body: patchBody(`{"op":"replace","path":"displayName","value":"Big"}`), want: 200},
		{name: "above the limit already: a value is removed", method: "PATCH", path: "/acme/Users/{big}", stored: 5,
			body: patchBody(`{"op":"remove","path":"emails[value eq \"ann000001@example.com\"]"}`), want: 200},
		{name: "above the limit already: a value is replaced", method: "PATCH", path: "/acme/Users/{big}", stored: 5,
			body: patchBody(`{"op":"replace","path":"emails","value":` + emailsJSON(10, 5) + `}`), want: 200},
		{name: "above the limit already: the attribute grows", method: "PATCH", path: "/acme/Users/{big}", stored: 5,
			body: patchBody(`{"op":"add","path":"emails","value":` + emailsJSON(5, 1) + `}`), want: 400,
			detail: []string{"emails", "6", "at most 3"}},
		{name: "members have their own limit", method: "POST", path: "/acme/Groups",
			body: `{"displayName":"Team","members":` + membersJSON("{u1}", "{u2}", "{u3}", "{u4}") + `}`, want: 201},
		{name: "POST group above the members limit", method: "POST", path: "/acme/Groups",
			body: `{"displayName":"Team","members":` + membersJSON("{u1}", "{u2}", "{u3}", "{u4}", "{u5}") + `}`, want: 400,
			detail: []string{"members", "5", "at most 4"}},
		{name: "PATCH members beyond the limit", method: "PATCH", path: "/acme/Groups/{team}",
			body: patchBody(`{"op":"add","path":"members","value":` + membersJSON("{u3}", "{u4}", "{u5}") + `}`), want: 400,
			detail: []string{"members", "at most 4"}},
		{name: "PATCH members to the limit, one already there", method: "PATCH", path: "/acme/Groups/{team}",
			body: patchBody(`{"op":"add","path":"members","value":` + membersJSON("{u1}", "{u3}", "{u4}") + `}`), want: 200},
		{name: "default limit", config: func(c *scimsvc.Config) { c.MaxMultiValued = 0 }, method: "POST", path: "/acme/Users",
			body: `{` + userSchema + `,"userName":"new","emails":` + emailsJSON(0, scimsvc.DefaultMaxMultiValued+1) + `}`, want: 400,
			detail: []string{"emails", fmt.Sprintf("at most %d", scimsvc.DefaultMaxMultiValued)}},
		{name: "default limit reached", config: func(c *scimsvc.Config) { c.MaxMultiValued = 0 }, method: "POST", path: "/acme/Users",
			body: `{` + userSchema + `,"userName":"new","emails":` + emailsJSON(0, scimsvc.DefaultMaxMultiValued) + `}`, want: 201},
		{name: "negative is no limit", config: func(c *scimsvc.Config) { c.MaxMultiValued = -1 }, method: "POST", path: "/acme/Users",
			body: `{` + userSchema + `,"userName":"new","emails":` + emailsJSON(0, scimsvc.DefaultMaxMultiValued+1) + `}`, want: 201},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, func(c *scimsvc.Config) {
				c.MaxMultiValued, c.MaxGroupMembers = 3, 4
				if tt.config != nil {
					tt.config(c)
				}
			})
			ids := map[string]string{}
			var users []store.Member
			for i := 1; i <= 5; i++ {
				u := e.seedUser("acme", store.User{UserName: fmt.Sprintf("u%d", i), Active: true})
				ids[fmt.Sprintf("{u%d}", i)] = u.ID
				users = append(users, store.Member{Value: u.ID})
			}
			big := e.seedUser("acme", store.User{UserName: "big", Active: true, Emails: manyEmails(0, tt.stored)})
			ids["{big}"] = big.ID
			ids["{team}"] = e.seedGroup("acme", store.Group{DisplayName: "Team", Members: users[:2]}).ID
			replace := func(s string) string {
				for k, v := range ids {
					s = strings.ReplaceAll(s, k, v)
				}
				return s
			}
			before := e.snapshot()
			r := e.do(tt.method, replace(tt.path), replace(tt.body))
			if tt.want != 400 {
				require.Equal(t, tt.want, r.Status, "body: %s", r.Body)
				return
			}
			detail := requireSCIMError(t, r, 400, "invalidValue")
			for _, s := range tt.detail {
				assert.Contains(t, detail, s)
			}
			assert.Equal(t, before, e.snapshot(), "a refused request must change nothing")
		})
	}
}

// TestPatchAddMany proves that a PATCH adding many values to an attribute that holds many keeps
// the duplicate rules: a value with the same value and type (case-insensitively) updates the
// one there, a member with the same id is kept once, and a remove listing many values removes
// exactly those.
func TestPatchAddMany(t *testing.T) {
	const n = 3000
	e := newEnv(t, func(c *scimsvc.Config) { c.MaxMultiValued, c.MaxGroupMembers = -1, -1 })
	u := e.seedUser("acme", store.User{UserName: "ann", Active: true, Emails: manyEmails(0, n)})
	// Adds n emails, the first half already there in upper case, the first of them primary.
	body := patchBody(`{"op":"add","path":"emails","value":` + shout(emailsJSON(n/2, n)) + `}`)
	r := e.do("PATCH", "/acme/Users/"+u.ID, body)
	require.Equal(t, 200, r.Status, "body: %s", r.Body)
	got := e.storedUser(u.ID).Emails
	require.Len(t, got, n+n/2)
	assert.Equal(t, manyEmails(0, n/2), got[:n/2], "the values not named are unchanged")
	assert.Equal(t, store.MultiValue{Value: fmt.Sprintf("ANN%06d@EXAMPLE.COM", n/2), Type: "WORK", Primary: true}, got[n/2],
		"a value already there is updated in place")
	assert.Equal(t, store.MultiValue{Value: fmt.Sprintf("ANN%06d@EXAMPLE.COM", n), Type: "WORK"}, got[n], "new values follow")

	var ids []string
	var members []store.Member
	for i := range 2 * n {
		id := e.seedUser("acme", store.User{UserName: fmt.Sprintf("m%d", i), Active: true}).ID
		ids = append(ids, id)
		if i < n {
			members = append(members, store.Member{Value: id})
		}
	}
	g := e.seedGroup("acme", store.Group{DisplayName: "All", Members: members})
	r = e.do("PATCH", "/acme/Groups/"+g.ID, patchBody(
		`{"op":"add","path":"members","value":`+membersJSON(ids[n/2:]...)+`}`,
		`{"op":"remove","path":"members","value":`+membersJSON(ids[:n/2]...)+`}`))
	require.Equal(t, 200, r.Status, "body: %s", r.Body)
	assert.Equal(t, ids[n/2:], memberIDs(e.storedGroup(g.ID)))
}

// blockingUsers is a user store whose calls wait until their context is done and then fail with
// its error. Update waits inside the transaction, in the function it is given, and then lets
// the function decide.
type blockingUsers struct{ store.Users }

func (b blockingUsers) Create(ctx context.Context, tenant string, u store.User) (*store.User, error) {
	<-ctx.Done()
	return b.Users.Create(ctx, tenant, u)
}

func (b blockingUsers) Get(ctx context.Context, tenant, id string) (*store.User, error) {
	<-ctx.Done()
	return nil, fmt.Errorf("reading user: %w", ctx.Err())
}

func (b blockingUsers) Update(ctx context.Context, tenant, id string, fn func(*store.User) error) (*store.User, error) {
	return b.Users.Update(context.WithoutCancel(ctx), tenant, id, func(u *store.User) error {
		<-ctx.Done()
		return fn(u)
	})
}

func (b blockingUsers) Delete(ctx context.Context, tenant, id string) error {
	<-ctx.Done()
	return fmt.Errorf("deleting user: %w", ctx.Err())
}

func (b blockingUsers) List(ctx context.Context, tenant string, q store.Query) (store.Page[store.User], error) {
	<-ctx.Done()
	return store.Page[store.User]{}, fmt.Errorf("listing users: %w", ctx.Err())
}

// TestRequestTimeout proves that a request whose store call outlives Config.RequestTimeout is
// answered 503 with Retry-After and a SCIM error body, and changes nothing.
func TestRequestTimeout(t *testing.T) {
	for _, tt := range []struct {
		name, method, path, body string
	}{
		{"list", "GET", "/acme/Users", ""},
		{"list with a filter", "GET", `/acme/Users?filter=emails.value+gt+"a"`, ""},
		{"get", "GET", "/acme/Users/{ann}", ""},
		{"create", "POST", "/acme/Users", `{"userName":"cy@example.com"}`},
		{"replace", "PUT", "/acme/Users/{ann}", `{"userName":"ann@example.com","displayName":"Changed"}`},
		{"patch", "PATCH", "/acme/Users/{ann}", patchBody(`{"op":"add","path":"emails","value":[{"value":"new@example.com"}]}`)},
		{"delete", "DELETE", "/acme/Users/{ann}", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, quietLogger, func(c *scimsvc.Config) {
				c.Users = blockingUsers{c.Users}
				c.RequestTimeout = 20 * time.Millisecond
			})
			s := e.seed()
			before := e.snapshot()
			r := e.do(tt.method, strings.ReplaceAll(tt.path, "{ann}", s.ann), tt.body)
			detail := requireSCIMError(t, r, http.StatusServiceUnavailable, "")
			assert.Contains(t, detail, "took too long")
			assert.Equal(t, "1", r.Header.Get("Retry-After"))
			assert.Equal(t, before, e.snapshot(), "a request that timed out must change nothing")
		})
	}
}

// deadlineUsers records the deadline of the contexts of its List calls.
type deadlineUsers struct {
	store.Users
	deadline *time.Time
	has      *bool
}

func (d deadlineUsers) List(ctx context.Context, tenant string, q store.Query) (store.Page[store.User], error) {
	*d.deadline, *d.has = ctx.Deadline()
	return d.Users.List(ctx, tenant, q)
}

// TestRequestTimeoutDefault proves which deadline a store call gets for each RequestTimeout.
func TestRequestTimeoutDefault(t *testing.T) {
	for _, tt := range []struct {
		name    string
		timeout time.Duration
		want    time.Duration // 0: no deadline
	}{
		{"zero is the default", 0, scimsvc.DefaultRequestTimeout},
		{"set", 2 * time.Minute, 2 * time.Minute},
		{"negative is none", -1, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var deadline time.Time
			var has bool
			e := newEnv(t, func(c *scimsvc.Config) {
				c.Users = deadlineUsers{Users: c.Users, deadline: &deadline, has: &has}
				c.RequestTimeout = tt.timeout
			})
			start := time.Now()
			require.Equal(t, 200, e.do("GET", "/acme/Users", nil).Status)
			if tt.want == 0 {
				assert.False(t, has, "no deadline")
				return
			}
			require.True(t, has, "a deadline")
			assert.WithinRange(t, deadline, start.Add(tt.want), time.Now().Add(tt.want))
		})
	}
}

// heldUsers is a user store whose first hold List calls wait until release is closed; the
// others answer at once. entered receives once for each call that waits.
type heldUsers struct {
	store.Users
	hold    int32
	calls   *atomic.Int32
	entered chan struct{}
	release chan struct{}
}

func (h heldUsers) List(ctx context.Context, tenant string, q store.Query) (store.Page[store.User], error) {
	if h.calls.Add(1) <= h.hold {
		h.entered <- struct{}{}
		<-h.release
	}
	return h.Users.List(ctx, tenant, q)
}

// TestConcurrentListLimit proves that an API key may have at most MaxConcurrentLists list
// requests in progress: one more gets 429 with Retry-After at once, whether it lists users or
// groups, by GET or by POST .search, while other requests of the key and lists of other keys go on, and the key may list
// again once its lists are done.
func TestConcurrentListLimit(t *testing.T) {
	held := heldUsers{hold: 2, calls: &atomic.Int32{}, entered: make(chan struct{}, 2), release: make(chan struct{})}
	e := newEnv(t, func(c *scimsvc.Config) {
		c.MaxConcurrentLists = 2
		held.Users = c.Users
		c.Users = held
	})
	s := e.seed()
	other, _ := e.issueKey(scimsvc.KeySpec{Name: "other", Tenants: []string{"acme"}})

	var wg sync.WaitGroup
	statuses := make([]int, 2)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = e.do("GET", `/acme/Users?filter=userName+sw+"a"`, nil).Status
		}()
	}
	defer func() { // release the held lists even when an assertion below fails
		select {
		case <-held.release:
		default:
			close(held.release)
		}
		wg.Wait()
	}()
	<-held.entered
	<-held.entered

	for _, path := range []string{"/acme/Users", "/acme/Groups", `/acme/Groups?filter=displayName+eq+"Staff"`} {
		r := e.do("GET", path, nil)
		detail := requireSCIMError(t, r, http.StatusTooManyRequests, "")
		assert.Contains(t, detail, "list requests", path)
		assert.Equal(t, "1", r.Header.Get("Retry-After"), path)
	}
	for _, path := range []string{"/acme/Users/.search", "/acme/Groups/.search", "/acme/.search"} {
		r := e.do("POST", path, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:SearchRequest"]}`)
		detail := requireSCIMError(t, r, http.StatusTooManyRequests, "")
		assert.Contains(t, detail, "list requests", path)
		assert.Equal(t, "1", r.Header.Get("Retry-After"), path)
	}
	assert.Equal(t, 200, e.do("GET", "/acme/Users/"+s.ann, nil).Status, "a request that is not a list goes on")
	assert.Equal(t, 200, e.doKey(other, "GET", "/acme/Users", nil).Status, "another key lists")

	close(held.release)
	wg.Wait()
	assert.Equal(t, []int{200, 200}, statuses)
	assert.Equal(t, 200, e.do("GET", "/acme/Users", nil).Status, "the key lists again once its lists are done")
}

// TestPatchSuccessiveAdds proves that adds in one request see what the operations before them
// did, including the operations that change or remove values between two adds.
func TestPatchSuccessiveAdds(t *testing.T) {
	const x = `{"op":"add","path":"emails","value":[{"value":"x@example.com","type":"work"}]}`
	for _, tt := range []struct {
		name string
		ops  []string
		want []store.MultiValue
	}{
		{"the same value twice, in another case", []string{x,
			`{"op":"add","path":"emails","value":[{"value":"X@EXAMPLE.COM","type":"Work","primary":true}]}`},
			[]store.MultiValue{{Value: "X@EXAMPLE.COM", Type: "Work", Primary: true}}},
		{"added, removed, added", []string{x, `{"op":"remove","path":"emails[value eq \"x@example.com\"]"}`, x},
			[]store.MultiValue{{Value: "x@example.com", Type: "work"}}},
		{"added, its type changed by a filter, added", []string{x,
			`{"op":"replace","path":"emails[value eq \"x@example.com\"].type","value":"home"}`, x},
			[]store.MultiValue{{Value: "x@example.com", Type: "home"}, {Value: "x@example.com", Type: "work"}}},
		{"added, every type changed, added", []string{x, `{"op":"replace","path":"emails.type","value":"home"}`, x},
			[]store.MultiValue{{Value: "x@example.com", Type: "home"}, {Value: "x@example.com", Type: "work"}}},
		{"added, replaced whole, added", []string{x,
			`{"op":"replace","path":"emails","value":[{"value":"y@example.com","type":"work"}]}`, x},
			[]store.MultiValue{{Value: "y@example.com", Type: "work"}, {Value: "x@example.com", Type: "work"}}},
		{"added with and without a path", []string{x,
			`{"op":"add","value":{"emails":[{"value":"x@example.com","type":"work","display":"X"}]}}`},
			[]store.MultiValue{{Value: "x@example.com", Type: "work", Display: "X"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			u := e.seedUser("acme", store.User{UserName: "ann", Active: true})
			r := e.do("PATCH", "/acme/Users/"+u.ID, patchBody(tt.ops...))
			require.Equal(t, 200, r.Status, "body: %s", r.Body)
			assert.Equal(t, tt.want, e.storedUser(u.ID).Emails)
		})
	}
}
