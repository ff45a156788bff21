package scimsvc_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/scimsvc"
)

// TestMount serves the handler over real HTTP at the root, under a prefix on an http.ServeMux
// and on chi. Every location comes from BaseURL, never from the Host a client sends.
func TestMount(t *testing.T) {
	tests := []struct {
		name    string
		baseURL string
		prefix  string // where the handler is mounted on the server
		mount   func(h http.Handler) http.Handler
	}{
		{name: "root", baseURL: "https://id.example.com", prefix: "",
			mount: func(h http.Handler) http.Handler { return h }},
		{name: "ServeMux with StripPrefix", baseURL: "https://id.example.com/scim/v2", prefix: "/scim/v2",
			mount: func(h http.Handler) http.Handler {
				mux := http.NewServeMux()
				mux.Handle("/scim/v2/", http.StripPrefix("/scim/v2", h))
				mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "app", http.StatusTeapot) })
				return mux
			}},
		{name: "ServeMux with StripPrefix of the prefix and its slash", baseURL: "https://id.example.com/scim/v2", prefix: "/scim/v2",
			mount: func(h http.Handler) http.Handler {
				mux := http.NewServeMux()
				mux.Handle("/scim/v2/", http.StripPrefix("/scim/v2/", h))
				return mux
			}},
		{name: "ServeMux, BaseURL with a trailing slash", baseURL: "https://id.example.com/scim/v2/", prefix: "/scim/v2",
			mount: func(h http.Handler) http.Handler {
				mux := http.NewServeMux()
				mux.Handle("/scim/v2/", http.StripPrefix("/scim/v2", h))
				return mux
			}},
		{name: "chi Mount", baseURL: "https://id.example.com/scim/v2", prefix: "/scim/v2",
			mount: func(h http.Handler) http.Handler {
				r := chi.NewRouter()
				r.Mount("/scim/v2", http.StripPrefix("/scim/v2", h))
				r.Get("/", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "app", http.StatusTeapot) })
				return r
			}},
		{name: "chi Route with a sub-router", baseURL: "https://id.example.com/scim/v2", prefix: "/scim/v2",
			mount: func(h http.Handler) http.Handler {
				r := chi.NewRouter()
				r.Route("/scim", func(r chi.Router) {
					r.Handle("/v2/*", http.StripPrefix("/scim/v2", h))
				})
				return r
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, func(c *scimsvc.Config) { c.BaseURL = tt.baseURL })
			srv := httptest.NewServer(tt.mount(e.handler))
			defer srv.Close()
			base := strings.TrimSuffix(tt.baseURL, "/")

			call := func(method, path, body string) (*http.Response, map[string]any) {
				t.Helper()
				var rd io.Reader
				if body != "" {
					rd = strings.NewReader(body)
				}
				req, err := http.NewRequest(method, srv.URL+path, rd)
				require.NoError(t, err)
				req.Host = "attacker.example.net"
				req.Header.Set("X-Forwarded-Host", "attacker.example.net")
				req.Header.Set("X-Forwarded-Proto", "http")
				req.Header.Set("Forwarded", "host=attacker.example.net;proto=http")
				req.Header.Set("Authorization", "Bearer "+e.key)
				if body != "" {
					req.Header.Set("Content-Type", "application/scim+json")
				}
				resp, err := srv.Client().Do(req)
				require.NoError(t, err)
				defer resp.Body.Close()
				raw, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				assert.NotContains(t, string(raw), "attacker")
				var m map[string]any
				if len(raw) > 0 {
					require.NoError(t, json.Unmarshal(raw, &m), "body: %s", raw)
				}
				return resp, m
			}

			resp, created := call("POST", tt.prefix+"/acme/Users", `{"schemas":["`+userSchema+`"],"userName":"ann@example.com"}`)
			require.Equal(t, http.StatusCreated, resp.StatusCode, "%v", created)
			id, _ := created["id"].(string)
			require.NotEmpty(t, id)
			loc := base + "/acme/Users/" + id
			assert.Equal(t, loc, resp.Header.Get("Location"))
			assert.Equal(t, loc, created["meta"].(map[string]any)["location"])

			// The location, resolved on this server, is the resource.
			path := tt.prefix + strings.TrimPrefix(loc, "https://id.example.com"+tt.prefix)
			resp, got := call("GET", path, "")
			require.Equal(t, http.StatusOK, resp.StatusCode, "%v", got)
			assert.Equal(t, created, got)

			resp, list := call("GET", tt.prefix+"/acme/Users?filter=userName+eq+%22ann@example.com%22", "")
			require.Equal(t, http.StatusOK, resp.StatusCode, "%v", list)
			res, _ := list["Resources"].([]any)
			require.Len(t, res, 1)
			assert.Equal(t, loc, res[0].(map[string]any)["meta"].(map[string]any)["location"])

			resp, group := call("POST", tt.prefix+"/acme/Groups", `{"displayName":"Staff","members":[{"value":"`+id+`"}]}`)
			require.Equal(t, http.StatusCreated, resp.StatusCode, "%v", group)
			members, _ := group["members"].([]any)
			require.Len(t, members, 1)
			assert.Equal(t, loc, members[0].(map[string]any)["$ref"])
			assert.Equal(t, base+"/acme/Groups/"+group["id"].(string), resp.Header.Get("Location"))

			resp, user := call("GET", path, "")
			require.Equal(t, http.StatusOK, resp.StatusCode)
			groups, _ := user["groups"].([]any)
			require.Len(t, groups, 1)
			assert.Equal(t, base+"/acme/Groups/"+group["id"].(string), groups[0].(map[string]any)["$ref"])

			resp, spc := call("GET", tt.prefix+"/acme/ServiceProviderConfig", "")
			require.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, base+"/acme/ServiceProviderConfig", spc["meta"].(map[string]any)["location"])

			resp, rt := call("GET", tt.prefix+"/acme/ResourceTypes/User", "")
			require.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, base+"/acme/ResourceTypes/User", rt["meta"].(map[string]any)["location"])

			resp, patched := call("PATCH", path, patchBody(`{"op":"replace","path":"displayName","value":"Ann"}`))
			require.Equal(t, http.StatusOK, resp.StatusCode, "%v", patched)
			assert.Equal(t, loc, patched["meta"].(map[string]any)["location"])

			resp, _ = call("DELETE", path, "")
			require.Equal(t, http.StatusNoContent, resp.StatusCode)
			resp, gone := call("GET", path, "")
			assert.Equal(t, http.StatusNotFound, resp.StatusCode)
			assert.Equal(t, []any{errorSchema}, gone["schemas"])
		})
	}
}

// TestNonCanonicalPath: a path with an empty, "." or ".." segment is answered within the API:
// never with a redirect that leaves the mount point, and always with a SCIM body.
func TestNonCanonicalPath(t *testing.T) {
	mounts := []struct {
		name, prefix string
		mount        func(h http.Handler) http.Handler
	}{
		{name: "root", mount: func(h http.Handler) http.Handler { return h }},
		{name: "ServeMux", prefix: "/scim/v2", mount: func(h http.Handler) http.Handler {
			mux := http.NewServeMux()
			mux.Handle("/scim/v2/", http.StripPrefix("/scim/v2", h))
			return mux
		}},
		{name: "chi", prefix: "/scim/v2", mount: func(h http.Handler) http.Handler {
			r := chi.NewRouter()
			r.Mount("/scim/v2", http.StripPrefix("/scim/v2", h))
			return r
		}},
	}
	paths := []string{"/acme//Users", "/acme/./Users", "/acme/Groups/../Users"}
	for _, m := range mounts {
		for _, p := range paths {
			t.Run(m.name+p, func(t *testing.T) {
				e := newEnv(t, func(c *scimsvc.Config) { c.BaseURL = "https://id.example.com" + m.prefix })
				srv := httptest.NewServer(m.mount(e.handler))
				defer srv.Close()
				client := srv.Client()
				client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
				req, err := http.NewRequest("GET", srv.URL+m.prefix+p, nil)
				require.NoError(t, err)
				req.URL.Opaque = m.prefix + p // send the path as it is, uncleaned
				req.Header.Set("Authorization", "Bearer "+e.key)
				resp, err := client.Do(req)
				require.NoError(t, err)
				defer resp.Body.Close()
				raw, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				if resp.StatusCode >= 300 && resp.StatusCode < 400 {
					assert.True(t, strings.HasPrefix(resp.Header.Get("Location"), m.prefix+"/acme/"),
						"redirect to %q leaves the mount point %q", resp.Header.Get("Location"), m.prefix)
					return
				}
				assert.Equal(t, "application/scim+json", resp.Header.Get("Content-Type"), "body: %s", raw)
			})
		}
	}
}
