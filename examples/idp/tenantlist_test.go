package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

// storeWithTenants is a new SQLite store holding the tenants t0000 … t(n-1), made straight in
// the store (n runs of "idp tenant create" would take long).
func storeWithTenants(t *testing.T, n int) string {
	t.Helper()
	db := newStore(t)
	d, err := openDB(t.Context(), db)
	require.NoError(t, err)
	defer d.close()
	for i := range n {
		require.NoError(t, d.Tenants.Create(t.Context(), store.Tenant{ID: fmt.Sprintf("t%04d", i), DisplayName: fmt.Sprintf("Tenant %d", i)}))
	}
	return db
}

// tenantListLines runs "idp tenant list" with args and returns the ids it lists and its next:
// line ("" without one).
func tenantListLines(t *testing.T, db string, args ...string) (ids []string, next string) {
	t.Helper()
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), append([]string{"tenant", "list", "-db", db}, args...), &out, io.Discard))
	for line := range strings.Lines(out.String()) {
		line = strings.TrimSuffix(line, "\n")
		if after, ok := strings.CutPrefix(line, "next: "); ok {
			require.Empty(t, next, "one next: line")
			next = after
			continue
		}
		require.Empty(t, next, "the next: line comes last")
		id, _, _ := strings.Cut(strings.TrimPrefix(line, "tenant="), " ")
		require.True(t, strings.HasPrefix(line, "tenant="), "line %q", line)
		ids = append(ids, id)
	}
	return ids, next
}

// span is the ids t(from) … t(to-1).
func span(from, to int) []string {
	var ids []string
	for i := from; i < to; i++ {
		ids = append(ids, fmt.Sprintf("t%04d", i))
	}
	return ids
}

// TestTenantListPages: "idp tenant list" prints 100 tenants and a next: line whose command,
// pasted, prints the next 100; the last page has no next: line.
func TestTenantListPages(t *testing.T) {
	db := storeWithTenants(t, 230)
	ids, next := tenantListLines(t, db)
	assert.Equal(t, span(0, 100), ids)
	assert.Equal(t, "go run ./examples/idp tenant list --after t0099 -db "+shellQuote(db), next)

	ids, next = tenantListLines(t, db, "--after", "t0099")
	assert.Equal(t, span(100, 200), ids)
	assert.Equal(t, "go run ./examples/idp tenant list --after t0199 -db "+shellQuote(db), next)

	ids, next = tenantListLines(t, db, "--after", "t0199")
	assert.Equal(t, span(200, 230), ids)
	assert.Empty(t, next, "the last page")
}

// TestTenantListLimit: --limit sets the page's size, and the next: line keeps it; a full last
// page has no next: line, as no tenant follows it.
func TestTenantListLimit(t *testing.T) {
	db := storeWithTenants(t, 6)
	var walked []string
	var commands []string
	args := []string{"--limit", "3"}
	for {
		ids, next := tenantListLines(t, db, args...)
		require.LessOrEqual(t, len(ids), 3)
		walked = append(walked, ids...)
		if next == "" {
			break
		}
		commands = append(commands, next)
		require.Less(t, len(commands), 5, "the walk does not end")
		after := ids[len(ids)-1]
		args = []string{"--after", after, "--limit", "3"}
	}
	assert.Equal(t, span(0, 6), walked)
	assert.Equal(t, []string{"go run ./examples/idp tenant list --after t0002 --limit 3 -db " + shellQuote(db)}, commands)

	ids, next := tenantListLines(t, db, "--limit", "1000", "--after", "t0003")
	assert.Equal(t, []string{"t0004", "t0005"}, ids)
	assert.Empty(t, next)
	ids, next = tenantListLines(t, db, "--after", "t0005")
	assert.Empty(t, ids, "nothing after the last tenant")
	assert.Empty(t, next)
	ids, next = tenantListLines(t, db, "--after", "t0002-gone", "--limit", "1")
	assert.Equal(t, []string{"t0003"}, ids, "--after needs no tenant of its id")
	assert.Contains(t, next, "--after t0003 --limit 1")
}

// TestTenantListEmptyStore: a store without tenants lists nothing, and no next: line.
func TestTenantListEmptyStore(t *testing.T) {
	ids, next := tenantListLines(t, newStore(t))
	assert.Empty(t, ids)
	assert.Empty(t, next)
}

// TestTenantListBadLimit: a --limit below 1, above 1000 or not a number is a usage error (exit
// status 2) that says what is allowed.
func TestTenantListBadLimit(t *testing.T) {
	db := storeWithTenants(t, 1)
	for _, limit := range []string{"0", "-1", "1001"} {
		t.Run(limit, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), []string{"tenant", "list", "--limit", limit, "-db", db}, &stdout, &stderr)
			var exitOut bytes.Buffer
			assert.Equal(t, 2, exitCode(err, &exitOut))
			assert.True(t, strings.HasPrefix(exitOut.String(), "idp: --limit "+limit+": want 1 to 1000 tenants a page"), "%s", exitOut.String())
			assert.Empty(t, stdout.String())
		})
	}
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"tenant", "list", "--limit", "ten", "-db", db}, &stdout, &stderr)
	assert.Equal(t, 2, exitCode(err, io.Discard))
	assert.Empty(t, stdout.String())
}
