package picture_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/picture"
	"github.com/visid/visid/store"
)

func TestLoginRightPoints(t *testing.T) {
	for name, points := range map[string]string{
		"exact":         picture.FormatPoints(annPoints),
		"r away":        shift(annPoints, 20, -20),
		"r away, other": shift(annPoints, -20, 20),
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			b := e.browser()
			loginURL, pg := e.login(b, "ann")
			assert.Contains(t, pg.body, "Harbour")
			q := toClient(t, e.attempt(b, loginURL, pg, points))
			assert.NotEmpty(t, q.Get("code"))
			assert.Equal(t, "st", q.Get("state"))
		})
	}
}

func TestLoginWrongPointsLock(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	loginURL, pg := e.login(b, "ann")
	for i := 1; i < picture.DefaultMaxFailures; i++ {
		p := e.attempt(b, loginURL, pg, shift(annPoints, 21, 0))
		require.Equal(t, http.StatusSeeOther, p.status, "attempt %d", i)
		require.Equal(t, loginURL, p.location)
		pg = b.get(loginURL)
		require.Contains(t, pg.body, "That did not match. Try again.")
	}
	q := toClient(t, e.attempt(b, loginURL, pg, shift(annPoints, 21, 0)))
	assert.Equal(t, "access_denied", q.Get("error"))
	locked, err := e.auth.Locked(context.Background(), "acme", e.ann.ID)
	require.NoError(t, err)
	assert.True(t, locked)
	assert.NotContains(t, e.log.String(), "100,100")
	assert.True(t, strings.Contains(e.log.String(), "reason=\"wrong picture\""), e.log.String())
}

// failLogin makes n wrong attempts in one flow of hint and returns the last answer.
func (e *env) failLogin(b *browser, hint string, n int) *page {
	e.t.Helper()
	loginURL, pg := e.login(b, hint)
	var p *page
	for range n {
		p = e.attempt(b, loginURL, pg, shift(annPoints, 0, 45))
		if p.location != loginURL {
			return p
		}
		pg = b.get(loginURL)
	}
	return p
}

// TestLoginLooksTheSame: a wrong picture, an unknown, an inactive, an unenrolled and a locked
// user get the same page and the same answers; only the log tells them apart.
func TestLoginLooksTheSame(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	locked, err := e.b.Users.Create(ctx, "acme", store.User{UserName: "lena", Active: true})
	require.NoError(t, err)
	require.NoError(t, e.auth.Enroll(ctx, "acme", locked.ID, "harbour", annPoints))
	toClient(t, e.failLogin(e.browser(), "lena", picture.DefaultMaxFailures))
	isLocked, err := e.auth.Locked(ctx, "acme", locked.ID)
	require.NoError(t, err)
	require.True(t, isLocked)

	type seen struct {
		page, again string
		status      []int
		final       url.Values
	}
	normalize := func(s, loginURL string) string {
		s = strings.ReplaceAll(s, strings.TrimPrefix(loginURL, e.srv.URL), "LOGIN")
		s = csrfField.ReplaceAllString(s, `name="csrf" value="CSRF"`)
		return regexp.MustCompile(`alt="Your picture: [^"]*"`).ReplaceAllString(s, `alt="Your picture: IMAGE"`)
	}
	run := func(hint string) seen {
		b := e.browser()
		loginURL, pg := e.login(b, hint)
		s := seen{page: normalize(pg.body, loginURL)}
		for i := range picture.DefaultMaxFailures {
			p := e.attempt(b, loginURL, pg, shift(annPoints, 0, 45))
			s.status = append(s.status, p.status)
			if i < picture.DefaultMaxFailures-1 {
				require.Equal(t, loginURL, p.location, "%s: attempt %d goes back to the page", hint, i+1)
				pg = b.get(loginURL)
				s.again = normalize(pg.body, loginURL)
			} else {
				s.final = toClient(t, p)
			}
		}
		return s
	}
	want := run("ann")
	assert.Equal(t, "access_denied", want.final.Get("error"))
	assert.Contains(t, want.again, "That did not match. Try again.")
	for _, hint := range []string{"bob", "carol", "nobody@example.com", "lena"} {
		got := run(hint)
		assert.Equal(t, want.page, got.page, "%s: the page", hint)
		assert.Equal(t, want.again, got.again, "%s: the page after a failure", hint)
		assert.Equal(t, want.status, got.status, "%s: the answers", hint)
		assert.Equal(t, want.final, got.final, "%s: what the client hears", hint)
	}
	log := e.log.String()
	for _, reason := range []string{"wrong picture", "inactive user", "not enrolled", "unknown user", "locked"} {
		assert.Regexp(t, `reason="?`+reason+`"? `, log, "the log says which")
	}
}

// TestDecoyImageStable: the picture shown for a hint with nothing to check is the same on every
// visit, as a real user's is, and depends on the hint.
func TestDecoyImageStable(t *testing.T) {
	e := newEnv(t)
	image := func(hint string) string {
		b := e.browser()
		loginURL, _ := e.login(b, hint)
		return b.get(loginURL + "/image").body
	}
	for _, hint := range []string{"nobody@example.com", "carol"} {
		assert.Equal(t, image(hint), image(hint), hint)
	}
	seen := map[string]bool{}
	for i := range 30 {
		seen[image(fmt.Sprintf("user%d@example.com", i))] = true
	}
	assert.Greater(t, len(seen), 2, "decoys spread over the images")
}

func TestLoginSuccessResetsFailures(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	b := e.browser()
	loginURL, pg := e.login(b, "ann")
	for range 3 {
		require.Equal(t, loginURL, e.attempt(b, loginURL, pg, shift(annPoints, 0, 45)).location)
		pg = b.get(loginURL)
	}
	c, err := e.b.Pictures.Get(ctx, "acme", e.ann.ID)
	require.NoError(t, err)
	require.Equal(t, 3, c.Failures)
	assert.NotEmpty(t, toClient(t, e.attempt(b, loginURL, pg, picture.FormatPoints(annPoints))).Get("code"))
	c, err = e.b.Pictures.Get(ctx, "acme", e.ann.ID)
	require.NoError(t, err)
	assert.Zero(t, c.Failures)
}

func TestReenrollAndUnlockClearLock(t *testing.T) {
	ctx := context.Background()
	for name, clear := range map[string]func(e *env) []picture.Point{
		"enroll again": func(e *env) []picture.Point {
			pts := []picture.Point{{50, 50}, {950, 50}, {50, 700}, {950, 700}, {500, 375}}
			require.NoError(t, e.auth.Enroll(ctx, "acme", e.ann.ID, "cafe", pts))
			return pts
		},
		"unlock": func(e *env) []picture.Point {
			require.NoError(t, e.auth.Unlock(ctx, "acme", e.ann.ID))
			return annPoints
		},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			assert.Equal(t, "access_denied", toClient(t, e.failLogin(e.browser(), "ann", 5)).Get("error"))
			b := e.browser()
			loginURL, pg := e.login(b, "ann")
			require.Equal(t, loginURL, e.attempt(b, loginURL, pg, picture.FormatPoints(annPoints)).location,
				"locked: the right points fail")
			pts := clear(e)
			locked, err := e.auth.Locked(ctx, "acme", e.ann.ID)
			require.NoError(t, err)
			assert.False(t, locked)
			b = e.browser()
			loginURL, pg = e.login(b, "ann")
			assert.NotEmpty(t, toClient(t, e.attempt(b, loginURL, pg, picture.FormatPoints(pts))).Get("code"))
		})
	}
}

// TestLoginRehashOnUpgrade: a credential hashed with older parameters and pepper still passes,
// and the login rehashes it with the current ones.
func TestLoginRehashOnUpgrade(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	newPepper := picture.Pepper{ID: "p2", Key: bytes.Repeat([]byte{9}, 32)}
	upgraded, err := picture.New(picture.Config{Credentials: e.b.Pictures, Peppers: []picture.Pepper{newPepper, testPepper},
		Argon2: picture.Argon2Params{Time: 2, MemoryKiB: 128, Threads: 1}})
	require.NoError(t, err)
	e.ocfg.Authenticator = upgraded
	h, err := oidc2fa.New(e.ocfg)
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/oidc/", http.StripPrefix("/oidc", h))
	e.srv.Config.Handler = mux

	before, err := e.b.Pictures.Get(ctx, "acme", e.ann.ID)
	require.NoError(t, err)
	b := e.browser()
	loginURL, pg := e.login(b, "ann")
	assert.NotEmpty(t, toClient(t, e.attempt(b, loginURL, pg, shift(annPoints, 20, 20))).Get("code"))
	after, err := e.b.Pictures.Get(ctx, "acme", e.ann.ID)
	require.NoError(t, err)
	assert.Equal(t, "p2", after.PepperID)
	assert.Equal(t, uint32(2), after.ArgonTime)
	assert.Equal(t, uint32(128), after.ArgonMemory)
	assert.NotEqual(t, before.Hash, after.Hash)
	assert.Equal(t, before.Offsets, after.Offsets)

	b = e.browser()
	loginURL, pg = e.login(b, "ann")
	assert.NotEmpty(t, toClient(t, e.attempt(b, loginURL, pg, picture.FormatPoints(annPoints))).Get("code"), "the new hash passes")
}

func TestLoginCancel(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	loginURL, pg := e.login(b, "ann")
	q := toClient(t, b.post(loginURL+"/cancel", url.Values{"csrf": {pg.csrf(t)}}))
	assert.Equal(t, "access_denied", q.Get("error"))
	assert.Equal(t, "st", q.Get("state"))
}

func TestLoginMalformedPointsCount(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	loginURL, pg := e.login(b, "ann")
	for _, bad := range []string{"", "1,2", "1,2;3,4;5,6;7,8;9,10;11,12", "-1,2;3,4;5,6;7,8;9,10", "1000,0;3,4;5,6;7,8;9,10", "a,b;c"} {
		p := e.attempt(b, loginURL, pg, bad)
		if p.location != loginURL {
			assert.Equal(t, "access_denied", toClient(t, p).Get("error"))
			break
		}
		pg = b.get(loginURL)
		assert.Contains(t, pg.body, "That did not match. Try again.")
	}
	c, err := e.b.Pictures.Get(context.Background(), "acme", e.ann.ID)
	require.NoError(t, err)
	assert.Equal(t, picture.DefaultMaxFailures, c.Failures)
}

func TestLoginPageAndFiles(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	loginURL, pg := e.login(b, "ann")
	csp := "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; base-uri 'none'; frame-ancestors 'none'"
	check := func(p *page, ctype string) {
		t.Helper()
		assert.Equal(t, http.StatusOK, p.status)
		assert.True(t, strings.HasPrefix(p.header.Get("Content-Type"), ctype), p.header.Get("Content-Type"))
		assert.Equal(t, "no-store", p.header.Get("Cache-Control"))
		assert.Equal(t, "no-referrer", p.header.Get("Referrer-Policy"))
		assert.Equal(t, "nosniff", p.header.Get("X-Content-Type-Options"))
		assert.Contains(t, p.header.Get("Content-Security-Policy"), "default-src 'none'")
	}
	check(pg, "text/html")
	assert.Equal(t, csp, pg.header.Get("Content-Security-Policy"))
	assert.Contains(t, pg.body, `name="points"`)
	assert.Contains(t, pg.body, "5 points")
	assert.Contains(t, pg.body, "Example app asks you to confirm it")
	assert.NotContains(t, pg.body, "style=")
	js := b.get(loginURL + "/static/picture.js")
	check(js, "text/javascript")
	check(b.get(loginURL+"/static/picture.css"), "text/css")
	img := b.get(loginURL + "/image")
	check(img, "image/svg+xml")
	assert.Contains(t, img.header.Get("Content-Security-Policy"), "sandbox")
	assert.Equal(t, http.StatusNotFound, b.get(loginURL+"/elsewhere").status)
	assert.Equal(t, http.StatusMethodNotAllowed, b.get(loginURL+"/cancel").status)

	other := e.browser()
	assert.Equal(t, http.StatusForbidden, other.get(loginURL).status, "another browser")
	assert.Equal(t, http.StatusForbidden, b.post(loginURL, url.Values{"points": {picture.FormatPoints(annPoints)}}).status, "no CSRF token")
}
