package oidc2fa_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/ratelimit"
	"github.com/visid/visid/store/memstore"
)

// proxies are the tests' trusted proxies: a load balancer's network and an IPv6 proxy.
var proxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8:ffff::/48")}

// TestClientIP: the connection's peer, unless it is a trusted proxy; then the right-most
// untrusted address of X-Forwarded-For, whatever a client wrote further left.
func TestClientIP(t *testing.T) {
	tests := []struct {
		name    string
		remote  string
		xff     []string
		trusted []netip.Prefix
		want    string
	}{
		{"no proxy", "203.0.113.7:4711", nil, proxies, "203.0.113.7"},
		{"spoofed header from an untrusted peer", "203.0.113.7:4711", []string{"198.51.100.1"}, proxies, "203.0.113.7"},
		{"no trusted proxies configured", "10.0.0.2:4711", []string{"198.51.100.1"}, nil, "10.0.0.2"},
		{"one proxy", "10.0.0.2:4711", []string{"198.51.100.1"}, proxies, "198.51.100.1"},
		{"a client's own entries left of the proxy's are ignored", "10.0.0.2:4711",
			[]string{"192.0.2.66, 10.9.9.9, 198.51.100.1"}, proxies, "198.51.100.1"},
		{"a chain of proxies", "10.0.0.2:4711", []string{"198.51.100.1, 10.1.0.3, 10.2.0.4"}, proxies, "198.51.100.1"},
		{"a chain over several header lines", "10.0.0.2:4711", []string{"192.0.2.66, 198.51.100.1", "10.1.0.3", "10.2.0.4"},
			proxies, "198.51.100.1"},
		{"a chain ending at an untrusted hop", "10.0.0.2:4711", []string{"198.51.100.1, 203.0.113.9, 10.2.0.4"},
			proxies, "203.0.113.9"},
		{"every hop trusted", "10.0.0.2:4711", []string{"10.3.0.1, 10.2.0.4"}, proxies, "10.3.0.1"},
		{"trusted peer without the header", "10.0.0.2:4711", nil, proxies, "10.0.0.2"},
		{"an entry that is not an address stops at the hop that forwarded it", "10.0.0.2:4711",
			[]string{"198.51.100.1, unknown, 10.2.0.4"}, proxies, "10.2.0.4"},
		{"an empty entry", "10.0.0.2:4711", []string{""}, proxies, "10.0.0.2"},
		{"entries with ports", "10.0.0.2:4711", []string{"[2001:db8:1::5]:443, 10.2.0.4:80"}, proxies, "2001:db8:1::5"},
		{"IPv6 proxy", "[2001:db8:ffff::1]:4711", []string{"2001:db8:1::5"}, proxies, "2001:db8:1::5"},
		{"IPv4-mapped peer", "[::ffff:10.0.0.2]:4711", []string{"::ffff:198.51.100.1"}, proxies, "198.51.100.1"},
		{"zone dropped", "[fe80::1%eth0]:4711", nil, proxies, "fe80::1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tc.remote
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			assert.Equal(t, netip.MustParseAddr(tc.want), oidc2fa.ClientIP(r, tc.trusted))
		})
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "pipe"
	assert.False(t, oidc2fa.ClientIP(r, proxies).IsValid(), "a RemoteAddr that is not an address")
}

// TestTrustedProxiesInvalid: a zero prefix is a configuration error.
func TestTrustedProxiesInvalid(t *testing.T) {
	b := memstore.New().Backend()
	keys, err := oidc2fa.NewKeyRing(oidc2fa.KeyRingConfig{})
	require.NoError(t, err)
	_, err = oidc2fa.New(oidc2fa.Config{
		Tenants: b.Tenants, Users: b.Users, Clients: b.Clients, Codes: b.Codes, Interactions: b.Interactions,
		Authenticator: &addrRecorder{}, Signer: keys, BaseURL: testBase,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), {}},
	})
	require.ErrorContains(t, err, "TrustedProxies")
}

// TestAddressLimitBehindProxies: behind a trusted proxy each client has its own quota, and a
// client that sends X-Forwarded-For itself cannot take another address's quota.
func TestAddressLimitBehindProxies(t *testing.T) {
	newLimited := func(t *testing.T, trusted []netip.Prefix) *env {
		lim, err := ratelimit.NewMemory(ratelimit.MemoryConfig{Rate: ratelimit.Rate{Limit: 1, Period: time.Minute, Burst: 1}})
		require.NoError(t, err)
		return newEnv(t, func(c *oidc2fa.Config) { c.AddressLimiter, c.TrustedProxies = lim, trusted })
	}
	send := func(e *env, remote string, xff ...string) int {
		req := httptest.NewRequest("GET", "/authorize/acme?"+e.authParams().Encode(), nil)
		req.RemoteAddr = remote
		for _, v := range xff {
			req.Header.Add("X-Forwarded-For", v)
		}
		rec := httptest.NewRecorder()
		e.handler.ServeHTTP(rec, req)
		return rec.Code
	}
	t.Run("without TrustedProxies every user is behind the balancer's address", func(t *testing.T) {
		e := newLimited(t, nil)
		assert.Equal(t, http.StatusSeeOther, send(e, "10.0.0.2:1000", "198.51.100.1"))
		assert.Equal(t, http.StatusTooManyRequests, send(e, "10.0.0.2:1001", "198.51.100.2"), "another user, one quota")
	})
	t.Run("with TrustedProxies each client has its own quota", func(t *testing.T) {
		e := newLimited(t, proxies)
		assert.Equal(t, http.StatusSeeOther, send(e, "10.0.0.2:1000", "198.51.100.1"))
		assert.Equal(t, http.StatusTooManyRequests, send(e, "10.0.0.3:1000", "198.51.100.1"), "the same client through another proxy")
		assert.Equal(t, http.StatusSeeOther, send(e, "10.0.0.2:1001", "198.51.100.2"))
		assert.Equal(t, http.StatusTooManyRequests, send(e, "10.0.0.2:1002", "192.0.2.99, 198.51.100.2"),
			"a forged entry left of the proxy's changes nothing")
	})
	t.Run("a spoofed header from an untrusted peer is ignored", func(t *testing.T) {
		e := newLimited(t, proxies)
		assert.Equal(t, http.StatusSeeOther, send(e, "203.0.113.7:1000", "198.51.100.1"))
		assert.Equal(t, http.StatusTooManyRequests, send(e, "203.0.113.7:1001", "198.51.100.2"))
	})
}

// addrRecorder is an authenticator that records the client address of each login request and
// shows a page.
type addrRecorder struct {
	mu    sync.Mutex
	addrs []netip.Addr
}

func (a *addrRecorder) ServeLogin(w http.ResponseWriter, _ *http.Request, l *oidc2fa.Login) {
	a.mu.Lock()
	a.addrs = append(a.addrs, l.ClientAddr)
	a.mu.Unlock()
	_, _ = w.Write([]byte("login page"))
}

// TestLoginClientAddr: the authenticator sees the same client address as the address limit.
func TestLoginClientAddr(t *testing.T) {
	rec := &addrRecorder{}
	e := newEnv(t, func(c *oidc2fa.Config) { c.Authenticator, c.TrustedProxies = rec, proxies })
	visit := func(remote string, xff ...string) {
		t.Helper()
		b := e.browser()
		res := b.do("GET", "/authorize/acme?"+e.authParams().Encode(), nil)
		require.Equal(t, http.StatusSeeOther, res.Code)
		req := httptest.NewRequest("GET", res.Header().Get("Location")[len("/oidc"):], nil)
		req.RemoteAddr = remote
		for _, v := range xff {
			req.Header.Add("X-Forwarded-For", v)
		}
		for _, c := range b.cookies {
			req.AddCookie(c)
		}
		out := httptest.NewRecorder()
		e.handler.ServeHTTP(out, req)
		require.Equal(t, http.StatusOK, out.Code, "%s", out.Body)
	}
	visit("10.0.0.2:1000", "192.0.2.66, 198.51.100.1")
	visit("203.0.113.7:1000", "198.51.100.1")
	visit("[2001:db8:ffff::1]:1000", "2001:db8:1::5")
	assert.Equal(t, []netip.Addr{netip.MustParseAddr("198.51.100.1"), netip.MustParseAddr("203.0.113.7"),
		netip.MustParseAddr("2001:db8:1::5")}, rec.addrs)
}
