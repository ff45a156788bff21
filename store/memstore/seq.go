package memstore

// record is what a seq holds: it knows its position, so it can be removed in O(log n) and
// index candidates can be put back in creation order.
type record interface {
	comparable
	setPos(int)
	position() int
}

// seq keeps records in creation order. Removal leaves a hole, so positions stay stable and
// paging never sorts; a Fenwick tree over the live slots finds the k-th live record in
// O(log n), so a page deep into a large tenant costs no more than the first one. When holes
// outnumber live records the slice is compacted, which moves positions; a record's stamp, its
// creation sequence number, never moves, so keyset paging (store.Position.Seq) survives
// compaction.
type seq[T record] struct {
	slots  []T
	stamps []int64 // stamps[pos] is the creation sequence number of the record of slot pos
	next   int64   // the stamp of the next record pushed
	tree   []int32 // Fenwick tree: tree[i] counts the live slots in (i-lowbit(i), i], 1-based
	live   int
}

func lowbit(i int) int { return i & -i }

// push appends x and returns its position.
func (s *seq[T]) push(x T) {
	pos := len(s.slots)
	s.slots = append(s.slots, x)
	s.next++
	s.stamps = append(s.stamps, s.next)
	x.setPos(pos)
	if len(s.tree) == 0 {
		s.tree = append(s.tree, 0)
	}
	n := pos + 1
	sum := int32(1)
	for k := 1; k < lowbit(n); k <<= 1 {
		sum += s.tree[n-k]
	}
	s.tree = append(s.tree, sum)
	s.live++
}

// remove empties position pos.
func (s *seq[T]) remove(pos int) {
	var zero T
	s.slots[pos] = zero
	for i := pos + 1; i < len(s.tree); i += lowbit(i) {
		s.tree[i]--
	}
	s.live--
	if dead := len(s.slots) - s.live; dead > 64 && dead > s.live {
		s.compact()
	}
}

// nth returns the position of the k-th live record (k from 0); k must be below s.live.
func (s *seq[T]) nth(k int) int {
	pos, rem := 0, int32(k+1)
	step := 1
	for step*2 < len(s.tree) {
		step *= 2
	}
	for ; step > 0; step >>= 1 {
		if next := pos + step; next < len(s.tree) && s.tree[next] < rem {
			pos = next
			rem -= s.tree[next]
		}
	}
	return pos // the 1-based index pos+1 holds it, which is slot pos
}

func (s *seq[T]) compact() {
	var zero T
	live := s.slots[:0]
	stamps := s.stamps[:0]
	for i, x := range s.slots {
		if x != zero {
			x.setPos(len(live))
			live = append(live, x)
			stamps = append(stamps, s.stamps[i])
		}
	}
	clear(s.slots[len(live):])
	s.slots = live
	s.stamps = stamps
	s.tree = s.tree[:len(live)+1]
	for i := 1; i < len(s.tree); i++ {
		s.tree[i] = 1
	}
	for i := 1; i < len(s.tree); i++ {
		if j := i + lowbit(i); j < len(s.tree) {
			s.tree[j] += s.tree[i]
		}
	}
}

// stamp returns the creation sequence number of the record at position pos.
func (s *seq[T]) stamp(pos int) int64 { return s.stamps[pos] }

// from returns the first position whose stamp is at least stamp (len(s.slots) if none);
// stamps grow with positions.
func (s *seq[T]) from(stamp int64) int {
	lo, hi := 0, len(s.stamps)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s.stamps[m] < stamp {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}
