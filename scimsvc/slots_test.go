package scimsvc

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSlots proves that slots admits at most its limit per key, that keys are counted apart, and
// that a key whose requests are all done takes no memory.
func TestSlots(t *testing.T) {
	for _, tt := range []struct {
		name  string
		limit int
		keys  int
	}{
		{"one slot, one key", 1, 1},
		{"four slots, many keys", 4, 100},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSlots(tt.limit)
			for k := range tt.keys {
				key := fmt.Sprint("key_", k)
				for range tt.limit {
					require.True(t, s.acquire(key))
				}
				assert.False(t, s.acquire(key), "beyond the limit")
			}
			assert.Len(t, s.used, tt.keys)
			for k := range tt.keys {
				for range tt.limit {
					s.release(fmt.Sprint("key_", k))
				}
			}
			assert.Empty(t, s.used, "keys without requests in progress are forgotten")
		})
	}
}

// TestSlotsConcurrent proves that concurrent requests of one key never hold more slots than the
// limit and leave none behind.
func TestSlotsConcurrent(t *testing.T) {
	s := newSlots(3)
	var mu sync.Mutex
	held, most := 0, 0
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				if !s.acquire("key_a") {
					continue
				}
				mu.Lock()
				held++
				most = max(most, held)
				mu.Unlock()
				mu.Lock()
				held--
				mu.Unlock()
				s.release("key_a")
			}
		}()
	}
	wg.Wait()
	assert.LessOrEqual(t, most, 3)
	assert.Empty(t, s.used)
}
