package picture_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestOutsiderCannotLockTheUser: five wrong attempts by someone who knows only ann's name, from
// another network, lock that network and not ann, who signs in from hers.
func TestOutsiderCannotLockTheUser(t *testing.T) {
	e, _ := clockedEnv(t)
	assert.Equal(t, "access_denied", e.signInFrom("203.0.113.7", "ann", repeat(wrong, 5)...).Get("error"))
	assert.NotEmpty(t, e.signInFrom("198.51.100.20", "ann", right).Get("code"), "ann's own network is not locked")
	assert.Nil(t, e.signInFrom("203.0.113.99", "ann", right), "the outsider's network stays locked, even with the right points")
}
