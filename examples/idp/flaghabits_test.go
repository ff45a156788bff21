package main

import (
	"bytes"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUnknownFlagOneLine: an unknown flag is one line that names the closest flag, and one
// line that says which help to run; never the whole help, which scrolls the error away.
func TestUnknownFlagOneLine(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"tenant", "set", "--tenant", "acme", "--color", "#123456"},
			[]string{"--color", "did you mean --accent-color?", `Run "idp help tenant" for usage.`}},
		{[]string{"client", "create", "--tenant", "acme", "--redirect-url", "https://a.example/cb"},
			[]string{"--redirect-url", "did you mean --redirect-uri?", `Run "idp help client" for usage.`}},
		{[]string{"-adr", "127.0.0.1:0"},
			[]string{"-adr", "did you mean -addr?", `Run "idp help" for usage.`}},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), append(tt.args, "-db", "memory"), &stdout, &stderr)
			require.Error(t, err)
			assert.Equal(t, 2, exitCode(err, &stderr))
			assert.Empty(t, stdout.String())
			out := stderr.String()
			assert.Equal(t, 2, strings.Count(out, "\n"), "two lines: %q", out)
			for _, w := range tt.want {
				assert.Contains(t, out, w)
			}
		})
	}
}

// TestHelpGroup: idp help tenant prints the tenant commands only.
func TestHelpGroup(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"help", "tenant"}, &stdout, &stderr))
	out := stdout.String()
	assert.Contains(t, out, "idp tenant set --tenant T")
	assert.NotContains(t, out, "idp client create")
	assert.Less(t, strings.Count(out, "\n"), 40)
}

// TestVersion: idp version and idp -version print the module's version and VCS revision.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"-version"}, {"--version"}} {
		var stdout, stderr bytes.Buffer
		require.NoError(t, run(t.Context(), args, &stdout, &stderr), "%q: %s", args, stderr.String())
		out := stdout.String()
		assert.Regexp(t, `^idp github\.com/visid/visid \S+ \(revision \S+\)\n$`, out, "%q", args)
	}
}

// TestFailedStartLeavesNoFiles: a start that fails (a taken port) leaves no idp.db or
// idp.db.key it made; files that were there stay.
func TestFailedStartLeavesNoFiles(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	dir := t.TempDir()
	t.Chdir(dir)
	var stdout, stderr bytes.Buffer
	err = run(t.Context(), []string{"-addr", busy.Addr().String(), "-admin-addr", ""}, &stdout, &stderr)
	require.Error(t, err)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "files left by a failed start")

	// A store made before is kept.
	db := newStore(t)
	path := strings.TrimPrefix(db, "sqlite:")
	err = run(t.Context(), []string{"-addr", busy.Addr().String(), "-admin-addr", "", "-db", db}, &stdout, &stderr)
	require.Error(t, err)
	assert.FileExists(t, path)
	assert.FileExists(t, path+".key")
}
