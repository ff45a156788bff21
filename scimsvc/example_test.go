package scimsvc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
)

// A host mounts the SCIM API under /scim/v2/ on its own mux, with a tenant and an API key for it.
func ExampleNew() {
	ctx := context.Background()
	mem := memstore.New()
	b := mem.Backend()
	_ = b.Tenants.Create(ctx, store.Tenant{ID: "acme"})
	key, _, err := scimsvc.IssueAPIKey(ctx, b.APIKeys, scimsvc.KeySpec{Name: "Entra ID", Tenants: []string{"acme"}})
	if err != nil {
		panic(err)
	}

	scim, err := scimsvc.New(scimsvc.Config{
		Tenants: b.Tenants, Users: b.Users, Groups: b.Groups, APIKeys: b.APIKeys,
		BaseURL: "https://id.example.com/scim/v2",
	})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/scim/v2/", http.StripPrefix("/scim/v2", scim))

	req := httptest.NewRequest("POST", "/scim/v2/acme/Users",
		strings.NewReader(`{"userName": "ann@example.com", "name": {"givenName": "Ann"}, "password": "discarded"}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/scim+json")
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)

	var user struct {
		UserName string `json:"userName"`
		Active   bool   `json:"active"`
		Password string `json:"password"`
		Meta     struct {
			Location string `json:"location"`
		} `json:"meta"`
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &user)
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"))
	fmt.Println(user.UserName, user.Active, user.Password == "")
	fmt.Println(strings.HasPrefix(user.Meta.Location, "https://id.example.com/scim/v2/acme/Users/user_"))
	// Output:
	// 201 application/scim+json
	// ann@example.com true true
	// true
}

// IssueAPIKey returns the secret once; the store keeps only its hash.
func ExampleIssueAPIKey() {
	ctx := context.Background()
	keys := memstore.New().APIKeys()
	secret, key, err := scimsvc.IssueAPIKey(ctx, keys, scimsvc.KeySpec{Name: "Okta", Tenants: []string{"acme"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.HasPrefix(secret, "scimkey_"), key.Scopes, key.Tenants)
	_ = scimsvc.RevokeAPIKey(ctx, keys, key.ID, key.Created)
	k, _ := keys.Get(ctx, key.ID)
	fmt.Println(k.Revoked)
	// Output:
	// true [scim] [acme]
	// true
}
