package store

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewIDFormat(t *testing.T) {
	id := NewID("user")
	require.True(t, strings.HasPrefix(id, "user_"), id)
	require.Len(t, id, len("user_")+26)
	for _, c := range id[len("user_"):] {
		assert.Contains(t, idAlphabet, string(c))
	}
}

// TestNewIDTimeOrdered: ids made in later milliseconds sort after earlier ones, whatever their
// random parts.
func TestNewIDTimeOrdered(t *testing.T) {
	start := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	var ids []string
	for i := range 2000 {
		ids = append(ids, newID("group", start.Add(time.Duration(i)*time.Millisecond)))
	}
	require.True(t, slices.IsSorted(ids))
	// The time comes first: the same millisecond decodes from every id made in it.
	a, b := newID("group", start), newID("group", start)
	assert.Equal(t, a[:len("group_")+10], b[:len("group_")+10])
	assert.NotEqual(t, a, b)
}

// TestNewIDUnguessable: 80 random bits; a hundred thousand ids in one millisecond never repeat.
func TestNewIDUnguessable(t *testing.T) {
	now := time.Now()
	seen := make(map[string]bool)
	for range 100_000 {
		id := newID("user", now)
		require.False(t, seen[id], id)
		seen[id] = true
	}
}

func TestValidTenantID(t *testing.T) {
	for id, want := range map[string]bool{
		"acme": true, "a": true, "acme-eu_1": true, "0day": true, strings.Repeat("a", 63): true,
		"": false, "Acme": false, "-acme": false, "_acme": false, "ac me": false, "acme/x": false,
		strings.Repeat("a", 64): false, "é": false,
	} {
		assert.Equal(t, want, ValidTenantID(id), "%q", id)
	}
}
