package scimsvc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/visid/visid/ratelimit"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/memstore"
	"github.com/visid/visid/store/schema"
)

// pathSeeds are PATCH paths as Entra ID, Okta and RFC 7644 write them, and some broken ones.
var pathSeeds = []string{
	`userName`,
	`active`,
	`displayName`,
	`name.givenName`,
	`name.familyName`,
	`emails`,
	`emails[type eq "work"].value`,
	`emails[type eq "work"]`,
	`emails[type eq "work" and primary eq true].value`,
	`emails[value co "@example.com" or not (type eq "home")].display`,
	`phoneNumbers[type eq "mobile"].value`,
	`phoneNumbers[type eq "fax"].value`,
	`addresses[type eq "work"].streetAddress`,
	`addresses[type eq "work"].postalCode`,
	`urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager`,
	`urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value`,
	`urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department`,
	`urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber`,
	`urn:ietf:params:scim:schemas:core:2.0:User:userName`,
	`urn:ietf:params:scim:schemas:core:2.0:User:emails[type eq "work"].value`,
	`roles[primary eq "True"].value`,
	`externalId`,
	`external_id`,
	`members`,
	`members[value eq "2819c223-7f76-453a-919d-413861904646"]`,
	`members[value eq "x"].value`,
	`urn:ietf:params:scim:schemas:core:2.0:Group:members[value eq "x"]`,
	`id`,
	`meta.created`,
	`groups`,
	`password`,
	``,
	` `,
	`[`,
	`]`,
	`.`,
	`emails[`,
	`emails[]`,
	`emails[type eq "work"`,
	`emails[type eq "wo]rk"].value`,
	`emails[type eq "\"]"].value`,
	`emails[type eq "work"]x`,
	`emails[type eq "work"].`,
	`emails[type eq "work"].nosuch`,
	`emails[type eq "work"][type eq "home"]`,
	`emails[emails[type eq "x"]]`,
	`name[givenName eq "x"].familyName`,
	`urn:`,
	`urn:ietf:params:scim:schemas:extension:enterprise:2.0:User`,
	`urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:`,
	`urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager[value eq "x"]`,
	"emails[type eq \"\xff\"].value",
}

// patchValues are the values fuzzed paths are applied with.
var patchValues = []any{
	nil,
	"x@example.com",
	"True",
	true,
	json.Number("42"),
	object{"value": "x@example.com", "type": "work", "primary": true},
	[]any{object{"value": "y@example.com", "primary": "true"}, "z@example.com"},
	[]any{json.Number("1")},
}

// fuzzUserTree is the tree of a user with a value in every kind of attribute.
func fuzzUserTree() object {
	u := store.User{
		ID: "user_1", UserName: "ann@example.com", Active: true, DisplayName: "Ann",
		Name:         store.Name{GivenName: "Ann", FamilyName: "Lee"},
		Emails:       []store.MultiValue{{Value: "ann@example.com", Type: "work", Primary: true}, {Value: "ann@home.example", Type: "home"}},
		PhoneNumbers: []store.MultiValue{{Value: "+1 555 0100", Type: "work"}},
		Addresses:    []store.Address{{Locality: "Oslo", Type: "work", Primary: true}},
		Roles:        []store.MultiValue{{Value: "admin"}},
		Enterprise:   store.EnterpriseUser{Department: "R&D", Manager: store.Manager{Value: "user_2"}},
	}
	return toTree(schema.User(), &u)
}

func fuzzGroupTree() object {
	g := store.Group{ID: "group_1", DisplayName: "Staff", Members: []store.Member{{Value: "user_1", Display: "ann", Type: "User"}, {Value: "user_2"}}}
	return toTree(schema.Group(), &g)
}

// requireBadRequest fails unless err is nil or an *Error with status 400 and, when scimType is
// set, that scimType.
func requireBadRequest(t *testing.T, what string, err error, scimTypes ...string) {
	t.Helper()
	if err == nil {
		return
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%s: error %T %v is not a *Error", what, err, err)
	}
	if e.Status != http.StatusBadRequest {
		t.Fatalf("%s: status %d, want 400: %v", what, e.Status, e)
	}
	if len(scimTypes) > 0 && !slices.Contains(scimTypes, e.ScimType) {
		t.Fatalf("%s: scimType %q, want one of %q: %v", what, e.ScimType, scimTypes, e)
	}
}

// FuzzPatchPath parses arbitrary PATCH paths, and applies the ones that parse to a full user or
// group: nothing panics, a path that does not parse is a 400 invalidPath, and applying an
// operation fails, if at all, with a 400.
func FuzzPatchPath(f *testing.F) {
	for _, s := range pathSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		for _, rt := range []*schema.ResourceType{schema.User(), schema.Group()} {
			p, err := parsePath(path, rt, filter.Limits{})
			if err != nil {
				var e *Error
				if !errors.As(err, &e) || e.Status != http.StatusBadRequest || e.ScimType != typeInvalidPath {
					t.Fatalf("parsePath(%q): %T %v, want a 400 invalidPath *Error", path, err, err)
				}
				if e.Detail == "" {
					t.Fatalf("parsePath(%q): empty detail", path)
				}
				continue
			}
			if p.attr == nil {
				t.Fatalf("parsePath(%q): no attribute", path)
			}
			if p.sub != nil && p.attr.Sub(p.sub.Name) != p.sub {
				t.Fatalf("parsePath(%q): sub-attribute %s is not one of %s", path, p.sub.Name, p.attr.Name)
			}
			for _, op := range []string{"add", "replace", "remove"} {
				for _, v := range patchValues {
					tree := fuzzUserTree()
					if rt == schema.Group() {
						tree = fuzzGroupTree()
					}
					err := applyPatch(context.Background(), rt, tree, []patchOp{{op: op, path: p, value: v, raw: path}}, valueLimits{})
					requireBadRequest(t, op+" "+path, err)
					if err == nil {
						// What is left must still be a tree the stores can take.
						if rt == schema.User() {
							_ = userFromTree(tree)
						} else {
							_ = groupFromTree(tree)
						}
						onePrimary(multiValued(rt), tree, nil)
					}
				}
			}
		}
	})
}

// bodySeeds are request bodies as Entra ID and Okta send them, and broken ones.
var bodySeeds = []string{
	// Entra ID: create user
	`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],"externalId":"0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef","userName":"Test_User_ab6490ee-1e48-479e-a20b-2d77186b5dd1","active":true,"emails":[{"primary":true,"type":"work","value":"Test_User_fd0ea19b-0777-472c-9f96-4f70d2226f2b@testuser.com"}],"meta":{"resourceType":"User"},"name":{"formatted":"givenName familyName","familyName":"familyName","givenName":"givenName"},"roles":[]}`,
	`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],"externalId":"58342554-38d6-4ec8-948c-50044d0a33fd","userName":"Test_User_feed3ace-693c-4e5a-82e2-694be1b39934","active":true,"addresses":[{"formatted":"99 Main St","locality":"Redmond","type":"work","postalCode":"98052","primary":true,"region":"WA","country":"US","streetAddress":"99 Main St"}],"displayName":"Test User","nickName":"tu","emails":[{"primary":true,"type":"work","value":"Test_User_22370c1a@testuser.com"}],"phoneNumbers":[{"primary":true,"type":"work","value":"123-456-7890"},{"type":"mobile","value":"555-0100"}],"title":"Manager","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"department":"R&D","employeeNumber":"701984","costCenter":"4130","organization":"Universal Studios","division":"Theme Park","manager":{"value":"Test_User_53ecbf8b"}},"roles":[{"primary":"False","type":"WindowsAzureActiveDirectoryRole","value":"Admin"}]}`,
	// Entra ID: PATCH user
	`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"Replace","path":"emails[type eq \"work\"].value","value":"updatedEmail@microsoft.com"},{"op":"Replace","path":"name.familyName","value":"updatedFamilyName"}]}`,
	`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"Add","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager","value":"2819c223-7f76-453a-919d-413861904646"}]}`,
	`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"Remove","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager"}]}`,
	`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"Replace","path":"active","value":"False"}]}`,
	`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"Replace","path":"userName","value":"5b50642d-79fc-4410-9e90-4c077cdd1a59@testuser.com"},{"op":"Add","path":"phoneNumbers[type eq \"mobile\"].value","value":"555-0101"},{"op":"Add","path":"addresses[type eq \"work\"].locality","value":"Oslo"}]}`,
	`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"Add","path":"members","value":[{"value":"f648f8d5ea4e4cd38e9c"}]}]}`,
	`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"Remove","path":"members","value":[{"value":"f648f8d5ea4e4cd38e9c"}]}]}`,
	// Okta: create user, PATCH user
	`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"test.user@okta.local","name":{"givenName":"Test","familyName":"User"},"emails":[{"primary":true,"value":"test.user@okta.local","type":"work"}],"displayName":"Test User","locale":"en-US","externalId":"00ujl29u0le5T6Aj10h7","groups":[],"password":"1mz050nq","active":true}`,
	`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","value":{"active":false}}]}`,
	`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","value":{"id":"23a35c27-23d3-4c03-b4c5-6443c09e7173","displayName":"Test SCIMv2"}}]}`,
	`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","value":{"name.givenName":"Another","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department":"Sales","password":"x"}}]}`,
	`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"remove","path":"members[value eq \"89bb1940-b905-4575-9e7f-6f887cfb368e\"]"},{"op":"add","path":"members","value":[{"value":"23a35c27-23d3-4c03-b4c5-6443c09e7173","display":"test.user@okta.local"}]}]}`,
	// Okta: create group
	`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"Test SCIMv2","members":[]}`,
	// Broken
	``,
	`null`,
	`[]`,
	`{}`,
	`{"userName":1}`,
	`{"userName":"a"}{}`,
	`{"userName":"a"`,
	`{"userName":"\ud800"}`,
	`{"Operations":[{"op":"remove"}]}`,
	`{"Operations":[{"op":"replace","path":"emails[type eq \"work\"","value":"x"}]}`,
	`{"Operations":[{"op":"add","path":"emails","value":[{"value":"a","primary":true},{"value":"b","primary":true}]}]}`,
	`{"Operations":[{"op":"replace","path":"emails[value co \"z\"].value","value":"x"}]}`,
	`{"Operations":[{"op":"replace","path":"id","value":"x"}]}`,
	`{"Operations":"nope"}`,
	`{"Operations":[null,1,"x",{}]}`,
	`{"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"manager":"x"},"userName":"b"}`,
	`{"urn:ietf:params:scim:schemas:core:2.0:User":{"userName":"c"},"emails":"c@example.com"}`,
	`{"userName":"d","name.givenName":"x","name":{"givenName":{"x":1}}}`,
	// Duplicate keys, and strings that are not text
	`{"userName":"e","active":true,"ACTIVE":false}`,
	`{"userName":"e","userName":"f"}`,
	`{"Operations":[{"op":"replace","path":"active","value":false}],"operations":[]}`,
	`{"Operations":[{"op":"replace","value":{"name":{"givenName":"A"},"name.givenName":"B"}}]}`,
	`{"userName":"g\u0000"}`,
	`{"userName":"h","displayName":"\ud800\u0041"}`,
	"{\"userName\":\"i\xff\"}",
	`{"Operations":[{"op":"remove","path":"emails[value eq \"\\u0000\"]"}]}`,
	`{"Operations":[{"op":"add","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager","value":[{"value":"x"}]}]}`,
	`{"Operations":[{"op":"remove","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager[value eq \"x\"]"}]}`,
}

// fuzzHandler is a handler over a fresh memstore holding user ann and group Staff.
type fuzzHandler struct {
	h            http.Handler
	mem          *memstore.Store
	key          string
	user, group  string
	log          *bytes.Buffer
	maxBodyBytes int64
}

func newFuzzHandler(t *testing.T) *fuzzHandler {
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	mem := memstore.New()
	if err := mem.Tenants().Create(ctx, store.Tenant{ID: "acme", Created: now}); err != nil {
		t.Fatal(err)
	}
	secret, _, err := IssueAPIKey(ctx, mem.APIKeys(), KeySpec{Tenants: []string{"acme"}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	u, err := mem.Users().Create(ctx, "acme", store.User{UserName: "ann@example.com", Active: true,
		Emails: []store.MultiValue{{Value: "ann@example.com", Type: "work", Primary: true}}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := mem.Groups().Create(ctx, "acme", store.Group{DisplayName: "Staff", Members: []store.Member{{Value: u.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	lim, err := ratelimit.NewMemory(ratelimit.MemoryConfig{Rate: ratelimit.Rate{Limit: 1 << 20, Period: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	logs := &bytes.Buffer{}
	f := &fuzzHandler{mem: mem, key: secret, user: u.ID, group: g.ID, log: logs, maxBodyBytes: 4096}
	f.h, err = New(Config{
		Tenants: mem.Tenants(), Users: mem.Users(), Groups: mem.Groups(), APIKeys: mem.APIKeys(),
		BaseURL: "https://id.example.com/scim/v2", RateLimiter: lim,
		Logger:       slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelError})),
		Now:          func() time.Time { return now },
		MaxBodyBytes: f.maxBodyBytes,
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fuzzHandler) state(t *testing.T) (*store.User, *store.Group) {
	ctx := context.Background()
	u, err := f.mem.Users().Get(ctx, "acme", f.user)
	if err != nil {
		t.Fatal(err)
	}
	g, err := f.mem.Groups().Get(ctx, "acme", f.group)
	if err != nil {
		t.Fatal(err)
	}
	return u, g
}

// FuzzDecodeBody sends arbitrary bytes as the body of every write: nothing panics, nothing is a
// 500, the status is one a client can act on, every error is a SCIM error body, and a refused
// update changes nothing.
func FuzzDecodeBody(f *testing.F) {
	for _, s := range bodySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fh := newFuzzHandler(t)
		requests := []struct {
			method, path string
			want         []int
		}{
			{"PATCH", "/acme/Users/" + fh.user, []int{200, 400, 409, 413}},
			{"PATCH", "/acme/Groups/" + fh.group, []int{200, 400, 409, 413}},
			{"PUT", "/acme/Users/" + fh.user, []int{200, 400, 409, 413}},
			{"POST", "/acme/Users", []int{201, 400, 409, 413}},
			{"POST", "/acme/Groups", []int{201, 400, 409, 413}},
		}
		for _, rq := range requests {
			userBefore, groupBefore := fh.state(t)
			req := httptest.NewRequest(rq.method, rq.path, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/scim+json")
			req.Header.Set("Authorization", "Bearer "+fh.key)
			rec := httptest.NewRecorder()
			fh.h.ServeHTTP(rec, req)
			if !slices.Contains(rq.want, rec.Code) {
				t.Fatalf("%s %s: status %d, want one of %v\nbody: %s\nresponse: %s\nlog: %s",
					rq.method, rq.path, rec.Code, rq.want, body, rec.Body.Bytes(), fh.log.Bytes())
			}
			var out map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
				t.Fatalf("%s %s: response is not a JSON object: %v\n%s", rq.method, rq.path, err, rec.Body.Bytes())
			}
			if rec.Code >= 400 {
				if !reflect.DeepEqual(out["schemas"], []any{errorURN}) || out["status"] == nil {
					t.Fatalf("%s %s: not a SCIM error: %s", rq.method, rq.path, rec.Body.Bytes())
				}
				userAfter, groupAfter := fh.state(t)
				if !reflect.DeepEqual(userBefore, userAfter) || !reflect.DeepEqual(groupBefore, groupAfter) {
					t.Fatalf("%s %s: refused with %d but the store changed\nbody: %s", rq.method, rq.path, rec.Code, body)
				}
			}
			if rec.Code < 300 {
				u, g := fh.state(t)
				if why := notStoredText(reflect.ValueOf(*u)) + notStoredText(reflect.ValueOf(*g)); why != "" {
					t.Fatalf("%s %s: stored %s\nbody: %q", rq.method, rq.path, why, body)
				}
			}
			if rec.Code == 413 && int64(len(body)) <= fh.maxBodyBytes {
				t.Fatalf("%s %s: 413 for a body of %d bytes", rq.method, rq.path, len(body))
			}
		}
	})
}

// notStoredText returns a string of v (a struct of the store, walked through its fields, slices
// and maps) that is not text, quoted, or "".
func notStoredText(v reflect.Value) string {
	switch v.Kind() {
	case reflect.String:
		if badText(v.String()) != "" {
			return strconv.Quote(v.String())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if why := notStoredText(v.Field(i)); why != "" {
				return why
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if why := notStoredText(v.Index(i)); why != "" {
				return why
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if why := notStoredText(it.Key()) + notStoredText(it.Value()); why != "" {
				return why
			}
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return notStoredText(v.Elem())
		}
	}
	return ""
}
