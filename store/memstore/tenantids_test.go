package memstore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tenantIDs holds what a sorted slice would, through inserts and removes in any order that
// split blocks, empty them and join them, and pages from any cursor as the slice would.
func TestTenantIDsMatchSortedSlice(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var x tenantIDs
	var want []string
	held := map[string]bool{}
	for step := range 20000 {
		id := fmt.Sprintf("t%05d", r.IntN(5000))
		if held[id] && step%3 != 0 {
			x.remove(id)
			i, _ := slices.BinarySearch(want, id)
			want = slices.Delete(want, i, i+1)
			delete(held, id)
		} else if !held[id] {
			x.insert(id)
			i, _ := slices.BinarySearch(want, id)
			want = slices.Insert(want, i, id)
			held[id] = true
		}
		if step%997 == 0 {
			checkTenantIDs(t, &x, want)
		}
	}
	checkTenantIDs(t, &x, want)
	for _, id := range slices.Clone(want) {
		x.remove(id)
	}
	assert.Empty(t, x.blocks, "every block goes with its last id")
	x.remove("t00001") // an id x does not hold is ignored, on an empty x too
}

func checkTenantIDs(t *testing.T, x *tenantIDs, want []string) {
	t.Helper()
	var all []string
	for _, blk := range x.blocks {
		require.NotEmpty(t, blk)
		require.LessOrEqual(t, len(blk), idBlock)
		all = append(all, blk...)
	}
	require.Equal(t, want, all)
	for _, after := range []string{"", "t", "t00000", "t02500", "t024999", "t04999", "u"} {
		for _, limit := range []int{1, 7, 600, 10000} {
			var got []string
			x.page(after, limit, func(id string) { got = append(got, id) })
			i, found := slices.BinarySearch(want, after)
			if found {
				i++
			}
			exp := want[i:min(len(want), i+limit)]
			if len(exp) == 0 {
				exp = nil
			}
			require.Equal(t, exp, got, "page after %q, limit %d", after, limit)
		}
	}
}
