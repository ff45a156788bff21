package picture_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa/picture"
	"github.com/visid/visid/store"
)

// awayCredentials is a PictureCredentials whose Get fails with store.ErrUnavailable once away
// is set, as a store whose database went away does.
type awayCredentials struct {
	store.PictureCredentials
	away *atomic.Bool
}

func (c awayCredentials) Get(ctx context.Context, tenant, userID string) (*store.PictureCredential, error) {
	if c.away.Load() {
		return nil, fmt.Errorf("sqlstore: postgres://visid:hunter2@db: %w: connection refused", store.ErrUnavailable)
	}
	return c.PictureCredentials.Get(ctx, tenant, userID)
}

// A login page whose store is unavailable is a 503 page with Retry-After that asks, in the
// person's language, to reload in a few seconds, and says nothing internal.
func TestLoginStoreUnavailable(t *testing.T) {
	away := &atomic.Bool{}
	e := newEnv(t, func(c *picture.Config) { c.Credentials = awayCredentials{c.Credentials, away} })
	for _, tc := range []struct{ acceptLanguage, want string }{
		{"", "The service is briefly unavailable"},
		{"de", "Der Dienst ist kurzzeitig nicht verfügbar"},
	} {
		t.Run("lang="+tc.acceptLanguage, func(t *testing.T) {
			away.Store(false)
			b := e.browser()
			b.acceptLanguage = tc.acceptLanguage
			sum := sha256.Sum256([]byte("verifier-verifier-verifier-verifier-verifier"))
			q := url.Values{
				"response_type": {"code"}, "client_id": {e.clientID}, "redirect_uri": {testRedirect},
				"scope": {"openid 2fa"}, "state": {"st"}, "nonce": {"n"}, "login_hint": {"ann"},
				"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
			}
			p := b.get(e.srv.URL + "/oidc/authorize/acme?" + q.Encode())
			require.Equal(t, http.StatusSeeOther, p.status, p.body)
			away.Store(true)
			p = b.get(p.location)
			assert.Equal(t, http.StatusServiceUnavailable, p.status)
			assert.Equal(t, strconv.Itoa(int(store.UnavailableRetryAfter/time.Second)), p.header.Get("Retry-After"))
			assert.True(t, strings.HasPrefix(p.header.Get("Content-Type"), "text/html"), p.header.Get("Content-Type"))
			assert.Contains(t, p.body, tc.want)
			assert.NotContains(t, p.body, "hunter2")
			assert.NotContains(t, p.body, "refused")
		})
	}
}
