package memstore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOrderedSet compares an orderedSet with a sorted slice under random adds, removes and pages
// across many chunk splits and merges.
func TestOrderedSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var o orderedSet
	want := map[string]bool{}
	sorted := func() []string {
		out := make([]string, 0, len(want))
		for s := range want {
			out = append(out, s)
		}
		slices.Sort(out)
		return out
	}
	for i := range 20000 {
		s := fmt.Sprintf("t%05d", rng.IntN(5000))
		if rng.IntN(3) == 0 {
			require.Equal(t, want[s], o.remove(s), "remove %s", s)
			delete(want, s)
		} else {
			require.Equal(t, !want[s], o.add(s), "add %s", s)
			want[s] = true
		}
		require.Equal(t, len(want), o.len())
		if i%997 == 0 {
			all := sorted()
			require.Equal(t, all, o.after("", len(all)+1))
			after := fmt.Sprintf("t%05d", rng.IntN(5000))
			limit := 1 + rng.IntN(700)
			j, found := slices.BinarySearch(all, after)
			if found {
				j++
			}
			wantPage := all[j:min(len(all), j+limit)]
			require.Equal(t, wantPage, append([]string{}, o.after(after, limit)...), "after %s limit %d", after, limit)
		}
	}
	require.Empty(t, o.after("zzz", 10))
	require.Empty(t, o.after("", 0))
}
