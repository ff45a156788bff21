package tenantscale_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/internal/scimbench"
	"github.com/visid/visid/internal/tenantscale"
	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
)

// TestFill checks that a tenant Fill made reads back through the store API as one made by
// Tenants.Create with the same values, that its users, client, API key and signing key are the
// template's with its own ids, and that the SCIM API and a whole sign-in work on it.
func TestFill(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			const n = 21
			// Every other tenant gets copies of the template's users and the rest.
			s := newSite(t, d, n, func(i int) bool { return i%2 == 1 }, func(int) bool { return true })
			b := s.backend
			require.Len(t, s.filled.IDs, n-1)
			require.Len(t, s.filled.Kept, n-1)
			all, err := b.Tenants.List(ctx, "", n+1)
			require.NoError(t, err)
			require.Len(t, all, n)
			count, err := b.Tenants.Count(ctx)
			require.NoError(t, err)
			require.Equal(t, n, count)

			k := s.filled.Kept[7]
			assert.Equal(t, "tenant0000008", k.ID)
			// Replacing the template's ids by the tenant's in a value's JSON gives the copy.
			copyOf := func(v, into any) {
				t.Helper()
				raw, err := json.Marshal(v)
				require.NoError(t, err)
				text := strings.ReplaceAll(string(raw), template, k.ID)
				for old, id := range k.IDs {
					text = strings.ReplaceAll(text, old, id)
				}
				require.NoError(t, json.Unmarshal([]byte(text), into))
			}

			tmpl, err := b.Tenants.Get(ctx, template)
			require.NoError(t, err)
			require.NoError(t, b.Tenants.Create(ctx, store.Tenant{ID: "made", DisplayName: "Tenant " + k.ID, Created: tmpl.Created}))
			want, err := b.Tenants.Get(ctx, "made")
			require.NoError(t, err)
			want.ID = k.ID
			got, err := b.Tenants.Get(ctx, k.ID)
			require.NoError(t, err)
			assert.Equal(t, want, got, "Tenants.Get of a filled tenant")

			require.Len(t, k.IDs, templateUsers+2, "the users, the client and the API key have new ids")
			for _, id := range s.tmpl.userIDs {
				u, err := b.Users.Get(ctx, template, id)
				require.NoError(t, err)
				var want store.User
				copyOf(u, &want)
				got, err := b.Users.Get(ctx, k.ID, k.IDs[id])
				require.NoError(t, err)
				assert.Equal(t, &want, got, "Users.Get of a filled user")
				assert.NotEqual(t, id, got.ID)
				assert.Contains(t, got.UserName, "@"+k.ID+".example.com")
			}
			c, err := b.Clients.Get(ctx, template, s.tmpl.clientID)
			require.NoError(t, err)
			var wantClient store.Client
			copyOf(c, &wantClient)
			gotClient, err := b.Clients.Get(ctx, k.ID, k.IDs[s.tmpl.clientID])
			require.NoError(t, err)
			assert.Equal(t, &wantClient, gotClient, "Clients.Get of a filled client")

			key, err := b.APIKeys.ByHash(ctx, sha256.Sum256([]byte(k.APIKey)))
			require.NoError(t, err)
			assert.Equal(t, []string{k.ID}, key.Tenants)
			assert.Equal(t, k.IDs[s.tmpl.apiKeyID], key.ID, "the key's id is the copy's")
			_, err = b.APIKeys.ByHash(ctx, sha256.Sum256([]byte(s.tmpl.apiKey)))
			require.NoError(t, err, "the template's key is unchanged")

			// Every tenant has an EdDSA key of its own, which the stored key ring signs with.
			stored := allSigningKeys(t, b.SigningKeys)
			require.Len(t, stored, n)
			var kid string
			for _, sk := range stored {
				if sk.Tenant == k.ID {
					kid = sk.ID
				}
			}
			require.NotEmpty(t, kid)
			pub, err := s.keys.Keys(ctx, k.ID)
			require.NoError(t, err)
			require.Len(t, pub, 1)
			assert.Equal(t, kid, pub[0].KID)
			assert.Len(t, allSigningKeys(t, b.SigningKeys), n, "no key was made for the filled tenant")

			// The SCIM API: GET of a filled user, POST of a new one, POST of a taken userName.
			id := k.IDs[s.tmpl.userIDs[0]]
			rec := s.serveSCIM(k.APIKey, "GET", k.ID, "/Users/"+id, "")
			require.Equal(t, http.StatusOK, rec.Code, "body: %s", rec.Body)
			assert.Equal(t, baseURL+"/scim/v2/"+k.ID+"/Users/"+id, jsonField(t, []byte(jsonObject(t, rec.Body.Bytes(), "meta")), "location"))
			taken := strings.ReplaceAll(scimbench.UserJSON(0), "@example.com", "@"+k.ID+".example.com")
			rec = s.serveSCIM(k.APIKey, "POST", k.ID, "/Users", taken)
			assert.Equal(t, http.StatusConflict, rec.Code, "the filled user's userName is taken: %s", rec.Body)
			rec = s.serveSCIM(k.APIKey, "POST", k.ID, "/Users", scimbench.UserJSON(1000))
			require.Equal(t, http.StatusCreated, rec.Code, "body: %s", rec.Body)
			newID := jsonField(t, rec.Body.Bytes(), "id")
			rec = s.serveSCIM(k.APIKey, "GET", template, "/Users/"+s.tmpl.userIDs[0], "")
			assert.Equal(t, http.StatusForbidden, rec.Code, "the tenant's key is its own: %s", rec.Body)

			// A whole sign-in of the new user at the filled client.
			require.NoError(t, s.auth.Enroll(ctx, k.ID, newID, "harbour", points))
			s.signIn(t, k.ID, k.IDs[s.tmpl.clientID], s.tmpl.clientSecret, scimbench.UserName(1000))

			// A tenant without copies is its row and its signing key: what Tenants.Create
			// stores, and what the key ring stores at the tenant's first signature.
			bare := s.filled.Kept[6]
			assert.Empty(t, bare.APIKey)
			assert.Empty(t, bare.IDs)
			require.NoError(t, b.Tenants.Create(ctx, store.Tenant{ID: "made2", DisplayName: "Tenant " + bare.ID, Created: tmpl.Created}))
			want, err = b.Tenants.Get(ctx, "made2")
			require.NoError(t, err)
			want.ID = bare.ID
			got, err = b.Tenants.Get(ctx, bare.ID)
			require.NoError(t, err)
			assert.Equal(t, want, got, "Tenants.Get of a filled tenant without copies")
			users, err := b.Users.List(ctx, bare.ID, store.Query{})
			require.NoError(t, err)
			assert.Zero(t, users.TotalResults)
			pub, err = s.keys.Keys(ctx, bare.ID)
			require.NoError(t, err)
			require.Len(t, pub, 1)
			key2, _, err := scimsvc.IssueAPIKey(ctx, b.APIKeys, scimsvc.KeySpec{Tenants: []string{bare.ID}})
			require.NoError(t, err)
			rec = s.serveSCIM(key2, "POST", bare.ID, "/Users", scimbench.UserJSON(0))
			require.Equal(t, http.StatusCreated, rec.Code, "body: %s", rec.Body)
			assert.Len(t, allSigningKeys(t, b.SigningKeys), n, "no key was made for the filled tenants")
		})
	}
}

// TestFillRefuses checks what Fill does not copy.
func TestFillRefuses(t *testing.T) {
	ctx := context.Background()
	s := openSQLite(t, nil)
	_, err := tenantscale.Fill(ctx, tenantscale.Config{Store: s, Template: "absent", Tenants: 1})
	assert.ErrorContains(t, err, "no tenant")
	b := s.Backend()
	require.NoError(t, b.Tenants.Create(ctx, store.Tenant{ID: "acme"}))
	require.NoError(t, b.Interactions.Create(ctx, store.Interaction{ID: "i1", Tenant: "acme", Expires: time.Now().Add(time.Hour)}))
	_, err = tenantscale.Fill(ctx, tenantscale.Config{Store: s, Template: "acme", Tenants: 1})
	assert.ErrorContains(t, err, "interactions")
	_, err = s.DB().ExecContext(ctx, `CREATE TABLE notes (tenant TEXT NOT NULL, body TEXT NOT NULL)`)
	require.NoError(t, err)
	_, err = tenantscale.Fill(ctx, tenantscale.Config{Store: s, Template: "acme", Tenants: 1})
	assert.ErrorContains(t, err, "[notes]", "a table Fill does not know")
}

// jsonObject is the JSON text of a top-level object field.
func jsonObject(tb testing.TB, body []byte, name string) string {
	tb.Helper()
	var m map[string]json.RawMessage
	require.NoError(tb, json.Unmarshal(body, &m))
	return string(m[name])
}

// allSigningKeys returns every key of keys, tenant by tenant.
func allSigningKeys(t *testing.T, keys store.SigningKeys) []store.SigningKey {
	t.Helper()
	ctx := context.Background()
	all, err := keys.List(ctx, "")
	require.NoError(t, err)
	for after := ""; ; {
		tenants, err := keys.Tenants(ctx, after, 100)
		require.NoError(t, err)
		for _, tenant := range tenants {
			ks, err := keys.List(ctx, tenant)
			require.NoError(t, err)
			all = append(all, ks...)
		}
		if len(tenants) < 100 {
			return all
		}
		after = tenants[len(tenants)-1]
	}
}
