package main

import (
	"bytes"
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/store"
)

// withPushed gives the in-process visid pushed authorization requests, as the identity service
// has them.
func withPushed(c *oidc2fa.Config, b store.Backend) { c.Pushed = b.Pushed }

// TestCallbackNotRegistered: started with a callback visid does not know for the client, the
// app refuses to start (rather than show a 500 at every sign-in) and says the admin command
// that registers it, filled in with the tenant, the client id and the URI.
func TestCallbackNotRegistered(t *testing.T) {
	v := newVisid(t, true, withPushed)
	const callback = "http://127.0.0.1:18082/callback"
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second) // an app that starts stops here
	defer cancel()
	err := run(ctx, []string{"-addr", "127.0.0.1:0", "-redirect-uri", callback, "-issuer", v.issuer,
		"-client-id", v.clientID, "-client-secret", v.secret}, &stdout, &stderr)
	require.Error(t, err)
	assert.Equal(t, 1, exitCode(err, &stderr))
	assert.Empty(t, stdout.String(), "no rp_url: the app did not start")
	assert.Contains(t, stderr.String(), "client set-redirect-uris --tenant demo "+v.clientID+" --redirect-uri "+callback)

	// Registered, it starts.
	_, err = v.clients.Update(context.Background(), "demo", v.clientID, func(c *store.Client) error {
		c.RedirectURIs = []string{callback}
		return nil
	})
	require.NoError(t, err)
	a := runApp(t, "-redirect-uri", callback, "-issuer", v.issuer, "-client-id", v.clientID, "-client-secret", v.secret)
	require.NoError(t, a.stop(t))
}

// TestBusyAddr: a taken -addr is named, with what to do.
func TestBusyAddr(t *testing.T) {
	v := newVisid(t, true)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	var stdout, stderr bytes.Buffer
	err = run(t.Context(), []string{"-addr", ln.Addr().String(), "-issuer", v.issuer,
		"-client-id", v.clientID, "-client-secret", v.secret}, &stdout, &stderr)
	require.Error(t, err)
	exitCode(err, &stderr)
	assert.Contains(t, stderr.String(), "-addr "+ln.Addr().String()+": the address is in use")
	assert.Contains(t, stderr.String(), "port 0 picks a free one")
}
