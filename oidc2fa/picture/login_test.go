package picture_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa/picture"
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
