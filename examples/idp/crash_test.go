package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/examples/internal/httpserve"
	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/schema"
	"github.com/visid/visid/store/sqlstore"
	"github.com/visid/visid/webhooks"
)

const (
	// crashWorkers is how many provisioning clients run at once, each with an API key of its
	// own.
	crashWorkers = 6
	// crashSteps is the most requests one client makes: within its key's budget, so that the
	// rate limit refuses none of them.
	crashSteps = scimsvc.DefaultRequestsPerMinute - 10
	// crashPatchURN is the schema of a PATCH request's body.
	crashPatchURN = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
)

// TestCrashDuringProvisioning kills the service with SIGKILL while several clients provision
// users and groups through the SCIM API, as Entra ID and Okta do, then restarts it on the same
// SQLite file and checks what a crash may leave: each client's users and groups are exactly what
// its acknowledged writes made, or that and the one write it had in flight, never part of a
// write; the database is intact; no group lists a user that does not exist; and every user and
// group is found by filters on its attributes, so the rows filters search were written with
// the resource.
func TestCrashDuringProvisioning(t *testing.T) {
	bin := buildIDP(t)
	dir := t.TempDir()
	dsn := "sqlite:" + filepath.Join(dir, "idp.db")
	args := []string{"-addr", "127.0.0.1:0", "-db", dsn, "-webhook-allow-private-targets"}
	first := startProcess(t, bin, dir, nil, args...)
	require.Contains(t, first.vars, "scim_api_key", "the first start makes the demo tenant")
	keys := append([]string{first.vars["scim_api_key"]}, crashKeys(t, bin, dir, dsn, crashWorkers-1)...)
	// A webhook endpoint that outlives the service: delivery must go on after the restart.
	receiver := &crashReceiver{seen: map[string]bool{}}
	hooks := httptest.NewServer(receiver)
	t.Cleanup(hooks.Close)
	crashWebhook(t, bin, dir, dsn, hooks.URL+"/visid", receiver)
	hooked, err := sqlstore.Open(t.Context(), dsn)
	require.NoError(t, err)
	before := crashEvents(t, hooked.Backend().Events) // delivered from here on
	hooked.Close()

	// The kill comes after a random number of acknowledged requests, from a tenth of what the
	// clients may make to a half of it, so it falls in different writes each run.
	seed := uint64(time.Now().UnixNano())
	total := crashWorkers * crashSteps
	killAfter := total/10 + rand.New(rand.NewPCG(seed, 0)).IntN(total*2/5)
	t.Logf("seed %d: SIGKILL after %d acknowledged requests", seed, killAfter)

	transport := &http.Transport{MaxIdleConnsPerHost: crashWorkers}
	t.Cleanup(transport.CloseIdleConnections)
	run := &crashRun{
		base:      first.vars["scim_base_url"],
		client:    &http.Client{Transport: transport},
		killAfter: int64(killAfter),
		kill:      func() { _ = first.cmd.Process.Kill() },
	}
	workers := make([]*crashWorker, crashWorkers)
	var wg sync.WaitGroup
	for i := range workers {
		workers[i] = newCrashWorker(i, keys[i], seed)
		wg.Go(func() { run.provision(t.Context(), workers[i]) })
	}
	wg.Wait()
	first.kill()

	// The run was cut short by the kill, with requests on their way.
	require.True(t, run.killed.Load(), "the run ended before %d requests were acknowledged (%d were); requests:\n%s",
		killAfter, run.acked.Load(), crashRequests(workers))
	ws, ok := first.cmd.ProcessState.Sys().(syscall.WaitStatus)
	require.True(t, ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL,
		"the service died of SIGKILL, not before: %v", first.cmd.ProcessState)
	connErrors, inFlight := 0, 0
	for _, w := range workers {
		for _, r := range w.requests {
			switch {
			case r.err != nil:
				connErrors++
				if r.beforeKill {
					inFlight++
				}
			case r.status/100 != 2:
				t.Errorf("worker %d: %s %s answered %d before the kill: %s", w.n, r.method, r.path, r.status, r.answer)
			case r.invalid != "":
				t.Errorf("worker %d: %s %s: %s: %s", w.n, r.method, r.path, r.invalid, r.answer)
			}
		}
	}
	require.Positive(t, connErrors, "some requests met the dead service")
	t.Logf("killed after %d acknowledged requests; %d requests failed, %d of them under way at the kill",
		run.acked.Load(), connErrors, inFlight)

	// The restarted service opens the database and finds the demo tenant.
	second := startProcess(t, bin, dir, nil, args...)
	assert.Equal(t, []string{"tenant", "scim_base_url", "issuer"}, keysOf(second.lines), "the tenant exists")
	api := &crashAPI{base: second.vars["scim_base_url"], keys: keys}
	apiUsers := api.listAll(t, "/Users")
	apiGroups := api.listAll(t, "/Groups")
	crashCheckAPI(t, api, apiUsers, apiGroups)

	// Every event is in the log once, and replays to what the API serves; and the restarted
	// service delivers the rest of them to the endpoint.
	logged, err := sqlstore.Open(t.Context(), dsn)
	require.NoError(t, err)
	events := crashEvents(t, logged.Backend().Events)
	logged.Close()
	crashCheckEvents(t, events, apiUsers, apiGroups)
	var want []string
	for _, e := range events[len(before):] {
		want = append(want, webhooks.MessageID(e))
	}
	// A lease the killed service held keeps the endpoint from the new one until it runs out.
	require.Eventually(t, func() bool { return len(receiver.received()) >= len(want) }, webhooks.DefaultLease+30*time.Second, 100*time.Millisecond,
		"the endpoint gets every event after the restart (%d of %d)", len(receiver.received()), len(want))
	assert.Equal(t, want, receiver.received(), "every event once, in order")
	assert.Zero(t, receiver.bad, "every request signed")
	t.Logf("%d events in the log; the %d recorded after the endpoint was added were delivered", len(events), len(want))
	require.NoError(t, second.cmd.Process.Signal(os.Interrupt))
	select {
	case <-second.exited:
		require.NoError(t, second.err, "a graceful stop")
	case <-time.After(httpserve.ShutdownTimeout + 5*time.Second):
		t.Fatal("the service did not stop after SIGINT")
	}

	st, err := sqlstore.Open(t.Context(), dsn)
	require.NoError(t, err)
	defer st.Close()
	crashCheckDatabase(t, st)
	users, err := st.Backend().Users.List(t.Context(), demoTenant, store.Query{Count: -1})
	require.NoError(t, err)
	groups, err := st.Backend().Groups.List(t.Context(), demoTenant, store.Query{Count: -1})
	require.NoError(t, err)
	assert.ElementsMatch(t, crashIDs(apiUsers), crashUserIDs(users.Resources), "the API listed the stored users")
	assert.ElementsMatch(t, crashIDs(apiGroups), crashGroupIDs(groups.Resources), "the API listed the stored groups")

	observed := crashObserve(t, users.Resources, groups.Resources)
	var outcomes []string
	for i, w := range workers {
		outcomes = append(outcomes, w.check(t, observed[i]))
	}
	t.Logf("outcome of each worker's last request: %s", strings.Join(outcomes, "; "))
	crashCheckDerived(t, users.Resources, groups.Resources)
	t.Logf("after the restart: %d users besides %s, %d groups", len(users.Resources)-1, demoUser, len(groups.Resources))
}

// crashKeys issues n API keys of the demo tenant with the admin command, on the database the
// service is using.
func crashKeys(t *testing.T, bin, dir, dsn string, n int) []string {
	t.Helper()
	keys := make([]string, n)
	for i := range keys {
		cmd := exec.CommandContext(t.Context(), bin, "apikey", "create", "--tenant", demoTenant,
			"--name", fmt.Sprintf("provisioning worker %d", i+1), "-db", dsn)
		cmd.Dir = dir
		out, err := cmd.Output()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("apikey create: %v: %s", err, exit.Stderr)
		}
		require.NoError(t, err)
		for line := range strings.Lines(string(out)) {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "scim_api_key="); ok {
				keys[i] = v
			}
		}
		require.NotEmpty(t, keys[i], "apikey create printed no key: %s", out)
	}
	return keys
}

// crashRun is one provisioning run that the service's death ends.
type crashRun struct {
	base      string // the tenant's SCIM base URL
	client    *http.Client
	killAfter int64  // the kill comes once this many requests were acknowledged
	kill      func() // sends SIGKILL to the service
	acked     atomic.Int64
	killOnce  sync.Once
	killed    atomic.Bool
}

// provision makes w's requests one after the other until one fails or w has made crashSteps.
// The worker that finds killAfter requests acknowledged kills the service before its next
// request, while the other workers' requests are under way.
func (r *crashRun) provision(ctx context.Context, w *crashWorker) {
	for range crashSteps {
		if r.acked.Load() >= r.killAfter {
			r.killOnce.Do(func() {
				r.killed.Store(true)
				r.kill()
			})
		}
		step := w.next()
		req := r.send(ctx, w.key, step)
		w.requests = append(w.requests, req)
		if req.err != nil || req.status/100 != 2 || req.invalid != "" {
			w.pending = &step
			return
		}
		w.ack(step, req.createdID)
		r.acked.Add(1)
	}
}

// crashRequest is one request of the run, as sent, and what came back.
type crashRequest struct {
	method, path string
	body         []byte // as sent; nil for none
	status       int    // 0 without an answer
	answer       []byte // the answer's body, once read whole
	err          error  // the request failed or its answer was cut off
	invalid      string // what is wrong with a 2xx answer
	createdID    string // the id in the answer to a create
	// beforeKill is whether the request was sent before SIGKILL was: if it failed, the service
	// died while it was under way.
	beforeKill bool
}

// send makes the request of step with key.
func (r *crashRun) send(ctx context.Context, key string, step crashStep) crashRequest {
	out := crashRequest{method: step.method, path: step.path}
	var body io.Reader
	if step.body != nil {
		b, err := json.Marshal(step.body)
		if err != nil {
			out.err = err
			return out
		}
		out.body, body = b, bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, step.method, r.base+step.path, body)
	if err != nil {
		out.err = err
		return out
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/scim+json")
	}
	out.beforeKill = !r.killed.Load()
	resp, err := r.client.Do(req)
	if err != nil {
		out.err = err
		return out
	}
	defer resp.Body.Close()
	out.status = resp.StatusCode
	out.answer, out.err = io.ReadAll(resp.Body)
	if out.err == nil && step.creates != "" && out.status/100 == 2 {
		var created struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(out.answer, &created); err != nil || created.ID == "" {
			out.invalid = fmt.Sprintf("the answer to a create has no id (%v)", err)
		}
		out.createdID = created.ID
	}
	return out
}

// crashWorld is the state of one worker's resources: its users and groups by externalId.
// Values are replaced, never changed in place, so that a shallow copy is a snapshot.
type crashWorld struct {
	// Users are as stored, without id, meta and groups.
	Users  map[string]store.User
	Groups map[string]crashGroup
}

// crashGroup is a group as its worker knows it.
type crashGroup struct {
	DisplayName string
	Members     []string // the externalIds of its members, sorted; nil for none
}

func newCrashWorld() crashWorld {
	return crashWorld{Users: map[string]store.User{}, Groups: map[string]crashGroup{}}
}

func (c crashWorld) clone() crashWorld {
	return crashWorld{Users: maps.Clone(c.Users), Groups: maps.Clone(c.Groups)}
}

// crashMembers returns members sorted, and nil when there are none.
func crashMembers(members []string) []string {
	if len(members) == 0 {
		return nil
	}
	return slices.Sorted(slices.Values(members))
}

// crashStep is one request a worker makes and what it makes of the worker's resources.
type crashStep struct {
	method, path string
	body         any
	apply        func(*crashWorld)
	creates      string // the externalId of the resource a POST creates
}

// crashWorker is one provisioning client. Only it writes its users and groups, so what they
// must be after the crash follows from its own requests.
type crashWorker struct {
	n        int
	key      string
	rng      *rand.Rand
	acked    crashWorld        // what its acknowledged writes made
	ids      map[string]string // externalId → id, of the resources whose creation was acknowledged
	versions map[string]int    // externalId → the number of writes made to it
	users    int               // users created so far, acknowledged or not
	groups   int
	requests []crashRequest
	pending  *crashStep // the write whose answer never came
}

func newCrashWorker(n int, key string, seed uint64) *crashWorker {
	return &crashWorker{
		n: n, key: key, rng: rand.New(rand.NewPCG(seed, uint64(n)+1)),
		acked: newCrashWorld(), ids: map[string]string{}, versions: map[string]int{},
	}
}

// ack records an acknowledged step; id is the id of the resource it created, if any.
func (w *crashWorker) ack(step crashStep, id string) {
	step.apply(&w.acked)
	if step.creates != "" {
		w.ids[step.creates] = id
	}
}

// bump returns the next version of the resource ext.
func (w *crashWorker) bump(ext string) int {
	w.versions[ext]++
	return w.versions[ext]
}

// next chooses the worker's next request from the state of its acknowledged writes: mostly
// new users, then changes to users and groups in the proportions a directory's sync makes.
func (w *crashWorker) next() crashStep {
	users := slices.Sorted(maps.Keys(w.acked.Users))
	groups := slices.Sorted(maps.Keys(w.acked.Groups))
	pick := func(from []string) string { return from[w.rng.IntN(len(from))] }
	x := w.rng.IntN(100)
	switch {
	case len(users) < 4 || x < 30:
		return w.createUser()
	case x < 40 || len(groups) == 0:
		return w.createGroup(users)
	case x < 52:
		if step, ok := w.changeMembers(pick(groups), users); ok {
			return step
		}
		return w.createUser()
	case x < 60:
		g := pick(groups)
		if members := w.acked.Groups[g].Members; len(members) > 0 {
			return w.removeMember(g, pick(members))
		}
		return w.putGroup(g, users)
	case x < 72:
		return w.patchUser(pick(users))
	case x < 84:
		return w.putUser(pick(users))
	case x < 94:
		return w.deleteUser(pick(users))
	case x < 97:
		return w.putGroup(pick(groups), users)
	default:
		return w.deleteGroup(pick(groups))
	}
}

// crashUser is version v of the user ext, with every attribute an enterprise directory sends.
func crashUser(ext, userName string, v int) store.User {
	u := store.User{
		ExternalID:        ext,
		UserName:          userName,
		Active:            v%4 != 3,
		DisplayName:       fmt.Sprintf("Crash %s v%d", ext, v),
		Title:             fmt.Sprintf("Engineer %s v%d", ext, v),
		UserType:          []string{"Employee", "Contractor"}[v%2],
		PreferredLanguage: "en-GB",
		Locale:            "en-GB",
		Timezone:          "Europe/Stockholm",
		Name: store.Name{
			GivenName:  "Given " + ext,
			FamilyName: fmt.Sprintf("Family v%d", v),
			Formatted:  fmt.Sprintf("Given %s Family v%d", ext, v),
		},
		Emails: []store.MultiValue{
			{Value: crashWorkEmail(ext, v), Type: "work", Primary: true},
			{Value: ext + "@home.crash.example", Type: "home"},
		},
		Enterprise: store.EnterpriseUser{
			EmployeeNumber: "E-" + ext,
			CostCenter:     fmt.Sprintf("CC-%d", v),
			Organization:   "Crash Test Org",
			Division:       fmt.Sprintf("Division v%d", v),
			Department:     fmt.Sprintf("Department %s v%d", ext, v),
		},
	}
	if v%2 == 0 {
		u.PhoneNumbers = crashPhones(ext, v)
	}
	if v%3 == 1 {
		u.Addresses = []store.Address{{
			Type: "work", Primary: true, StreetAddress: fmt.Sprintf("%d Crash Street", v+1),
			Locality: "Stockholm", PostalCode: "111 22", Country: "SE",
			Formatted: fmt.Sprintf("%d Crash Street, 111 22 Stockholm, SE", v+1),
		}}
	}
	return u
}

func crashWorkEmail(ext string, v int) string {
	return fmt.Sprintf("%s.v%d@work.crash.example", ext, v)
}

func crashPhones(ext string, v int) []store.MultiValue {
	return []store.MultiValue{
		{Value: fmt.Sprintf("+46 8 555 %s %d", ext, v), Type: "work", Primary: true},
		{Value: fmt.Sprintf("+46 70 555 %s %d", ext, v), Type: "mobile"},
	}
}

// crashUserBody is the SCIM body of u.
func crashUserBody(u store.User) map[string]any {
	body := map[string]any{
		"schemas":           []string{schema.UserURN, schema.EnterpriseUserURN},
		"externalId":        u.ExternalID,
		"userName":          u.UserName,
		"active":            u.Active,
		"displayName":       u.DisplayName,
		"title":             u.Title,
		"userType":          u.UserType,
		"preferredLanguage": u.PreferredLanguage,
		"locale":            u.Locale,
		"timezone":          u.Timezone,
		"name": map[string]any{
			"givenName": u.Name.GivenName, "familyName": u.Name.FamilyName, "formatted": u.Name.Formatted,
		},
		"emails": crashMultiValues(u.Emails),
		schema.EnterpriseUserURN: map[string]any{
			"employeeNumber": u.Enterprise.EmployeeNumber,
			"costCenter":     u.Enterprise.CostCenter,
			"organization":   u.Enterprise.Organization,
			"division":       u.Enterprise.Division,
			"department":     u.Enterprise.Department,
		},
	}
	if len(u.PhoneNumbers) > 0 {
		body["phoneNumbers"] = crashMultiValues(u.PhoneNumbers)
	}
	if len(u.Addresses) > 0 {
		var addrs []any
		for _, a := range u.Addresses {
			addrs = append(addrs, map[string]any{
				"type": a.Type, "primary": a.Primary, "streetAddress": a.StreetAddress, "locality": a.Locality,
				"postalCode": a.PostalCode, "country": a.Country, "formatted": a.Formatted,
			})
		}
		body["addresses"] = addrs
	}
	return body
}

func crashMultiValues(vs []store.MultiValue) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		m := map[string]any{"value": v.Value, "type": v.Type}
		if v.Primary {
			m["primary"] = true
		}
		out[i] = m
	}
	return out
}

func crashPatch(ops ...map[string]any) map[string]any {
	return map[string]any{"schemas": []string{crashPatchURN}, "Operations": ops}
}

func crashOp(op, path string, value any) map[string]any {
	m := map[string]any{"op": op, "path": path}
	if value != nil {
		m["value"] = value
	}
	return m
}

func (w *crashWorker) createUser() crashStep {
	ext := fmt.Sprintf("w%d-u%d", w.n, w.users)
	w.users++
	u := crashUser(ext, ext+"@crash.example", 0)
	return crashStep{
		method: http.MethodPost, path: "/Users", body: crashUserBody(u), creates: ext,
		apply: func(c *crashWorld) { c.Users[ext] = u },
	}
}

// putUser replaces every attribute of the user, keeping its userName, as Entra ID's full
// updates do.
func (w *crashWorker) putUser(ext string) crashStep {
	u := crashUser(ext, w.acked.Users[ext].UserName, w.bump(ext))
	return crashStep{
		method: http.MethodPut, path: "/Users/" + w.ids[ext], body: crashUserBody(u),
		apply: func(c *crashWorld) { c.Users[ext] = u },
	}
}

// patchUser changes several attributes of the user in one request, the userName among them
// every third time.
func (w *crashWorker) patchUser(ext string) crashStep {
	v := w.bump(ext)
	u := w.acked.Users[ext]
	u.Title = fmt.Sprintf("Engineer %s v%d", ext, v)
	u.Enterprise.Department = fmt.Sprintf("Department %s v%d", ext, v)
	u.Active = v%2 == 0
	u.Emails = slices.Clone(u.Emails)
	u.Emails[0].Value = crashWorkEmail(ext, v)
	ops := []map[string]any{
		crashOp("replace", "title", u.Title),
		crashOp("replace", schema.EnterpriseUserURN+":department", u.Enterprise.Department),
		crashOp("replace", `emails[type eq "work"].value`, u.Emails[0].Value),
		crashOp("replace", "active", u.Active),
	}
	if v%3 == 0 {
		u.UserName = fmt.Sprintf("%s.r%d@crash.example", ext, v)
		ops = append(ops, crashOp("replace", "userName", u.UserName))
	}
	if v%2 == 1 {
		u.PhoneNumbers = crashPhones(ext, v)
		ops = append(ops, crashOp("replace", "phoneNumbers", crashMultiValues(u.PhoneNumbers)))
	}
	return crashStep{
		method: http.MethodPatch, path: "/Users/" + w.ids[ext], body: crashPatch(ops...),
		apply: func(c *crashWorld) { c.Users[ext] = u },
	}
}

// deleteUser deletes the user, which leaves its groups.
func (w *crashWorker) deleteUser(ext string) crashStep {
	return crashStep{
		method: http.MethodDelete, path: "/Users/" + w.ids[ext],
		apply: func(c *crashWorld) {
			delete(c.Users, ext)
			for gext, g := range c.Groups {
				if slices.Contains(g.Members, ext) {
					g.Members = crashMembers(slices.DeleteFunc(slices.Clone(g.Members), func(m string) bool { return m == ext }))
					c.Groups[gext] = g
				}
			}
		},
	}
}

// someUsers returns up to n of users, chosen at random, in random order.
func (w *crashWorker) someUsers(users []string, n int) []string {
	users = slices.Clone(users)
	w.rng.Shuffle(len(users), func(i, j int) { users[i], users[j] = users[j], users[i] })
	return users[:min(n, len(users))]
}

func (w *crashWorker) memberValues(exts []string) []any {
	out := make([]any, len(exts))
	for i, ext := range exts {
		out[i] = map[string]any{"value": w.ids[ext]}
	}
	return out
}

func (w *crashWorker) createGroup(users []string) crashStep {
	ext := fmt.Sprintf("w%d-g%d", w.n, w.groups)
	w.groups++
	g := crashGroup{DisplayName: fmt.Sprintf("w%d group %d", w.n, w.groups-1)}
	members := w.someUsers(users, 1+w.rng.IntN(4))
	g.Members = crashMembers(members)
	return crashStep{
		method: http.MethodPost, path: "/Groups", creates: ext,
		body: map[string]any{
			"schemas": []string{schema.GroupURN}, "externalId": ext, "displayName": g.DisplayName,
			"members": w.memberValues(members),
		},
		apply: func(c *crashWorld) { c.Groups[ext] = g },
	}
}

// changeMembers adds one or two users to the group and, half the time, removes a member in the
// same request, as Entra ID does; ok is false when every user is a member.
func (w *crashWorker) changeMembers(gext string, users []string) (step crashStep, ok bool) {
	g := w.acked.Groups[gext]
	outside := slices.DeleteFunc(slices.Clone(users), func(u string) bool { return slices.Contains(g.Members, u) })
	if len(outside) == 0 {
		return crashStep{}, false
	}
	add := w.someUsers(outside, 1+w.rng.IntN(2))
	ops := []map[string]any{crashOp("add", "members", w.memberValues(add))}
	members := append(slices.Clone(g.Members), add...)
	if len(g.Members) > 0 && w.rng.IntN(2) == 0 {
		gone := g.Members[w.rng.IntN(len(g.Members))]
		ops = append(ops, crashOp("remove", "members", w.memberValues([]string{gone})))
		members = slices.DeleteFunc(members, func(m string) bool { return m == gone })
	}
	g.Members = crashMembers(members)
	return crashStep{
		method: http.MethodPatch, path: "/Groups/" + w.ids[gext], body: crashPatch(ops...),
		apply: func(c *crashWorld) { c.Groups[gext] = g },
	}, true
}

// removeMember removes one member with a value filter in the path, as Okta does.
func (w *crashWorker) removeMember(gext, member string) crashStep {
	g := w.acked.Groups[gext]
	g.Members = crashMembers(slices.DeleteFunc(slices.Clone(g.Members), func(m string) bool { return m == member }))
	return crashStep{
		method: http.MethodPatch, path: "/Groups/" + w.ids[gext],
		body:  crashPatch(crashOp("remove", fmt.Sprintf("members[value eq %q]", w.ids[member]), nil)),
		apply: func(c *crashWorld) { c.Groups[gext] = g },
	}
}

// putGroup renames the group and replaces its members.
func (w *crashWorker) putGroup(gext string, users []string) crashStep {
	v := w.bump(gext)
	members := w.someUsers(users, w.rng.IntN(5))
	g := crashGroup{
		DisplayName: fmt.Sprintf("%s r%d", strings.Split(w.acked.Groups[gext].DisplayName, " r")[0], v),
		Members:     crashMembers(members),
	}
	return crashStep{
		method: http.MethodPut, path: "/Groups/" + w.ids[gext],
		body: map[string]any{
			"schemas": []string{schema.GroupURN}, "externalId": gext, "displayName": g.DisplayName,
			"members": w.memberValues(members),
		},
		apply: func(c *crashWorld) { c.Groups[gext] = g },
	}
}

func (w *crashWorker) deleteGroup(gext string) crashStep {
	return crashStep{
		method: http.MethodDelete, path: "/Groups/" + w.ids[gext],
		apply: func(c *crashWorld) { delete(c.Groups, gext) },
	}
}

// crashObservation is what the store holds of one worker's resources.
type crashObservation struct {
	world crashWorld
	ids   map[string]string // externalId → id
}

var (
	crashUserRE  = regexp.MustCompile(`^w(\d+)-u\d+$`)
	crashGroupRE = regexp.MustCompile(`^w(\d+)-g\d+$`)
)

// crashWorkerOf returns the number of the worker whose externalId ext is, by re.
func crashWorkerOf(re *regexp.Regexp, ext string) (int, bool) {
	m := re.FindStringSubmatch(ext)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil && n < crashWorkers
}

// crashObserve sorts the stored users and groups by the worker that wrote them.
func crashObserve(t *testing.T, users []store.User, groups []store.Group) []crashObservation {
	t.Helper()
	out := make([]crashObservation, crashWorkers)
	for i := range out {
		out[i] = crashObservation{world: newCrashWorld(), ids: map[string]string{}}
	}
	extOf := map[string]string{}
	for _, u := range users {
		if u.UserName == demoUser {
			continue
		}
		n, ok := crashWorkerOf(crashUserRE, u.ExternalID)
		if !ok {
			t.Errorf("a user nobody made: %+v", u)
			continue
		}
		if other, dup := out[n].ids[u.ExternalID]; dup {
			t.Errorf("users %s and %s are both %s", other, u.ID, u.ExternalID)
		}
		extOf[u.ID] = u.ExternalID
		out[n].ids[u.ExternalID] = u.ID
		u.ID, u.Meta, u.Groups = "", store.Meta{}, nil
		out[n].world.Users[u.ExternalID] = u
	}
	for _, g := range groups {
		n, ok := crashWorkerOf(crashGroupRE, g.ExternalID)
		if !ok {
			t.Errorf("a group nobody made: %+v", g)
			continue
		}
		if other, dup := out[n].ids[g.ExternalID]; dup {
			t.Errorf("groups %s and %s are both %s", other, g.ID, g.ExternalID)
		}
		var members []string
		for _, mem := range g.Members {
			ext, ok := extOf[mem.Value]
			if !ok {
				t.Errorf("group %s (%s) lists %s, which is not a user", g.ID, g.DisplayName, mem.Value)
				ext = "missing " + mem.Value
			}
			members = append(members, ext)
		}
		out[n].ids[g.ExternalID] = g.ID
		out[n].world.Groups[g.ExternalID] = crashGroup{DisplayName: g.DisplayName, Members: crashMembers(members)}
	}
	return out
}

// check compares what the store holds of the worker's resources with what its writes made: the
// state of its acknowledged writes or, when a write was under way, possibly the state after it.
// It returns which it found.
func (w *crashWorker) check(t *testing.T, got crashObservation) string {
	t.Helper()
	for ext, id := range w.ids {
		if stored, ok := got.ids[ext]; ok {
			assert.Equal(t, id, stored, "worker %d: %s keeps the id its creation answered", w.n, ext)
		}
	}
	what := fmt.Sprintf("worker %d, no request under way", w.n)
	if w.pending != nil {
		what = fmt.Sprintf("worker %d, %s %s", w.n, w.pending.method, w.pending.path)
	}
	before := crashDiff(w.acked, got.world)
	if len(before) == 0 {
		return what + ": not written"
	}
	msg := fmt.Sprintf("worker %d: the store does not hold what its acknowledged writes made:\n%s",
		w.n, strings.Join(before, "\n"))
	if w.pending != nil {
		after := w.acked.clone()
		w.pending.apply(&after)
		diff := crashDiff(after, got.world)
		if len(diff) == 0 {
			return what + ": written"
		}
		last := w.requests[len(w.requests)-1]
		msg += fmt.Sprintf("\nnor what they and the request under way make, %s %s %s (status %d, error %v):\n%s",
			last.method, last.path, last.body, last.status, last.err, strings.Join(diff, "\n"))
	}
	t.Error(msg)
	return what + ": MISMATCH"
}

// crashDiff lists the resources that differ between want and got, with the fields that differ.
func crashDiff(want, got crashWorld) []string {
	var out []string
	for _, ext := range crashExts(want.Users, got.Users) {
		w, inWant := want.Users[ext]
		g, inGot := got.Users[ext]
		switch {
		case !inGot:
			out = append(out, fmt.Sprintf("  user %s: missing, want %+v", ext, w))
		case !inWant:
			out = append(out, fmt.Sprintf("  user %s: present, want it absent: %+v", ext, g))
		default:
			wv, gv := reflect.ValueOf(w), reflect.ValueOf(g)
			for i := range wv.NumField() {
				if !reflect.DeepEqual(wv.Field(i).Interface(), gv.Field(i).Interface()) {
					out = append(out, fmt.Sprintf("  user %s: %s is %+v, want %+v",
						ext, wv.Type().Field(i).Name, gv.Field(i).Interface(), wv.Field(i).Interface()))
				}
			}
		}
	}
	for _, ext := range crashExts(want.Groups, got.Groups) {
		w, inWant := want.Groups[ext]
		g, inGot := got.Groups[ext]
		switch {
		case !inGot:
			out = append(out, fmt.Sprintf("  group %s: missing, want %+v", ext, w))
		case !inWant:
			out = append(out, fmt.Sprintf("  group %s: present, want it absent: %+v", ext, g))
		case !reflect.DeepEqual(w, g):
			out = append(out, fmt.Sprintf("  group %s: %+v, want %+v", ext, g, w))
		}
	}
	return out
}

// crashExts returns the keys of a and b, each once, sorted.
func crashExts[V any](a, b map[string]V) []string {
	exts := slices.Collect(maps.Keys(a))
	for ext := range b {
		if _, ok := a[ext]; !ok {
			exts = append(exts, ext)
		}
	}
	slices.Sort(exts)
	return exts
}

// crashCheckDatabase checks the SQLite file itself: its structure, its foreign keys, and that
// no membership or filter row outlived its user or group.
func crashCheckDatabase(t *testing.T, st *sqlstore.Store) {
	t.Helper()
	rows := func(query string) []string {
		t.Helper()
		r, err := st.DB().QueryContext(t.Context(), query)
		require.NoError(t, err, query)
		defer r.Close()
		cols, err := r.Columns()
		require.NoError(t, err)
		var out []string
		for r.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			require.NoError(t, r.Scan(ptrs...))
			out = append(out, fmt.Sprint(vals...))
		}
		require.NoError(t, r.Err())
		return out
	}
	assert.Equal(t, []string{"ok"}, rows("PRAGMA integrity_check"))
	assert.Empty(t, rows("PRAGMA foreign_key_check"), "rows whose foreign key points nowhere")
	assert.Empty(t, rows(`SELECT group_id, user_id FROM members m
		WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.tenant = m.tenant AND u.id = m.user_id)`), "memberships of missing users")
	assert.Empty(t, rows(`SELECT group_id, user_id FROM members m
		WHERE NOT EXISTS (SELECT 1 FROM groups g WHERE g.tenant = m.tenant AND g.id = m.group_id)`), "memberships of missing groups")
	assert.Empty(t, rows(`SELECT DISTINCT rid FROM attrs a WHERE kind = 'u'
		AND NOT EXISTS (SELECT 1 FROM users u WHERE u.tenant = a.tenant AND u.id = a.rid)`), "filter rows of missing users")
	assert.Empty(t, rows(`SELECT DISTINCT rid FROM attrs a WHERE kind = 'g'
		AND NOT EXISTS (SELECT 1 FROM groups g WHERE g.tenant = a.tenant AND g.id = a.rid)`), "filter rows of missing groups")
}

// crashCheckDerived checks what the store derives from memberships: a user's groups are the
// groups that list it, with their current names, and a group's members carry their current
// userNames.
func crashCheckDerived(t *testing.T, users []store.User, groups []store.Group) {
	t.Helper()
	userNames := map[string]string{}
	for _, u := range users {
		userNames[u.ID] = u.UserName
	}
	want := map[string][]store.GroupRef{}
	for _, g := range groups {
		for _, m := range g.Members {
			assert.Equal(t, userNames[m.Value], m.Display, "group %s: member %s's display is its userName", g.ID, m.Value)
			want[m.Value] = append(want[m.Value], store.GroupRef{Value: g.ID, Display: g.DisplayName, Type: "direct"})
		}
	}
	for _, u := range users {
		assert.ElementsMatch(t, want[u.ID], u.Groups, "user %s (%s): its groups", u.ID, u.UserName)
	}
}

// crashAPI makes the checks' requests to the restarted service, taking the keys in turn so
// that none runs out of its budget.
type crashAPI struct {
	base      string
	keys      []string
	n         int // requests made
	explained int // failed filters taken apart
}

// get makes a GET of path with q and returns the answer, which must be 200.
func (a *crashAPI) get(t *testing.T, path string, q url.Values) map[string]any {
	t.Helper()
	a.n++
	resp, body := scimRequest(t, http.MethodGet, a.base+path+"?"+q.Encode(), a.keys[a.n%len(a.keys)], "")
	require.Equal(t, http.StatusOK, resp.StatusCode, "GET %s?%s: %v", path, q.Encode(), body)
	return body
}

// listAll pages through the list at path and returns every resource.
func (a *crashAPI) listAll(t *testing.T, path string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for {
		page := a.get(t, path, url.Values{"startIndex": {strconv.Itoa(len(out) + 1)}, "count": {"100"}})
		resources, _ := page["Resources"].([]any)
		for _, r := range resources {
			out = append(out, r.(map[string]any))
		}
		total, _ := page["totalResults"].(float64)
		if len(resources) == 0 || len(out) >= int(total) {
			return out
		}
	}
}

// find returns the ids of the resources at path that match the filter f.
func (a *crashAPI) find(t *testing.T, path, f string) []string {
	t.Helper()
	page := a.get(t, path, url.Values{"filter": {f}, "count": {"100"}, "attributes": {"id"}})
	resources, _ := page["Resources"].([]any)
	total, _ := page["totalResults"].(float64)
	require.Len(t, resources, int(total), "%s: one page holds them all", f)
	ids := []string{}
	for _, r := range resources {
		ids = append(ids, crashString(r, "id"))
	}
	return ids
}

// findOne checks that the filter of all parts finds exactly the resource id at path, and, for
// the first few that fail, which part fails.
func (a *crashAPI) findOne(t *testing.T, path, id string, parts []string) {
	t.Helper()
	f := strings.Join(parts, " and ")
	if got := a.find(t, path, f); !assert.Equal(t, []string{id}, got, "%s %s", path, f) && a.explained < 5 {
		a.explained++
		for _, part := range parts {
			assert.Equal(t, []string{id}, a.find(t, path, part), "%s %s", path, part)
		}
	}
}

// crashCheckAPI checks what the restarted service serves: every member of a group is a user it
// lists, and every user and group is found through filters on its attributes, which the store
// answers from rows it writes with the resource: userName, externalId, emails, title, the
// enterprise attributes, and the memberships both ways, with the current userNames and group
// names.
func crashCheckAPI(t *testing.T, api *crashAPI, users, groups []map[string]any) {
	t.Helper()
	userIDs := map[string]bool{}
	for _, u := range users {
		userIDs[crashString(u, "id")] = true
	}
	groupsOf := map[string][]string{} // user id → the ids of its groups
	for _, g := range groups {
		gid := crashString(g, "id")
		var members []string
		for _, m := range crashList(g, "members") {
			uid := crashString(m, "value")
			assert.True(t, userIDs[uid], "group %s lists %s, which is not a user", gid, uid)
			members = append(members, uid)
			groupsOf[uid] = append(groupsOf[uid], gid)
		}
		name := crashString(g, "displayName")
		api.findOne(t, "/Groups", gid, []string{crashEq("displayName", name), crashEq("externalId", crashString(g, "externalId"))})
		assert.ElementsMatch(t, members, api.find(t, "/Users", crashEq("groups.value", gid)+" and "+crashEq("groups.display", name)),
			"the members of group %s (%s)", gid, name)
	}
	enterprise := schema.EnterpriseUserURN + ":"
	for _, u := range users {
		id, userName := crashString(u, "id"), crashString(u, "userName")
		parts := []string{crashEq("userName", userName)}
		for _, attr := range []string{"externalId", "title"} {
			if v := crashString(u, attr); v != "" {
				parts = append(parts, crashEq(attr, v))
			}
		}
		for _, e := range crashList(u, "emails") {
			parts = append(parts, crashEq("emails.value", crashString(e, "value")))
		}
		ext, _ := u[schema.EnterpriseUserURN].(map[string]any)
		for _, attr := range []string{"employeeNumber", "department"} {
			if v := crashString(ext, attr); v != "" {
				parts = append(parts, crashEq(enterprise+attr, v))
			}
		}
		api.findOne(t, "/Users", id, parts)
		assert.ElementsMatch(t, groupsOf[id], api.find(t, "/Groups", crashEq("members.value", id)+" and "+crashEq("members.display", userName)),
			"the groups of user %s (%s)", id, userName)
	}
}

func crashEq(attr, value string) string { return fmt.Sprintf("%s eq %q", attr, value) }

// crashString is the string m[key] of a JSON object m, or "".
func crashString(m any, key string) string {
	obj, _ := m.(map[string]any)
	s, _ := obj[key].(string)
	return s
}

// crashList is the array of objects m[key] of a JSON object m.
func crashList(m map[string]any, key string) []map[string]any {
	list, _ := m[key].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, el := range list {
		obj, _ := el.(map[string]any)
		out = append(out, obj)
	}
	return out
}

func crashIDs(resources []map[string]any) []string {
	out := []string{}
	for _, r := range resources {
		out = append(out, r["id"].(string))
	}
	return out
}

func crashUserIDs(users []store.User) []string {
	out := []string{}
	for _, u := range users {
		out = append(out, u.ID)
	}
	return out
}

func crashGroupIDs(groups []store.Group) []string {
	out := []string{}
	for _, g := range groups {
		out = append(out, g.ID)
	}
	return out
}

// crashRequests lists every worker's requests, for a failure's message.
func crashRequests(workers []*crashWorker) string {
	var b strings.Builder
	for _, w := range workers {
		for _, r := range w.requests {
			fmt.Fprintf(&b, "worker %d: %s %s %s → %d %s %v\n", w.n, r.method, r.path, r.body, r.status, r.answer, r.err)
		}
	}
	return b.String()
}
