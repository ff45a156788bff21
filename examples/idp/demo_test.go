package main

import (
	"bytes"
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

// newStore makes a visid store in a SQLite file of the test's own, as the service's first start
// does, and returns its -db.
func newStore(t *testing.T) string {
	t.Helper()
	db := "sqlite:" + filepath.Join(t.TempDir(), "idp.db")
	d, err := openDB(t.Context(), db)
	require.NoError(t, err)
	require.NoError(t, d.close())
	return db
}

// keysOfLines are the keys of key=value lines.
func keysOfLines(lines []string) []string {
	var keys []string
	for _, l := range lines {
		k, _, _ := strings.Cut(l, "=")
		keys = append(keys, k)
	}
	return keys
}

// demoKeys are the keys of the lines the service prints when it makes the demo.
var demoKeys = []string{"tenant", "scim_base_url", "scim_api_key", "issuer", "client_id", "client_secret",
	"redirect_uri", "demo_user", "demo_image", "demo_points"}

// TestDemoMode: the demo (tenant demo, alice, a SCIM key, the client of examples/rp) is made
// only in demo mode, which is on for SQLite and memory and off for PostgreSQL unless -demo says
// otherwise; outside demo mode the store stays empty and the service prints how to make the
// first tenant, key and client.
func TestDemoMode(t *testing.T) {
	for _, tt := range []struct {
		name string
		db   func(t *testing.T) string
		flag []string
		demo bool
	}{
		// TestBinary runs the README's command, without -db.
		{"default sqlite file", func(t *testing.T) string { t.Chdir(t.TempDir()); return defaultDB }, nil, true},
		{"memory", func(*testing.T) string { return "memory" }, nil, true},
		{"sqlite file, -demo=false", func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "idp.db") }, []string{"-demo=false"}, false},
		{"memory, -demo=false", func(*testing.T) string { return "memory" }, []string{"-demo=false"}, false},
		{"postgres", pgStore, nil, false},
		{"postgres, -demo", pgStore, []string{"-demo"}, true},
		{"postgres, -demo=true", pgStore, []string{"-demo=true"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := tt.db(t)
			s := startService(t, append(tt.flag, "-db", db)...)
			hints := s.hintsAfter(t, "Stop the service")
			require.NoError(t, s.stop(t))
			switch {
			case tt.demo:
				assert.Equal(t, demoKeys, keysOfLines(s.lines))
			case db == "memory":
				assert.Equal(t, []string{"base_url", "tenants"}, keysOfLines(s.lines))
				assert.Contains(t, hints, "admin commands cannot reach it", "no commands that would work on another store")
			default:
				assert.Equal(t, []string{"base_url", "tenants"}, keysOfLines(s.lines))
				assert.Equal(t, "tenants=0", s.lines[1])
				assert.Contains(t, hints, "demo mode, -demo, is off")
				assert.Contains(t, hints, `go run ./examples/idp tenant create acme --name "Acme Corp" -db `+shellQuote(db))
				assert.NotContains(t, hints, "scimkey_")
				assert.NotContains(t, hints, "secret_")
			}
			if db == "memory" {
				return // gone with the service; the lines above say what it held
			}
			d, err := openDB(t.Context(), db)
			require.NoError(t, err)
			defer d.close()
			tenants, err := d.Tenants.List(t.Context(), "", store.MaxTenantPage)
			require.NoError(t, err)
			if tt.demo {
				require.Len(t, tenants, 1)
				assert.Equal(t, demoTenant, tenants[0].ID)
				users, err := d.Users.List(t.Context(), demoTenant, store.Query{Count: -1})
				require.NoError(t, err)
				require.Len(t, users.Resources, 1)
				assert.Equal(t, demoUser, users.Resources[0].UserName)
			} else {
				assert.Empty(t, tenants, "nothing made outside demo mode")
				keys, err := d.APIKeys.List(t.Context())
				require.NoError(t, err)
				assert.Empty(t, keys)
			}
		})
	}
}

// TestProductionFirstStart: outside demo mode, the commands the first start prints make the
// first tenant, its API key and its client, as printed; the next start finds the tenant.
func TestProductionFirstStart(t *testing.T) {
	for _, tt := range []struct {
		name string
		db   func(t *testing.T) string
		flag []string
	}{
		{"sqlite, -demo=false", func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "idp.db") }, []string{"-demo=false"}},
		{"postgres", pgStore, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := tt.db(t)
			s := startService(t, append(tt.flag, "-db", db)...)
			var commands [][]string
			for line := range strings.Lines(s.hintsAfter(t, "Stop the service")) {
				if rest, ok := strings.CutPrefix(line, "  go run ./examples/idp "); ok {
					commands = append(commands, shellWords(t, rest))
				}
			}
			require.Len(t, commands, 3, "%s", s.hints)
			vars := map[string]string{}
			for _, args := range commands {
				var out, errOut bytes.Buffer
				require.NoError(t, run(t.Context(), args, &out, &errOut), "%q: %s", args, errOut.String())
				for line := range strings.Lines(out.String()) {
					if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
						vars[k] = v
					}
				}
			}
			assert.Equal(t, "acme", vars["tenant"])
			assert.Regexp(t, `^scimkey_`, vars["scim_api_key"])
			assert.Regexp(t, `^secret_`, vars["client_secret"])
			resp, _ := scimRequest(t, "GET", scimBaseURL(s.vars["base_url"], "acme")+"/Users", vars["scim_api_key"], "")
			assert.Equal(t, 200, resp.StatusCode, "the key works on the running service")
			require.NoError(t, s.stop(t))

			again := startService(t, append(tt.flag, "-db", db)...)
			assert.Equal(t, "tenants=1", again.lines[1])
			assert.Contains(t, again.hintsAfter(t, "Stop the service"), "/scim/v2/T")
		})
	}
}

// hintsAfter waits until the service has printed want after its key=value lines and returns
// what it printed there.
func (s *service) hintsAfter(t *testing.T, want string) string {
	t.Helper()
	require.Eventually(t, func() bool { return strings.Contains(s.hints.String(), want) }, 10*time.Second, 10*time.Millisecond,
		"the service printed %q", s.hints)
	return s.hints.String()
}

// shellWords splits a command line the way a POSIX shell would for the quoting shellQuote and
// the start's hints use: words separated by spaces, '…' and "…" quoted.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; c {
		case ' ', '\n':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case '\'', '"':
			end := strings.IndexByte(line[i+1:], c)
			require.GreaterOrEqual(t, end, 0, "unterminated quote in %q", line)
			w.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// pgStore is a PostgreSQL schema of the test's own, without visid's tables.
func pgStore(t *testing.T) string {
	t.Setenv(kekEnv, base64.StdEncoding.EncodeToString(randomKEK()))
	return postgresSchema(t, serviceEnv(t, "VISID_TEST_POSTGRES_DSN"))
}

// TestREADMEProductionStart: the documentation (docs/production.md) shows what the first start
// outside demo mode prints.
func TestREADMEProductionStart(t *testing.T) {
	readme := allDocs(t)
	var out strings.Builder
	printProduction(&out, "http://localhost:8080", "sqlite:prod.db", 0)
	lines := 0
	for line := range strings.Lines(out.String()) {
		if strings.HasPrefix(line, "Then give") {
			break // the README stops before the last lines
		}
		assert.Contains(t, readme, strings.TrimSpace("# "+line), "README.md and docs/ lack the line %q", line)
		lines++
	}
	assert.Greater(t, lines, 8)
}
