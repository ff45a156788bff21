package memstore

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestMultiIndex adds and removes records of one key through the one-record and shared forms,
// and checks that get gives them in the order they were added.
func TestMultiIndex(t *testing.T) {
	var m multiIndex[int]
	assert.Empty(t, m.get("k"), "the zero index holds nothing")
	m.remove("k", 1) // nor does removing from it fail
	m.add("", 9)
	assert.Nil(t, m.one, "the empty key makes no map")
	assert.Empty(t, m.get(""), "the empty key is not indexed")
	m.add("k", 1)
	assert.Equal(t, []int{1}, m.get("k"))
	m.add("k", 2)
	m.add("k", 3)
	assert.Equal(t, []int{1, 2, 3}, m.get("k"))
	m.remove("k", 4) // not there
	m.remove("k", 1)
	assert.Equal(t, []int{2, 3}, m.get("k"))
	m.remove("k", 3)
	assert.Equal(t, []int{2}, m.get("k"))
	assert.Empty(t, m.more, "one record left is kept without a slice")
	m.remove("k", 7)
	assert.Equal(t, []int{2}, m.get("k"), "removing another record leaves the key's")
	m.add("k", 5)
	assert.Equal(t, []int{2, 5}, m.get("k"))
	m.remove("k", 2)
	m.remove("k", 5)
	assert.Empty(t, m.get("k"))
	assert.Empty(t, m.one)
	assert.Empty(t, m.more)
}
