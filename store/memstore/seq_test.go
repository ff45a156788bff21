package memstore

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

type item struct{ id, pos int }

func (it *item) setPos(p int)  { it.pos = p }
func (it *item) position() int { return it.pos }

// TestSeqNth checks the Fenwick selection against a plain list through random pushes and
// removals, compactions included.
func TestSeqNth(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var s seq[*item]
	var want []*item
	for step := 0; step < 5000; step++ {
		if len(want) > 0 && r.IntN(3) == 0 {
			i := r.IntN(len(want))
			s.remove(want[i].pos)
			want = append(want[:i], want[i+1:]...)
		} else {
			it := &item{id: step}
			s.push(it)
			want = append(want, it)
		}
		require.Equal(t, len(want), s.live)
		if len(want) > 0 {
			k := r.IntN(len(want))
			require.Same(t, want[k], s.slots[s.nth(k)], "step %d k %d", step, k)
		}
	}
}
