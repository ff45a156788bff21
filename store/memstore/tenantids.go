package memstore

import (
	"slices"
	"sort"
)

// tenantIDs keeps the ids of a store's tenants in order, for Tenants.List. They are held in
// blocks of at most idBlock ids, so that a create or a delete moves the ids of one block and the
// slice of blocks (100,000 tenants make some 300 blocks), never every id, and a page starts after
// two binary searches: no call sorts the tenants.
type tenantIDs struct {
	// blocks are non-empty and sorted, and every id of blocks[i] orders before those of
	// blocks[i+1].
	blocks [][]string
}

// idBlock is the most ids a block holds; a block that grows past it splits in two.
const idBlock = 512

// find returns the index of the block that holds id, or would: the first whose last id is not
// below id, else the last block. There must be a block.
func (x *tenantIDs) find(id string) int {
	b := sort.Search(len(x.blocks), func(i int) bool {
		blk := x.blocks[i]
		return blk[len(blk)-1] >= id
	})
	return min(b, len(x.blocks)-1)
}

// insert adds id, which must not be in x.
func (x *tenantIDs) insert(id string) {
	if len(x.blocks) == 0 {
		x.blocks = [][]string{{id}}
		return
	}
	b := x.find(id)
	blk := x.blocks[b]
	i, _ := slices.BinarySearch(blk, id)
	blk = slices.Insert(blk, i, id)
	if len(blk) <= idBlock {
		x.blocks[b] = blk
		return
	}
	half := len(blk) / 2
	right := slices.Clone(blk[half:])
	clear(blk[half:]) // the strings now live in right
	x.blocks[b] = blk[:half]
	x.blocks = slices.Insert(x.blocks, b+1, right)
}

// remove takes id out of x; an id x does not hold is ignored. A block left empty goes, and one
// left small joins its right neighbour when both fit in one block, so that deletes do not leave
// many small blocks behind.
func (x *tenantIDs) remove(id string) {
	if len(x.blocks) == 0 {
		return
	}
	b := x.find(id)
	blk := x.blocks[b]
	i, ok := slices.BinarySearch(blk, id)
	if !ok {
		return
	}
	blk = slices.Delete(blk, i, i+1)
	switch {
	case len(blk) == 0:
		x.blocks = slices.Delete(x.blocks, b, b+1)
	case len(blk) < idBlock/4 && b+1 < len(x.blocks) && len(blk)+len(x.blocks[b+1]) <= idBlock:
		x.blocks[b] = append(blk, x.blocks[b+1]...)
		x.blocks = slices.Delete(x.blocks, b+1, b+2)
	default:
		x.blocks[b] = blk
	}
}

// page calls fn with the ids that order after after, in order, at most limit of them.
func (x *tenantIDs) page(after string, limit int, fn func(id string)) {
	b := sort.Search(len(x.blocks), func(i int) bool {
		blk := x.blocks[i]
		return blk[len(blk)-1] > after
	})
	if b == len(x.blocks) {
		return
	}
	i := sort.Search(len(x.blocks[b]), func(j int) bool { return x.blocks[b][j] > after })
	for ; b < len(x.blocks) && limit > 0; b, i = b+1, 0 {
		for _, id := range x.blocks[b][i:] {
			if limit == 0 {
				return
			}
			fn(id)
			limit--
		}
	}
}
