package picture_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/internal/testclock"
	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/picture"
)

// fakeClock is the picture login's clock in the lock tests.
type fakeClock = testclock.Clock

// clockedEnv is newEnv with the picture login on a fake clock.
func clockedEnv(t *testing.T, configure ...func(*picture.Config)) (*env, *fakeClock) {
	clk := testclock.At(time.Now().Truncate(time.Second))
	e := newEnv(t, append([]func(*picture.Config){func(c *picture.Config) { c.Now = clk.Now }}, configure...)...)
	return e, clk
}

// signIn runs signInFrom from loopback.
func (e *env) signIn(hint string, attempts ...string) url.Values {
	e.t.Helper()
	return e.signInFrom("", hint, attempts...)
}

// signInFrom runs one sign-in of hint from the address from with the points of each attempt in turn, and returns the
// query the client gets, or nil when the last attempt went back to the page.
func (e *env) signInFrom(from, hint string, attempts ...string) url.Values {
	e.t.Helper()
	b := e.browserFrom(from)
	loginURL, pg := e.login(b, hint)
	for i, pts := range attempts {
		p := e.attempt(b, loginURL, pg, pts)
		if p.location != loginURL {
			require.Equal(e.t, len(attempts)-1, i, "the flow ended after attempt %d of %d", i+1, len(attempts))
			return toClient(e.t, p)
		}
		pg = b.get(loginURL)
		require.Contains(e.t, pg.body, "That did not match. Try again.")
	}
	return nil
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

var (
	right = picture.FormatPoints(annPoints)
	wrong = shift(annPoints, 0, 45)
)

func (e *env) lockedUntil(t *testing.T) time.Time {
	t.Helper()
	until, err := e.auth.LockedUntil(context.Background(), "acme", e.ann.ID)
	require.NoError(t, err)
	return until
}

// TestLockBacksOff: five failures lock the factor for a minute from the last one, and the
// right points fail until then; once it has passed they sign in.
func TestLockBacksOff(t *testing.T) {
	e, clk := clockedEnv(t)
	t0 := clk.Now()
	assert.Equal(t, "access_denied", e.signIn("ann", repeat(wrong, 5)...).Get("error"))
	assert.Equal(t, t0.Add(time.Minute), e.lockedUntil(t))

	clk.Advance(59 * time.Second)
	assert.Nil(t, e.signIn("ann", right), "locked: the right points are answered as wrong ones")
	// That attempt counted: the sixth failure locks for two minutes from it.
	assert.Equal(t, clk.Now().Add(2*time.Minute), e.lockedUntil(t))

	clk.Advance(2*time.Minute - time.Second)
	assert.Nil(t, e.signIn("ann", right), "still locked")
	clk.Advance(4*time.Minute + time.Second)
	assert.True(t, e.lockedUntil(t).IsZero(), "the lock has ended")
	assert.NotEmpty(t, e.signIn("ann", right).Get("code"), "after the lock the right points sign in")
	assert.True(t, e.lockedUntil(t).IsZero())
	c, err := e.b.Pictures.Get(context.Background(), "acme", e.ann.ID)
	require.NoError(t, err)
	assert.Zero(t, c.Failures, "a success resets the count")
}

// TestLockDoublesToTheCap: every failure during a lock counts and doubles it, up to LockMax.
func TestLockDoublesToTheCap(t *testing.T) {
	e, clk := clockedEnv(t, func(c *picture.Config) { c.LockMax = 5 * time.Minute })
	assert.Equal(t, "access_denied", e.signIn("ann", repeat(wrong, 5)...).Get("error"))
	want := []time.Duration{2 * time.Minute, 4 * time.Minute, 5 * time.Minute, 5 * time.Minute}
	b := e.browser()
	loginURL, pg := e.login(b, "ann")
	for i, d := range want {
		clk.Advance(time.Second)
		p := e.attempt(b, loginURL, pg, right)
		require.Equal(t, loginURL, p.location, "attempt %d", i+1)
		pg = b.get(loginURL)
		assert.Equal(t, clk.Now().Add(d), e.lockedUntil(t), "failure %d", 6+i)
	}
	locked, err := e.auth.Locked(context.Background(), "acme", e.ann.ID)
	require.NoError(t, err)
	assert.True(t, locked)

	require.NoError(t, e.auth.Unlock(context.Background(), "acme", e.ann.ID))
	assert.True(t, e.lockedUntil(t).IsZero(), "an administrator's unlock ends it")
	assert.NotEmpty(t, e.signIn("ann", right).Get("code"))
}

// TestLockAfterExpiryChecksOneOfConcurrentAttempts: when a lock has ended, of several guesses
// sent at once only one is checked; the others count as failures unchecked, so a lock cannot
// be raced past.
func TestLockAfterExpiryChecksOneOfConcurrentAttempts(t *testing.T) {
	e, clk := clockedEnv(t)
	assert.Equal(t, "access_denied", e.signIn("ann", repeat(wrong, 5)...).Get("error"))
	clk.Advance(2 * time.Minute)
	checkedBefore := strings.Count(e.log.String(), `reason="wrong picture"`)
	const n = 6
	type flow struct {
		b        *browser
		loginURL string
		pg       *page
	}
	flows := make([]flow, n)
	for i := range flows {
		b := e.browser()
		loginURL, pg := e.login(b, "ann")
		flows[i] = flow{b, loginURL, pg}
	}
	var wg sync.WaitGroup
	for _, f := range flows {
		wg.Go(func() {
			p := f.b.post(f.loginURL, url.Values{"csrf": {f.pg.csrf(t)}, "points": {wrong}})
			assert.Equal(t, f.loginURL, p.location, "every guess fails the same way")
		})
	}
	wg.Wait()
	log := e.log.String()
	assert.Equal(t, 1, strings.Count(log, `reason="wrong picture"`)-checkedBefore, "one guess was checked")
	assert.Equal(t, n-1, strings.Count(log, "reason=locked attempt="), "the others were not")
	c, err := e.b.Pictures.Get(context.Background(), "acme", e.ann.ID)
	require.NoError(t, err)
	assert.Equal(t, 5+n, c.Failures, "each counted")
}

// TestEverySignInGetsTheSameAttempts: a user with earlier failures, a locked user and an
// unknown user all get five attempts in one sign-in before the client hears access_denied.
func TestEverySignInGetsTheSameAttempts(t *testing.T) {
	e, _ := clockedEnv(t)
	assert.Nil(t, e.signIn("ann", repeat(wrong, 3)...), "three failures, then the person gives up")
	c, err := e.b.Pictures.Get(context.Background(), "acme", e.ann.ID)
	require.NoError(t, err)
	require.Equal(t, 3, c.Failures)

	for _, hint := range []string{"ann", "ann", "nobody@example.com", "carol"} {
		q := e.signIn(hint, repeat(wrong, 5)...) // fails the test if the flow ends before the fifth
		require.NotNil(t, q, hint)
		assert.Equal(t, "access_denied", q.Get("error"), hint)
	}
	locked, err := e.auth.Locked(context.Background(), "acme", e.ann.ID)
	require.NoError(t, err)
	assert.True(t, locked, "ann's count reached the limit during the second sign-in")
}

// TestDecoyImageFollowsTheStoreFolding: hints that the store takes for one userName show one
// decoy image.
func TestDecoyImageFollowsTheStoreFolding(t *testing.T) {
	e := newEnv(t)
	image := func(hint string) string {
		b := e.browser()
		loginURL, _ := e.login(b, hint)
		return b.get(loginURL + "/image").body
	}
	want := image("ross@example.com")
	for _, hint := range []string{"ROSS@EXAMPLE.COM", "roſſ@example.com", "Roſs@Example.com"} {
		assert.Equal(t, want, image(hint), hint)
	}
}

func TestLockConfigErrors(t *testing.T) {
	for name, cfg := range map[string]func(*picture.Config){
		"negative base":      func(c *picture.Config) { c.LockBase = -time.Second },
		"negative max":       func(c *picture.Config) { c.LockMax = -time.Second },
		"max below the base": func(c *picture.Config) { c.LockBase, c.LockMax = time.Hour, time.Minute },
	} {
		c := picture.Config{Credentials: newEnv(t).b.Pictures, Peppers: []picture.Pepper{testPepper}}
		cfg(&c)
		_, err := picture.New(c)
		assert.Error(t, err, name)
	}
}

// enrollByClient asks the enrollment endpoint, as the client's backend, for a link for hint,
// and returns the status and the decoded answer.
func (e *env) enrollByClient(hint string) (int, map[string]any) {
	e.t.Helper()
	form := url.Values{"client_id": {e.clientID}, "client_secret": {e.secret}, "login_hint": {hint},
		"redirect_uri": {testRedirect}, "state": {"es"}}
	resp, err := http.PostForm(e.srv.URL+"/oidc/enroll/acme", form)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	var body map[string]any
	require.NoError(e.t, json.NewDecoder(resp.Body).Decode(&body))
	return resp.StatusCode, body
}

// TestClientEnrollmentNeverReplaces: a client's link without proof of a recent sign-in sets up
// a first picture password only. For an enrolled user there is no link; for one who enrolls
// while the link is open, finishing it changes nothing.
func TestClientEnrollmentNeverReplaces(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	status, body := e.enrollByClient("ann")
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "login_required", body["error"], "ann has a picture password")

	status, body = e.enrollByClient("carol")
	require.Equal(t, http.StatusOK, status, "%v", body)
	link, _ := body["enrollment_url"].(string)
	b := e.browser()
	p := b.post(link, url.Values{})
	require.Equal(t, http.StatusSeeOther, p.status, p.body)
	enrollURL := p.location
	pg := b.get(enrollURL)
	require.Equal(t, http.StatusOK, pg.status)

	// Meanwhile carol gets a picture password another way.
	require.NoError(t, e.auth.Enroll(ctx, "acme", e.carol.ID, "harbour", annPoints))
	q := toClient(t, b.post(enrollURL, enrollForm(pg, t, "beach", newPoints, newPoints)))
	assert.Equal(t, "access_denied", q.Get("error"))
	assert.Contains(t, e.log.String(), "may not replace it")

	lb := e.browser()
	loginURL, lp := e.login(lb, "carol")
	assert.NotEmpty(t, toClient(t, e.attempt(lb, loginURL, lp, right)).Get("code"), "the first password stands")
}

// TestClientFirstEnrollment: a client's link for a user without a picture password sets one up.
func TestClientFirstEnrollment(t *testing.T) {
	e := newEnv(t)
	status, body := e.enrollByClient("carol")
	require.Equal(t, http.StatusOK, status, "%v", body)
	b := e.browser()
	p := b.post(body["enrollment_url"].(string), url.Values{})
	enrollURL := p.location
	pg := b.get(enrollURL)
	q := toClient(t, b.post(enrollURL, enrollForm(pg, t, "beach", newPoints, newPoints)))
	assert.Equal(t, "complete", q.Get("enrollment"))
	assert.NotContains(t, e.log.String(), "picture password replaced")
	lb := e.browser()
	loginURL, lp := e.login(lb, "carol")
	assert.NotEmpty(t, toClient(t, e.attempt(lb, loginURL, lp, picture.FormatPoints(newPoints))).Get("code"))
}

// TestAdminEnrollmentReplacesAndSaysSo: an administrator's link replaces, and the log says so.
func TestAdminEnrollmentReplacesAndSaysSo(t *testing.T) {
	e := newEnv(t)
	b, enrollURL, pg := e.openEnrollment(enrollmentFor("ann"))
	p := b.post(enrollURL, enrollForm(pg, t, "beach", newPoints, newPoints))
	require.Equal(t, http.StatusOK, p.status, p.body)
	assert.Contains(t, e.log.String(), "picture password replaced")
	lb := e.browser()
	loginURL, lp := e.login(lb, "ann")
	assert.NotEmpty(t, toClient(t, e.attempt(lb, loginURL, lp, picture.FormatPoints(newPoints))).Get("code"))
}

func enrollmentFor(user string) oidc2fa.EnrollmentRequest {
	return oidc2fa.EnrollmentRequest{User: user}
}
