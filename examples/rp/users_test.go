package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
}

func TestUsersCheck(t *testing.T) {
	u := newUsers()
	require.NoError(t, u.add("Bob@Example.com", "hunter2"))
	for _, tt := range []struct {
		email, password string
		want            string // "" for refused
	}{
		{demoEmail, demoPassword, demoEmail},
		{" ALICE@example.com ", demoPassword, demoEmail},
		{demoEmail, demoPassword + " ", ""},
		{demoEmail, "", ""},
		{"bob@example.com", "hunter2", "bob@example.com"},
		{"bob@example.com", demoPassword, ""},
		{"nobody@example.com", "no user has this password", ""},
		{"", "", ""},
	} {
		got, ok := u.check(t.Context(), tt.email, tt.password)
		assert.Equal(t, tt.want != "", ok, "%q %q", tt.email, tt.password)
		assert.Equal(t, tt.want, got, "%q %q", tt.email, tt.password)
	}
}

func TestUsersKeepOnlyHashes(t *testing.T) {
	a, b := hashPassword(demoPassword), hashPassword(demoPassword)
	assert.NotEqual(t, a.salt, b.salt, "a salt per hash")
	assert.NotEqual(t, a.key, b.key)
	assert.True(t, a.matches(demoPassword))
	assert.True(t, b.matches(demoPassword))
}

func TestUsersLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	writeFile(t, good, "# the team\n\nbob@example.com:pass:with:colons\r\n  carol@example.com : spaces kept \n")
	u := newUsers()
	n, err := u.load(good)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	assert.Equal(t, 3, u.len(), "and the demo user")
	_, ok := u.check(t.Context(), "bob@example.com", "pass:with:colons")
	assert.True(t, ok, "the password is all after the first colon")
	_, ok = u.check(t.Context(), "carol@example.com", " spaces kept ")
	assert.True(t, ok, "the password is taken as written")

	for _, tt := range []struct{ name, content, want string }{
		{"no colon", "bob@example.com\n", ":1: want email:password"},
		{"no password", "bob@example.com:\n", ":1: want email:password"},
		{"not an email", "# header\nbob:secret\n", `:2: "bob" is not an email address`},
		{"duplicate", "bob@example.com:a\nBOB@example.com:b\n", ":2: bob@example.com is listed twice"},
		{"the demo user", "alice@example.com:another\n", ":1: alice@example.com is listed twice"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "bad")
			writeFile(t, path, tt.content)
			_, err := newUsers().load(path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), path+tt.want)
		})
	}

	_, err = newUsers().load(filepath.Join(dir, "missing"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
