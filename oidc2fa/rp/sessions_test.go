package rp_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa/rp"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

func session(state string) rp.Session {
	return rp.Session{State: state, Nonce: "nonce-" + state, Verifier: strings.Repeat("v", 43), LoginHint: "ann@example.com"}
}

// save runs Save as a login handler would and returns the cookies it set.
func save(t *testing.T, s rp.Sessions, sess rp.Session) []*http.Cookie {
	t.Helper()
	rec := httptest.NewRecorder()
	require.NoError(t, s.Save(rec, httptest.NewRequest("POST", "https://app.example.com/login", nil), sess))
	return rec.Result().Cookies()
}

// take runs Take as a callback handler would, with the given cookies.
func take(s rp.Sessions, state string, cookies []*http.Cookie) (rp.Session, []*http.Cookie, error) {
	req := httptest.NewRequest("GET", "https://app.example.com/2fa/callback?state="+state, nil)
	for _, c := range cookies {
		req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
	}
	rec := httptest.NewRecorder()
	got, err := s.Take(rec, req, state)
	return got, rec.Result().Cookies(), err
}

// TestSessionsContract holds both implementations to the Sessions contract.
func TestSessionsContract(t *testing.T) {
	for _, kind := range sessionKinds {
		t.Run(kind.name, func(t *testing.T) {
			t.Run("save then take once", func(t *testing.T) {
				c := newClock()
				s := kind.make(t, c.Now)
				cookies := save(t, s, session("a"))
				got, cleared, err := take(s, "a", cookies)
				require.NoError(t, err)
				assert.Equal(t, session("a"), got)
				require.Len(t, cleared, 1)
				assert.Negative(t, cleared[0].MaxAge, "the cookie is cleared")
				_, _, err = take(s, "a", cookies)
				require.ErrorIs(t, err, rp.ErrState, "a second Take fails")
			})
			t.Run("unknown state", func(t *testing.T) {
				s := kind.make(t, newClock().Now)
				cookies := save(t, s, session("a"))
				_, _, err := take(s, "b", cookies)
				require.ErrorIs(t, err, rp.ErrState)
				_, _, err = take(s, "a", cookies)
				require.NoError(t, err, "a failed Take leaves other sessions alone")
			})
			t.Run("another browser", func(t *testing.T) {
				s := kind.make(t, newClock().Now)
				save(t, s, session("a"))
				_, _, err := take(s, "a", nil)
				require.ErrorIs(t, err, rp.ErrState)
			})
			t.Run("expiry", func(t *testing.T) {
				c := newClock()
				s := kind.make(t, c.Now)
				cookies := save(t, s, session("a"))
				c.Advance(rp.DefaultSessionTTL - time.Second)
				saveB := save(t, s, session("b"))
				_, _, err := take(s, "b", saveB)
				require.NoError(t, err)
				c.Advance(time.Second)
				_, _, err = take(s, "a", cookies)
				require.ErrorIs(t, err, rp.ErrState)
			})
			t.Run("two sign-ins in one browser", func(t *testing.T) {
				s := kind.make(t, newClock().Now)
				cookies := append(save(t, s, session("a")), save(t, s, session("b"))...)
				require.Len(t, cookies, 2)
				assert.NotEqual(t, cookies[0].Name, cookies[1].Name, "each sign-in has its own cookie")
				got, _, err := take(s, "b", cookies)
				require.NoError(t, err)
				assert.Equal(t, "b", got.State)
				got, _, err = take(s, "a", cookies)
				require.NoError(t, err)
				assert.Equal(t, "a", got.State)
			})
			t.Run("concurrent takes", func(t *testing.T) {
				s := kind.make(t, newClock().Now)
				cookies := save(t, s, session("a"))
				const n = 16
				errs := make(chan error, n)
				var wg sync.WaitGroup
				for range n {
					wg.Go(func() {
						_, _, err := take(s, "a", cookies)
						errs <- err
					})
				}
				wg.Wait()
				close(errs)
				won := 0
				for err := range errs {
					if err == nil {
						won++
					} else {
						assert.ErrorIs(t, err, rp.ErrState)
					}
				}
				assert.Equal(t, 1, won, "exactly one Take succeeds")
			})
			t.Run("cookie attributes", func(t *testing.T) {
				s := kind.make(t, newClock().Now)
				rec := httptest.NewRecorder()
				require.NoError(t, s.Save(rec, httptest.NewRequest("POST", "http://localhost/login", nil), session("a")))
				cookies := rec.Result().Cookies()
				require.Len(t, cookies, 1)
				c := cookies[0]
				assert.True(t, strings.HasPrefix(c.Name, rp.DefaultCookieName+"_"))
				assert.True(t, c.HttpOnly)
				assert.False(t, c.Secure, "plain http, Secure not configured")
				assert.Equal(t, http.SameSiteLaxMode, c.SameSite, "Lax: sent on the provider's redirect back")
				assert.Equal(t, "/", c.Path)
				assert.Equal(t, int(rp.DefaultSessionTTL/time.Second), c.MaxAge)
				assert.NotContains(t, c.Value, "nonce-a", "nothing readable in the cookie")
				assert.NotContains(t, c.Value, "ann")
			})
		})
	}
}

func TestSessionsConfig(t *testing.T) {
	s, err := rp.NewServerSessions(rp.ServerSessionsConfig{Name: "app_2fa", Path: "/2fa/", Secure: true, TTL: time.Minute})
	require.NoError(t, err)
	c, err := rp.NewCookieSessions(rp.CookieSessionsConfig{Key: testKey, Name: "app_2fa", Path: "/2fa/", Secure: true, TTL: time.Minute})
	require.NoError(t, err)
	for _, sessions := range []rp.Sessions{s, c} {
		rec := httptest.NewRecorder()
		require.NoError(t, sessions.Save(rec, httptest.NewRequest("POST", "http://app.example.com/login", nil), session("a")))
		cookies := rec.Result().Cookies()
		require.Len(t, cookies, 1)
		assert.True(t, strings.HasPrefix(cookies[0].Name, "app_2fa_"))
		assert.Equal(t, "/2fa/", cookies[0].Path)
		assert.True(t, cookies[0].Secure)
		assert.Equal(t, 60, cookies[0].MaxAge)
	}

	for name, err := range map[string]error{
		"server: negative TTL":         second(rp.NewServerSessions(rp.ServerSessionsConfig{TTL: -time.Second})),
		"server: negative MaxSessions": second(rp.NewServerSessions(rp.ServerSessionsConfig{MaxSessions: -1})),
		"server: bad cookie name":      second(rp.NewServerSessions(rp.ServerSessionsConfig{Name: "a;b"})),
		"cookie: no key":               second(rp.NewCookieSessions(rp.CookieSessionsConfig{})),
		"cookie: 16-byte key":          second(rp.NewCookieSessions(rp.CookieSessionsConfig{Key: testKey[:16]})),
		"cookie: 33-byte key":          second(rp.NewCookieSessions(rp.CookieSessionsConfig{Key: append(testKey, 'x')})),
		"cookie: negative TTL":         second(rp.NewCookieSessions(rp.CookieSessionsConfig{Key: testKey, TTL: -time.Second})),
		"cookie: negative MaxUsed":     second(rp.NewCookieSessions(rp.CookieSessionsConfig{Key: testKey, MaxUsed: -1})),
		"cookie: bad cookie name":      second(rp.NewCookieSessions(rp.CookieSessionsConfig{Key: testKey, Name: "a b"})),
	} {
		assert.Error(t, err, name)
	}
}

func second[T any](_ T, err error) error { return err }

func TestServerSessionsBounded(t *testing.T) {
	c := newClock()
	s, err := rp.NewServerSessions(rp.ServerSessionsConfig{Now: c.Now, MaxSessions: 3, TTL: time.Minute})
	require.NoError(t, err)
	cookies := map[string][]*http.Cookie{}
	for _, state := range []string{"a", "b", "c", "d"} {
		cookies[state] = save(t, s, session(state))
	}
	assert.Equal(t, 3, s.Len())
	_, _, err = take(s, "a", cookies["a"])
	require.ErrorIs(t, err, rp.ErrState, "the oldest was dropped to make room")
	_, _, err = take(s, "b", cookies["b"])
	require.NoError(t, err)
	assert.Equal(t, 2, s.Len())

	c.Advance(time.Minute)
	assert.Equal(t, 0, s.Len(), "expired sign-ins are dropped")

	// Many sign-ins over a long time: the store stays within its bound and keeps working.
	for i := range 1000 {
		state := fmt.Sprint("s", i)
		ck := save(t, s, session(state))
		if i%2 == 0 {
			_, _, err := take(s, state, ck)
			require.NoError(t, err)
		}
		c.Advance(time.Second)
		require.LessOrEqual(t, s.Len(), 3)
	}
}

func TestCookieSessionsTampering(t *testing.T) {
	c := newClock()
	s, err := rp.NewCookieSessions(rp.CookieSessionsConfig{Key: testKey, Now: c.Now})
	require.NoError(t, err)

	t.Run("every byte flipped", func(t *testing.T) {
		cookies := save(t, s, session("a"))
		value := cookies[0].Value
		for i := range len(value) {
			b := []byte(value)
			b[i] = flip(b[i])
			_, _, err := take(s, "a", []*http.Cookie{{Name: cookies[0].Name, Value: string(b)}})
			require.ErrorIs(t, err, rp.ErrState, "byte %d", i)
		}
		_, _, err := take(s, "a", cookies)
		require.NoError(t, err, "the unaltered cookie still works")
	})
	t.Run("truncated or empty", func(t *testing.T) {
		cookies := save(t, s, session("a"))
		for _, v := range []string{"", "abc", cookies[0].Value[:20], cookies[0].Value[:len(cookies[0].Value)-1]} {
			_, _, err := take(s, "a", []*http.Cookie{{Name: cookies[0].Name, Value: v}})
			require.ErrorIs(t, err, rp.ErrState)
		}
	})
	t.Run("another sign-in's cookie", func(t *testing.T) {
		ca, cb := save(t, s, session("a")), save(t, s, session("b"))
		_, _, err := take(s, "b", ca)
		require.ErrorIs(t, err, rp.ErrState, "a's cookie under its own name")
		_, _, err = take(s, "b", []*http.Cookie{{Name: cb[0].Name, Value: ca[0].Value}})
		require.ErrorIs(t, err, rp.ErrState, "a's cookie renamed to b's")
		_, _, err = take(s, "b", cb)
		require.NoError(t, err)
	})
	t.Run("another key", func(t *testing.T) {
		other, err := rp.NewCookieSessions(rp.CookieSessionsConfig{Key: []byte("another key of 32 bytes, exactly"), Now: c.Now})
		require.NoError(t, err)
		cookies := save(t, other, session("a"))
		_, _, err = take(s, "a", cookies)
		require.ErrorIs(t, err, rp.ErrState)
	})
	t.Run("replay after expiry", func(t *testing.T) {
		cookies := save(t, s, session("x"))
		_, _, err := take(s, "x", cookies)
		require.NoError(t, err)
		c.Advance(rp.DefaultSessionTTL)
		_, _, err = take(s, "x", cookies)
		require.ErrorIs(t, err, rp.ErrState)
	})
}

// TestCookieSessionsInTheFlow tampers with the cookie of a real sign-in.
func TestCookieSessionsInTheFlow(t *testing.T) {
	p := newIDP(t, true)
	e := newRP(t, p, sessionKinds[1].make(t, p.clock.Now))

	f := e.begin(t)
	e.authorize(t, f, "approve")
	b := []byte(f.cookies[0].Value)
	b[len(b)/2] = flip(b[len(b)/2])
	_, _, err := e.finish(f, []*http.Cookie{{Name: f.cookies[0].Name, Value: string(b)}}, nil)
	require.ErrorIs(t, err, rp.ErrState)

	f1, f2 := e.begin(t), e.begin(t)
	e.authorize(t, f2, "approve")
	_, _, err = e.finish(f2, []*http.Cookie{{Name: f2.cookies[0].Name, Value: f1.cookies[0].Value}}, nil)
	require.ErrorIs(t, err, rp.ErrState, "the cookie of another state")
	_, _, err = e.finish(f2, f1.cookies, nil)
	require.ErrorIs(t, err, rp.ErrState)
	assert.Zero(t, p.tokenHits.Load())
	res, _, err := e.finish(f2, f2.cookies, nil)
	require.NoError(t, err)
	assert.Equal(t, p.user.ID, res.Subject)
}

// flip changes a base64url character into another one.
func flip(c byte) byte {
	if c == 'A' {
		return 'B'
	}
	return 'A'
}
