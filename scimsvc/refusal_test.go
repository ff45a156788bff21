package scimsvc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/scimsvc"
)

// logBuffer is a slog handler's output that tests read while handlers write.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// records returns every JSON log record written so far, and resets the buffer.
func (l *logBuffer) records(t *testing.T) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for line := range strings.Lines(l.buf.String()) {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		out = append(out, m)
	}
	l.buf.Reset()
	return out
}

// TestRefusalReasons: at debug level the log names why a request was refused, while every
// refusal of one status answers the same, so a client learns nothing more than before.
func TestRefusalReasons(t *testing.T) {
	logs := &logBuffer{}
	e := newEnv(t, func(c *scimsvc.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	ctx := context.Background()
	valid := e.key
	validID := "key_" + strings.Split(strings.TrimPrefix(valid, "scimkey_"), "_")[0]
	revoked, rk, err := scimsvc.IssueAPIKey(ctx, e.mem.APIKeys(), scimsvc.KeySpec{Name: "old", Tenants: []string{"acme"}})
	require.NoError(t, err)
	require.NoError(t, scimsvc.RevokeAPIKey(ctx, e.mem.APIKeys(), rk.ID, time.Now()))
	ghost, gk, err := scimsvc.IssueAPIKey(ctx, e.mem.APIKeys(), scimsvc.KeySpec{Name: "ghost", Tenants: []string{"ghost"}})
	require.NoError(t, err)
	noScope, nk, err := scimsvc.IssueAPIKey(ctx, e.mem.APIKeys(), scimsvc.KeySpec{Name: "other", Tenants: []string{"acme"}, Scopes: []string{"audit"}})
	require.NoError(t, err)

	const (
		body401 = `{"schemas":["urn:ietf:params:scim:api:messages:2.0:Error"],"detail":"a valid API key is required: Authorization: Bearer <key>","status":"401"}`
		body403 = `{"schemas":["urn:ietf:params:scim:api:messages:2.0:Error"],"detail":"this API key may not use the SCIM API of this tenant","status":"403"}`
	)
	for _, tt := range []struct {
		name   string
		header string // the whole Authorization header; "" for none
		path   string
		status int
		reason string
		key    string
	}{
		{"no header", "", "/acme/Users", 401, "no Authorization header", ""},
		{"Bearer missing", valid, "/acme/Users", 401, `the Authorization header is not "Bearer <key>"`, ""},
		{"Basic", "Basic YWxpY2U6cHc=", "/acme/Users", 401, `the Authorization header is not "Bearer <key>"`, ""},
		{"random token", "Bearer 8f14e45fceea167a5a36dedd4bea2543", "/acme/Users", 401,
			"the bearer token is not a visid API key (scimkey_<id>_<secret>)", ""},
		{"truncated key", "Bearer " + valid[:len(valid)-6], "/acme/Users", 401,
			"wrong secret for the API key the token names (a truncated or altered key?)", validID},
		{"unknown key id", "Bearer scimkey_01m80h520y4ks4ca8hpxn4hyre_abcdefgh", "/acme/Users", 401,
			"no API key has the id the token names", "key_01m80h520y4ks4ca8hpxn4hyre"},
		{"revoked", "Bearer " + revoked, "/acme/Users", 401, "the API key is revoked", rk.ID},
		{"tenant typo", "Bearer " + valid, "/acmee/Users", 403,
			"the API key may not act on this tenant, and the tenant does not exist", validID},
		{"another tenant", "Bearer " + valid, "/globex/Users", 403, "the API key may not act on this tenant", validID},
		{"tenant deleted", "Bearer " + ghost, "/ghost/Users", 403, "the tenant does not exist", gk.ID},
		{"scope", "Bearer " + noScope, "/acme/Users", 403, "the API key lacks the scim scope", nk.ID},
	} {
		t.Run(tt.name, func(t *testing.T) {
			logs.records(t)
			r := e.doHeader("GET", tt.path, tt.header)
			assert.Equal(t, tt.status, r.Status)
			want := body401
			if tt.status == 403 {
				want = body403
			}
			assert.Equal(t, want, string(r.Body), "the response is that of every refusal of its status")

			recs := logs.records(t)
			require.Len(t, recs, 1)
			assert.Equal(t, "DEBUG", recs[0]["level"])
			assert.Equal(t, "scim request refused", recs[0]["msg"])
			assert.Equal(t, tt.reason, recs[0]["reason"])
			assert.Equal(t, tt.key, recs[0]["key"])
			assert.Equal(t, float64(tt.status), recs[0]["status"])
			line, err := json.Marshal(recs[0])
			require.NoError(t, err)
			for _, secret := range []string{valid, revoked, ghost, noScope, valid[:len(valid)-6]} {
				assert.NotContains(t, string(line), secret, "no secret in the log")
			}
		})
	}

	r := e.doHeader("GET", "/acme/Users", "Bearer "+valid)
	assert.Equal(t, 200, r.Status, "the valid key still works")
}
