package picture

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/argon2"

	"github.com/visid/visid/store"
)

// A picture password costs one argon2id computation per attempt, at OWASP's minimum parameters
// by default. Compare in one run:
//
//	go test ./oidc2fa/picture/ -run '^$' -bench 'Argon2id|VerifyPicture' -count 5
//
// BenchmarkArgon2id is the baseline (argon2.IDKey alone at the default parameters);
// BenchmarkVerifyPicture is a whole verify (parse-free: discretization, HMAC, argon2id under the
// semaphore, comparison) and should stay within a few percent of it.
// BenchmarkVerifyPictureConcurrent checks the memory bound: many simultaneous attempts use at
// most maxConcurrent × MemoryKiB of argon2id memory.

var defaultArgon = Argon2Params{
	Time:      DefaultArgon2Time,
	MemoryKiB: DefaultArgon2MemoryKiB,
	Threads:   DefaultArgon2Threads,
}

func benchHasher(b *testing.B, maxConcurrent int) (*hasher, *store.PictureCredential) {
	b.Helper()
	h, err := newHasher([]Pepper{{ID: "bench", Key: testKey(9)}}, defaultArgon, maxConcurrent)
	if err != nil {
		b.Fatal(err)
	}
	c := newCredential(testPoints)
	if err := h.enroll(context.Background(), &c, testPoints); err != nil {
		b.Fatal(err)
	}
	return h, &c
}

func reportMillis(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(time.Millisecond), "ms/op")
}

func BenchmarkArgon2id(b *testing.B) {
	password, salt := testKey(1), testKey(2)[:saltLen]
	for b.Loop() {
		argon2.IDKey(password, salt, defaultArgon.Time, defaultArgon.MemoryKiB, defaultArgon.Threads, hashLen)
	}
	reportMillis(b)
}

func BenchmarkVerifyPicture(b *testing.B) {
	h, c := benchHasher(b, 1)
	ctx := context.Background()
	for b.Loop() {
		ok, err := h.verify(ctx, c, testPoints)
		if err != nil || !ok {
			b.Fatalf("verify = %v, %v", ok, err)
		}
	}
	reportMillis(b)
}

// heapObjects is the memory of heap objects: live ones and dead ones not yet swept.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// sampleHeap reads heapObjects every millisecond until stop is closed, then sends the highest
// value seen on peak.
func sampleHeap(stop <-chan struct{}, peak chan<- uint64) {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	high := heapObjects()
	for {
		select {
		case <-stop:
			peak <- max(high, heapObjects())
			return
		case <-tick.C:
			high = max(high, heapObjects())
		}
	}
}

func BenchmarkVerifyPictureConcurrent(b *testing.B) {
	const callers = 200
	const MiB = 1 << 20
	maxConcurrent := runtime.GOMAXPROCS(0)
	h, c := benchHasher(b, maxConcurrent)
	ctx := context.Background()
	bound := uint64(maxConcurrent) * uint64(defaultArgon.MemoryKiB) * 1024

	// Each argon2id computation allocates its memory and drops it when done. With the default
	// GOGC the heap may hold as much garbage as live memory before the collector runs, so heap
	// in use would be about twice the live argon2id memory, whatever the bound. GOGC=1 makes
	// the collector run as soon as the heap grows by 1%, so heap in use follows live memory,
	// plus the one or two blocks dropped while a collection runs. That hides no broken bound:
	// more than maxConcurrent computations at once would be more live memory. The 64 MiB slack
	// assumes GOMAXPROCS is no more than the CPUs available: oversubscribed, collections lag
	// behind and more dropped blocks pile up.
	defer debug.SetGCPercent(debug.SetGCPercent(1))
	runtime.GC()
	baseline := heapObjects()
	stop, peakc := make(chan struct{}), make(chan uint64)
	go sampleHeap(stop, peakc)

	var failed atomic.Int64
	for b.Loop() {
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				if ok, err := h.verify(ctx, c, testPoints); err != nil || !ok {
					failed.Add(1)
				}
			})
		}
		wg.Wait()
	}
	close(stop)
	peak := <-peakc
	grew := peak - min(baseline, peak)

	if n := failed.Load(); n > 0 {
		b.Fatalf("%d verifies failed", n)
	}
	b.ReportMetric(float64(b.Elapsed())/float64(b.N*callers)/float64(time.Millisecond), "ms/verify")
	b.ReportMetric(float64(grew)/MiB, "peak-heap-MiB")
	b.ReportMetric(float64(bound)/MiB, "bound-MiB")
	b.ReportMetric(float64(h.peak.Load()), "peak-inflight")
	if grew > bound+64*MiB {
		b.Fatalf("heap grew by %.1f MiB, more than the bound %.1f MiB + 64 MiB", float64(grew)/MiB, float64(bound)/MiB)
	}
}
