package main

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/cookiejar"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/examples/internal/cli"
)

// forwardingTransport sends every request as a proxy would that was reached from addr.
type forwardingTransport struct{ addr string }

func (f forwardingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Forwarded-For", f.addr)
	return http.DefaultTransport.RoundTrip(r)
}

// from is alice's (or anyone's) browser at addr, behind a proxy that forwards it, with cookies
// of its own.
func (l *pictureLogin) from(t *testing.T, addr string) *pictureLogin {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	c := *l
	c.browser = &http.Client{Jar: jar, Transport: forwardingTransport{addr},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &c
}

// signIn runs one sign-in of alice with the points of each attempt, and returns the query the
// demo client gets at the end, or nil when the last attempt went back to the page.
func (l *pictureLogin) signIn(t *testing.T, attempts ...string) map[string][]string {
	t.Helper()
	f := l.start(t)
	for _, pts := range attempts {
		resp := f.post(t, pts)
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		loc := mustLocation(t, resp)
		if strings.HasPrefix(loc.String(), demoRedirect) {
			return loc.Query()
		}
	}
	return nil
}

// TestTrustedProxy: behind a load balancer (here: the test, on loopback, setting
// X-Forwarded-For), -trusted-proxy makes each user's own address count, so an outsider's
// failures lock only the outsider's network; without it every user is behind the balancer's
// address, and the outsider's failures lock alice too.
func TestTrustedProxy(t *testing.T) {
	wrong := "5,5;15,15;25,25;35,35;45,45"
	outsiderLocks := func(t *testing.T, extra ...string) (alice map[string][]string) {
		s := startService(t, extra...)
		l := newPictureLogin(t, s.vars)
		q := l.from(t, "203.0.113.7").signIn(t, wrong, wrong, wrong, wrong, wrong)
		require.NotNil(t, q)
		require.Equal(t, "access_denied", q["error"][0])
		return l.from(t, "198.51.100.20").signIn(t, demoPointsValue())
	}
	t.Run("with -trusted-proxy alice signs in", func(t *testing.T) {
		q := outsiderLocks(t, "-trusted-proxy", "127.0.0.0/8,::1", "-trusted-proxy", "10.0.0.0/8")
		require.NotNil(t, q)
		assert.NotEmpty(t, q["code"], "%v", q)
	})
	t.Run("without it every user is behind one address", func(t *testing.T) {
		assert.Nil(t, outsiderLocks(t), "the outsider's lock holds for alice: her right points fail")
	})
}

func TestParseTrustedProxies(t *testing.T) {
	got, err := parseTrustedProxies("10.0.0.0/8, 192.0.2.7,2001:db8::/32,::ffff:192.0.2.8, 172.16.5.9/12")
	require.NoError(t, err)
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32"),
		netip.MustParsePrefix("2001:db8::/32"), netip.MustParsePrefix("192.0.2.8/32"), netip.MustParsePrefix("172.16.0.0/12")}
	assert.Equal(t, want, got)
	for _, bad := range []string{"", "10.0.0.0/33", "lb.example.com", "10.0.0.0/8,"} {
		var stdout, stderr bytes.Buffer
		err := run(t.Context(), inMemory([]string{"-addr", "127.0.0.1:0", "-trusted-proxy", bad}), &stdout, &stderr)
		var ue *cli.UsageError
		assert.True(t, errors.As(err, &ue), "%q: %v", bad, err)
		assert.Contains(t, err.Error()+stderr.String(), "-trusted-proxy", bad)
		assert.Empty(t, stdout.String())
	}
}

// TestTrustedProxySCIM: the SCIM limit on requests without a valid key counts each forwarded
// client behind -trusted-proxy, and the balancer's address without it.
func TestTrustedProxySCIM(t *testing.T) {
	send := func(t *testing.T, base, from string) int {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/Users", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer scimkey_wrong")
		req.Header.Set("X-Forwarded-For", from)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	exhaust := func(t *testing.T, base string) {
		for i := 0; ; i++ {
			require.Less(t, i, 100, "the limit never answered 429")
			if send(t, base, "203.0.113.7") == http.StatusTooManyRequests {
				return
			}
		}
	}
	t.Run("with -trusted-proxy", func(t *testing.T) {
		s := startService(t, "-trusted-proxy", "127.0.0.1")
		exhaust(t, s.vars["scim_base_url"])
		assert.Equal(t, http.StatusUnauthorized, send(t, s.vars["scim_base_url"], "198.51.100.20"), "another client has its own budget")
	})
	t.Run("without it", func(t *testing.T) {
		s := startService(t)
		exhaust(t, s.vars["scim_base_url"])
		assert.Equal(t, http.StatusTooManyRequests, send(t, s.vars["scim_base_url"], "198.51.100.20"), "one budget for all")
	})
}
