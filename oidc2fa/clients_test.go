package oidc2fa_test

import (
	"context"
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
)

func TestValidateRedirectURI(t *testing.T) {
	tests := []struct {
		uri string
		ok  bool
	}{
		{"https://app.example.com/callback", true},
		{"https://app.example.com:8443/cb?x=1", true},
		{"http://127.0.0.1:8081/callback", true},
		{"http://[::1]:8081/callback", true},
		{"http://localhost:3000/cb", true},
		{"http://127.5.6.7/cb", true},
		{"http://app.example.com/callback", false},
		{"https://app.example.com/callback#frag", false},
		{"https://app.example.com/callback#", false},
		{"/callback", false},
		{"app.example.com/callback", false},
		{"https:///callback", false},
		{"https://user:pw@app.example.com/cb", false},
		{"ftp://app.example.com/cb", false},
		{"javascript:alert(1)", false},
		{"", false},
		{"https://app.example.com/\x00", false},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			err := oidc2fa.ValidateRedirectURI(tt.uri)
			if tt.ok {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, store.ErrInvalid)
			}
		})
	}
}

func TestRegisterClient(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	require.NoError(t, mem.Tenants().Create(ctx, store.Tenant{ID: "acme"}))
	clients := mem.Clients()

	secret, c, err := oidc2fa.RegisterClient(ctx, clients, oidc2fa.ClientSpec{Tenant: "acme", Name: "App",
		Description: "the app", RedirectURIs: []string{"https://app.example.com/cb"}})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(c.ID, "client_"), c.ID)
	assert.True(t, strings.HasPrefix(secret, "secret_"), "secret carries its prefix")
	assert.Equal(t, sha256.Sum256([]byte(secret)), c.SecretHash, "only the secret's SHA-256 is stored")
	assert.Equal(t, c.Created, c.SecretRotated)

	for name, spec := range map[string]oidc2fa.ClientSpec{
		"no name":          {Tenant: "acme", RedirectURIs: []string{"https://a.example/cb"}},
		"no redirect URI":  {Tenant: "acme", Name: "x"},
		"bad redirect URI": {Tenant: "acme", Name: "x", RedirectURIs: []string{"https://a.example/cb", "http://a.example/cb"}},
	} {
		_, _, err := oidc2fa.RegisterClient(ctx, clients, spec)
		assert.ErrorIs(t, err, store.ErrInvalid, name)
	}
	_, _, err = oidc2fa.RegisterClient(ctx, clients, oidc2fa.ClientSpec{Tenant: "nosuch", Name: "x", RedirectURIs: []string{"https://a.example/cb"}})
	assert.ErrorIs(t, err, store.ErrNotFound, "unknown tenant")

	list, err := oidc2fa.ListClients(ctx, clients, "acme")
	require.NoError(t, err)
	require.Len(t, list, 1, "failed registrations store nothing")

	newSecret, rotated, err := oidc2fa.RotateClientSecret(ctx, clients, "acme", c.ID, c.Created.Add(1))
	require.NoError(t, err)
	assert.NotEqual(t, secret, newSecret)
	assert.Equal(t, sha256.Sum256([]byte(newSecret)), rotated.SecretHash)
	assert.True(t, rotated.SecretRotated.After(rotated.Created))

	_, err = oidc2fa.SetRedirectURIs(ctx, clients, "acme", c.ID, []string{"http://app.example.com/cb"})
	assert.ErrorIs(t, err, store.ErrInvalid, "an http URI for a non-loopback host")
	_, err = oidc2fa.SetRedirectURIs(ctx, clients, "acme", c.ID, nil)
	assert.ErrorIs(t, err, store.ErrInvalid, "no URI")
	updated, err := oidc2fa.SetRedirectURIs(ctx, clients, "acme", c.ID, []string{"http://127.0.0.1:9/cb", "https://b.example/cb"})
	require.NoError(t, err)
	assert.Equal(t, []string{"http://127.0.0.1:9/cb", "https://b.example/cb"}, updated.RedirectURIs)

	require.NoError(t, oidc2fa.DeleteClient(ctx, clients, "acme", c.ID))
	assert.ErrorIs(t, oidc2fa.DeleteClient(ctx, clients, "acme", c.ID), store.ErrNotFound)
}
