package picture_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/internal/telemetrytest"
	"github.com/visid/visid/oidc2fa/picture"
	"github.com/visid/visid/store"
)

// TestAmbiguousHintLooksLikeAnUnknownUser: a login hint that is one user's primary email and
// another's userName names nobody. The person sees what an unknown user sees (the decoy page,
// the same answers), even with the right points of either user; the log and the attempts
// metric say why, and name no one.
func TestAmbiguousHintLooksLikeAnUnknownUser(t *testing.T) {
	rec := telemetrytest.New(t)
	e := newEnv(t, func(c *picture.Config) { c.MeterProvider = rec.MeterProvider })
	ctx := context.Background()
	quentin, err := e.b.Users.Create(ctx, "acme", store.User{UserName: "quentin", Active: true,
		Emails: []store.MultiValue{{Value: "quentin@example.com", Primary: true}}})
	require.NoError(t, err)
	twin, err := e.b.Users.Create(ctx, "acme", store.User{UserName: "QUENTIN@example.com", Active: true,
		Emails: []store.MultiValue{{Value: "mallory@example.com", Primary: true}}})
	require.NoError(t, err)
	for _, u := range []*store.User{quentin, twin} {
		require.NoError(t, e.auth.Enroll(ctx, "acme", u.ID, "harbour", annPoints))
	}

	type seen struct {
		page, again string
		statuses    []int
		final       string
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
		for range picture.DefaultMaxFailures {
			p := e.attempt(b, loginURL, pg, right) // the right points of quentin and of his twin
			s.statuses = append(s.statuses, p.status)
			if p.location != loginURL {
				q := toClient(t, p)
				require.Empty(t, q.Get("code"), "%s: nobody passes", hint)
				s.final = q.Encode()
				break
			}
			pg = b.get(loginURL)
			require.Equal(t, http.StatusOK, pg.status)
			s.again = normalize(pg.body, loginURL)
		}
		return s
	}
	want := run("nobody@example.com")
	require.NotEmpty(t, want.final)
	e.log.mu.Lock()
	e.log.b.Reset()
	e.log.mu.Unlock()
	hints := []string{"quentin@example.com", "QUENTIN@EXAMPLE.COM", "Quentin@Example.com"}
	for _, hint := range hints {
		got := run(hint)
		assert.Equal(t, want, got, "%s: what the person and the client see", hint)
	}

	m := rec.Metrics(t)
	assert.Equal(t, map[string]int64{
		"visid.outcome=unknown_user":   int64(picture.DefaultMaxFailures),
		"visid.outcome=ambiguous_hint": int64(len(hints) * picture.DefaultMaxFailures),
	}, m[picture.MetricAttempts])
	log := e.log.String()
	assert.Regexp(t, `reason="ambiguous hint"`, log, "the log says why")
	for _, name := range []string{"quentin", "mallory", quentin.ID, twin.ID} {
		assert.False(t, strings.Contains(strings.ToLower(log), strings.ToLower(name)), "the log names %q:\n%s", name, log)
	}
}
