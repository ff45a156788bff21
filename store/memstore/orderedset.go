package memstore

import (
	"slices"
	"strings"
)

// orderedSetChunk is the most strings a chunk of an orderedSet holds before it splits in two.
const orderedSetChunk = 512

// orderedSet is a set of strings kept in order, in sorted chunks of at most orderedSetChunk, so
// that adding or removing one string moves at most a chunk's worth, and a page of the strings
// after a given one is found by two binary searches: what a store needs to page through 100,000
// tenants without sorting them each time. The zero value is empty; it has no lock of its own.
type orderedSet struct {
	chunks [][]string // each sorted and non-empty; every string of a chunk sorts before the next chunk's
	n      int
}

// chunkOf returns the index of the chunk where s is or would go.
func (o *orderedSet) chunkOf(s string) int {
	// The first chunk whose last string is >= s; the last chunk if none is.
	i, _ := slices.BinarySearchFunc(o.chunks, s, func(c []string, s string) int { return strings.Compare(c[len(c)-1], s) })
	return min(i, len(o.chunks)-1)
}

// add puts s in the set; it reports whether s was new.
func (o *orderedSet) add(s string) bool {
	if len(o.chunks) == 0 {
		o.chunks = [][]string{{s}}
		o.n = 1
		return true
	}
	ci := o.chunkOf(s)
	c := o.chunks[ci]
	j, found := slices.BinarySearch(c, s)
	if found {
		return false
	}
	c = slices.Insert(c, j, s)
	if len(c) > orderedSetChunk {
		half := len(c) / 2
		right := slices.Clone(c[half:])
		clear(c[half:]) // the strings now live in right
		o.chunks = slices.Insert(o.chunks, ci+1, right)
		c = c[:half]
	}
	o.chunks[ci] = c
	o.n++
	return true
}

// remove takes s out of the set; it reports whether s was there.
func (o *orderedSet) remove(s string) bool {
	if len(o.chunks) == 0 {
		return false
	}
	ci := o.chunkOf(s)
	c := o.chunks[ci]
	j, found := slices.BinarySearch(c, s)
	if !found {
		return false
	}
	c = slices.Delete(c, j, j+1)
	if len(c) == 0 {
		o.chunks = slices.Delete(o.chunks, ci, ci+1)
	} else {
		o.chunks[ci] = c
	}
	o.n--
	return true
}

// after returns up to limit strings of the set that sort after after (all of them from the
// first for an empty after), in order.
func (o *orderedSet) after(after string, limit int) []string {
	var out []string
	o.each(after, limit, func(s string) { out = append(out, s) })
	return out
}

// each calls fn with up to limit strings of the set that sort after after (from the first for an
// empty after), in order.
func (o *orderedSet) each(after string, limit int, fn func(string)) {
	if len(o.chunks) == 0 || limit < 1 {
		return
	}
	ci, j := 0, 0
	if after != "" {
		ci = o.chunkOf(after)
		var found bool
		if j, found = slices.BinarySearch(o.chunks[ci], after); found {
			j++
		}
	}
	for n := 0; ci < len(o.chunks) && n < limit; ci, j = ci+1, 0 {
		for _, s := range o.chunks[ci][j:] {
			if n == limit {
				return
			}
			fn(s)
			n++
		}
	}
}

// len returns how many strings the set holds.
func (o *orderedSet) len() int { return o.n }
