package oidc2fa_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/store"
)

// away is the error of a store whose database is away, once set; nil while it answers.
type away struct{ err atomic.Pointer[error] }

func (a *away) set(err error) { a.err.Store(&err) }

func (a *away) get() error {
	if p := a.err.Load(); p != nil {
		return *p
	}
	return nil
}

type awayTenants struct {
	store.Tenants
	a *away
}

func (t awayTenants) Get(ctx context.Context, id string) (*store.Tenant, error) {
	if err := t.a.get(); err != nil {
		return nil, err
	}
	return t.Tenants.Get(ctx, id)
}

type awayClients struct {
	store.Clients
	a *away
}

func (c awayClients) Get(ctx context.Context, tenant, id string) (*store.Client, error) {
	if err := c.a.get(); err != nil {
		return nil, err
	}
	return c.Clients.Get(ctx, tenant, id)
}

type awayCodes struct {
	store.Codes
	a *away
}

func (c awayCodes) Consume(ctx context.Context, h [32]byte) (*store.Code, error) {
	if err := c.a.get(); err != nil {
		return nil, err
	}
	return c.Codes.Consume(ctx, h)
}

type awayInteractions struct {
	store.Interactions
	a *away
}

func (i awayInteractions) Create(ctx context.Context, in store.Interaction) error {
	if err := i.a.get(); err != nil {
		return err
	}
	return i.Interactions.Create(ctx, in)
}

// awayEnv is an env whose Tenants.Get, Clients.Get, Codes.Consume and Interactions.Create
// fail with what a.set says.
func awayEnv(t *testing.T) (*env, *away) {
	a := &away{}
	e := newEnv(t, func(c *oidc2fa.Config) {
		c.Tenants = awayTenants{c.Tenants, a}
		c.Clients = awayClients{c.Clients, a}
		c.Codes = awayCodes{c.Codes, a}
		c.Interactions = awayInteractions{c.Interactions, a}
	})
	return e, a
}

// A store that is unavailable (store.ErrUnavailable, wrapped) makes every endpoint answer that
// the service is temporarily unavailable, with Retry-After where a response is the provider's
// own: a 503 page, a 503 token error temporarily_unavailable, 503 on JWKS and discovery, and a
// redirect with error=temporarily_unavailable once the client is known (RFC 6749 §4.1.2.1).
func TestStoreUnavailable(t *testing.T) {
	unavailable := fmt.Errorf("sqlstore: postgres://visid:hunter2@db: %w: connection refused", store.ErrUnavailable)
	retryAfter := strconv.Itoa(int(store.UnavailableRetryAfter / time.Second))

	t.Run("authorize, client unreadable: a 503 page", func(t *testing.T) {
		e, a := awayEnv(t)
		a.set(unavailable)
		rec := e.browser().do("GET", "/authorize/acme?"+e.authParams().Encode(), nil)
		requirePage(t, rec, http.StatusServiceUnavailable)
		assert.Equal(t, retryAfter, rec.Header().Get("Retry-After"))
		assert.Contains(t, rec.Body.String(), "temporarily_unavailable")
		assert.NotContains(t, rec.Body.String(), "hunter2")
	})

	t.Run("authorize, interaction not stored: a redirect with temporarily_unavailable", func(t *testing.T) {
		a := &away{}
		e := newEnv(t, func(c *oidc2fa.Config) { c.Interactions = awayInteractions{c.Interactions, a} })
		a.set(unavailable)
		rec := e.browser().follow("GET", "/authorize/acme?"+e.authParams().Encode(), nil)
		q := requireAuthError(t, rec, "temporarily_unavailable", "st-123")
		assert.NotContains(t, q.Get("error_description"), "hunter2")
	})

	t.Run("token: 503 temporarily_unavailable", func(t *testing.T) {
		e, a := awayEnv(t)
		code := e.code()
		a.set(unavailable)
		rec := e.postToken(e.tokenForm(code), nil)
		require.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
		assert.Equal(t, retryAfter, rec.Header().Get("Retry-After"))
		assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
		var body map[string]string
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
		assert.Equal(t, "temporarily_unavailable", body["error"])
		assert.NotContains(t, rec.Body.String(), "hunter2")
	})

	t.Run("token, another error: 500 server_error", func(t *testing.T) {
		e, a := awayEnv(t)
		code := e.code()
		a.set(errors.New("codes table on fire"))
		rec := e.postToken(e.tokenForm(code), nil)
		require.Equal(t, http.StatusInternalServerError, rec.Code, rec.Body.String())
		assert.Empty(t, rec.Header().Get("Retry-After"))
		assert.Contains(t, rec.Body.String(), `"server_error"`)
	})

	for _, path := range []string{"/jwks/acme", "/acme/.well-known/openid-configuration"} {
		t.Run(strings.TrimPrefix(path, "/")+": 503", func(t *testing.T) {
			e, a := awayEnv(t)
			a.set(unavailable)
			rec := httpRecord(e.handler, "GET", path)
			assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
			assert.Equal(t, retryAfter, rec.Header().Get("Retry-After"))
			assert.NotContains(t, rec.Body.String(), "hunter2")
		})
	}
}
