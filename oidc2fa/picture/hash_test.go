package picture

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/argon2"

	"github.com/visid/visid/store"
)

// testArgon is cheap enough to run hundreds of times under -race.
var testArgon = Argon2Params{Time: 1, MemoryKiB: 64, Threads: 1}

func testKey(fill byte) []byte {
	return bytes.Repeat([]byte{fill}, 32)
}

func newTestHasher(t *testing.T, argon Argon2Params, peppers ...Pepper) *hasher {
	t.Helper()
	if len(peppers) == 0 {
		peppers = []Pepper{{ID: "p1", Key: testKey(1)}}
	}
	h, err := newHasher(peppers, argon, 4)
	require.NoError(t, err)
	return h
}

// testPoints are five points well inside the image, far enough from each other.
var testPoints = []Point{{100, 100}, {300, 200}, {500, 400}, {700, 600}, {900, 100}}

func testDigest(name string) []byte {
	d := sha256.Sum256([]byte(name))
	return d[:]
}

// newCredential is what the authenticator hands to enroll.
func newCredential(ps []Point) store.PictureCredential {
	return store.PictureCredential{
		Tenant:      "acme",
		UserID:      "user_1",
		Image:       "harbour",
		ImageDigest: testDigest("harbour"),
		Points:      len(ps),
		Tolerance:   DefaultTolerance,
	}
}

func enrolled(t *testing.T, h *hasher, ps []Point) store.PictureCredential {
	t.Helper()
	c := newCredential(ps)
	require.NoError(t, h.enroll(context.Background(), &c, ps))
	return c
}

func shifted(ps []Point, dx, dy int) []Point {
	out := make([]Point, len(ps))
	for i, p := range ps {
		out[i] = Point{X: p.X + dx, Y: p.Y + dy}
	}
	return out
}

func TestNewHasherErrors(t *testing.T) {
	good := []Pepper{{ID: "p1", Key: testKey(1)}}
	tests := []struct {
		name          string
		peppers       []Pepper
		argon         Argon2Params
		maxConcurrent int
		wantErr       string
	}{
		{"no pepper", nil, testArgon, 1, "at least one pepper"},
		{"short key", []Pepper{{ID: "p1", Key: make([]byte, 31)}}, testArgon, 1, "at least 32 bytes"},
		{"short old key", []Pepper{good[0], {ID: "p0", Key: make([]byte, 16)}}, testArgon, 1, "at least 32 bytes"},
		{"empty ID", []Pepper{{Key: testKey(1)}}, testArgon, 1, "needs an ID"},
		{"duplicate ID", []Pepper{good[0], {ID: "p1", Key: testKey(2)}}, testArgon, 1, "listed twice"},
		{"time 0", good, Argon2Params{Time: 0, MemoryKiB: 64, Threads: 1}, 1, "time"},
		{"threads 0", good, Argon2Params{Time: 1, MemoryKiB: 64, Threads: 0}, 1, "threads"},
		{"memory below 8 KiB per thread", good, Argon2Params{Time: 1, MemoryKiB: 31, Threads: 4}, 1, "memory"},
		{"zero params", good, Argon2Params{}, 1, "argon2id"},
		{"maxConcurrent 0", good, testArgon, 0, "concurrent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := newHasher(tt.peppers, tt.argon, tt.maxConcurrent)
			require.Error(t, err)
			assert.Nil(t, h)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}

	h, err := newHasher(good, Argon2Params{Time: 1, MemoryKiB: 32, Threads: 4}, 1)
	require.NoError(t, err)
	assert.NotNil(t, h)
}

func TestEnroll(t *testing.T) {
	h := newTestHasher(t, testArgon)
	c := enrolled(t, h, testPoints)

	wantOffsets, _ := discretize(testPoints, DefaultTolerance)
	assert.Equal(t, currentScheme, c.Scheme)
	assert.Equal(t, wantOffsets, c.Offsets)
	assert.Equal(t, "p1", c.PepperID)
	assert.Len(t, c.Salt, 16)
	assert.Len(t, c.Hash, 32)
	assert.Equal(t, testArgon, paramsOf(&c))
	assert.False(t, h.stale(&c))

	// Another enrollment of the same points has another salt, so another hash.
	c2 := enrolled(t, h, testPoints)
	assert.NotEqual(t, c.Salt, c2.Salt)
	assert.NotEqual(t, c.Hash, c2.Hash)
}

func TestEnrollErrors(t *testing.T) {
	h := newTestHasher(t, testArgon)
	tests := []struct {
		name    string
		edit    func(c *store.PictureCredential)
		ps      []Point
		wantErr string
	}{
		{"fewer points than Points", nil, testPoints[:4], "want 5 points, got 4"},
		{"no points", nil, nil, "want 5 points, got 0"},
		{"X at Width", nil, []Point{{100, 100}, {300, 200}, {500, 400}, {700, 600}, {Width, 100}}, "out of range"},
		{"Y at Height", nil, []Point{{100, Height}, {300, 200}, {500, 400}, {700, 600}, {900, 100}}, "out of range"},
		{"negative X", nil, []Point{{100, 100}, {-1, 200}, {500, 400}, {700, 600}, {900, 100}}, "out of range"},
		{"Points too large", func(c *store.PictureCredential) { c.Points = MaxPoints + 1 }, testPoints, "1 to 8 points"},
		{"tolerance 0", func(c *store.PictureCredential) { c.Tolerance = 0 }, testPoints, "tolerance"},
		{"no image digest", func(c *store.PictureCredential) { c.ImageDigest = nil }, testPoints, "SHA-256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCredential(testPoints)
			if tt.edit != nil {
				tt.edit(&c)
			}
			before := c
			err := h.enroll(context.Background(), &c, tt.ps)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
			assert.Equal(t, before, c, "enroll changed the credential on error")
		})
	}
}

func TestVerify(t *testing.T) {
	const r = DefaultTolerance
	h := newTestHasher(t, testArgon)
	c := enrolled(t, h, testPoints)

	onePointOff := func(i, dx, dy int) []Point {
		ps := shifted(testPoints, 0, 0)
		ps[i].X += dx
		ps[i].Y += dy
		return ps
	}
	reordered := shifted(testPoints, 0, 0)
	reordered[1], reordered[2] = reordered[2], reordered[1]

	tests := []struct {
		name string
		edit func(c *store.PictureCredential)
		ps   []Point
		want bool
	}{
		{"exact", nil, testPoints, true},
		{"every point +r on both axes", nil, shifted(testPoints, r, r), true},
		{"every point −r on both axes", nil, shifted(testPoints, -r, -r), true},
		{"every point +r, −r", nil, shifted(testPoints, r, -r), true},
		{"one point r+1 right", nil, onePointOff(2, r+1, 0), false},
		{"one point r+1 left", nil, onePointOff(0, -(r + 1), 0), false},
		{"one point r+1 down", nil, onePointOff(4, 0, r+1), false},
		{"one point r+1 up", nil, onePointOff(3, 0, -(r + 1)), false},
		{"another order", nil, reordered, false},
		{"reversed", nil, []Point{testPoints[4], testPoints[3], testPoints[2], testPoints[1], testPoints[0]}, false},
		{"another tenant", func(c *store.PictureCredential) { c.Tenant = "acme2" }, testPoints, false},
		{"another user", func(c *store.PictureCredential) { c.UserID = "user_2" }, testPoints, false},
		{"tenant and user split elsewhere", func(c *store.PictureCredential) { c.Tenant, c.UserID = "acmeu", "ser_1" }, testPoints, false},
		{"another image digest", func(c *store.PictureCredential) { c.ImageDigest = testDigest("harbour v2") }, testPoints, false},
		{"another tolerance", func(c *store.PictureCredential) { c.Tolerance = r + 1 }, testPoints, false},
		{"another salt", func(c *store.PictureCredential) { c.Salt = bytes.Repeat([]byte{7}, 16) }, testPoints, false},
		{"image name is not hashed", func(c *store.PictureCredential) { c.Image = "renamed" }, testPoints, true},
		{"too few points", nil, testPoints[:4], false},
		{"too many points", nil, append(shifted(testPoints, 0, 0), Point{50, 700}), false},
		{"no points", nil, nil, false},
		{"a point out of range", nil, onePointOff(4, Width, 0), false},
		{"offsets do not match Points", func(c *store.PictureCredential) { c.Offsets = c.Offsets[:8] }, testPoints, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := c
			rec.Offsets = append([]int(nil), c.Offsets...)
			if tt.edit != nil {
				tt.edit(&rec)
			}
			ok, err := h.verify(context.Background(), &rec, tt.ps)
			require.NoError(t, err)
			assert.Equal(t, tt.want, ok)
		})
	}
}

// A wrong number of clicks or a record whose offsets do not fit does the argon2id work all the
// same, so its timing tells nothing.
func TestVerifyMismatchStillHashes(t *testing.T) {
	tests := []struct {
		name string
		edit func(c *store.PictureCredential)
		ps   []Point
	}{
		{"too few points", nil, testPoints[:3]},
		{"offsets do not match", func(c *store.PictureCredential) { c.Offsets = c.Offsets[:2] }, testPoints},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newTestHasher(t, testArgon)
			c := enrolled(t, h, testPoints)
			if tt.edit != nil {
				tt.edit(&c)
			}
			h.peak.Store(0)
			ok, err := h.verify(context.Background(), &c, tt.ps)
			require.NoError(t, err)
			assert.False(t, ok)
			assert.Equal(t, int32(1), h.peak.Load(), "no argon2id work was done")
		})
	}
}

func TestVerifyErrors(t *testing.T) {
	h := newTestHasher(t, testArgon)
	c := enrolled(t, h, testPoints)
	tests := []struct {
		name    string
		edit    func(c *store.PictureCredential)
		wantErr string
	}{
		{"unknown pepper", func(c *store.PictureCredential) { c.PepperID = "gone" }, `pepper ID "gone" is unknown`},
		{"newer scheme", func(c *store.PictureCredential) { c.Scheme = currentScheme + 1 }, "unsupported record scheme"},
		{"no scheme", func(c *store.PictureCredential) { c.Scheme = 0 }, "unsupported record scheme"},
		{"argon time 0", func(c *store.PictureCredential) { c.ArgonTime = 0 }, "invalid record"},
		{"argon threads 0", func(c *store.PictureCredential) { c.ArgonThreads = 0 }, "invalid record"},
		{"no salt", func(c *store.PictureCredential) { c.Salt = nil }, "invalid record"},
		{"offset out of range", func(c *store.PictureCredential) { c.Offsets[3] = 2*c.Tolerance + 1 }, "invalid record"},
		{"negative offset", func(c *store.PictureCredential) { c.Offsets[0] = -1 }, "invalid record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := c
			rec.Offsets = append([]int(nil), c.Offsets...)
			tt.edit(&rec)
			ok, err := h.verify(context.Background(), &rec, testPoints)
			require.Error(t, err)
			assert.False(t, ok)
			assert.Contains(t, err.Error(), tt.wantErr)
			for _, p := range testPoints {
				assert.NotContains(t, err.Error(), FormatPoints([]Point{p}))
			}
		})
	}
}

// Changing the pepper and the argon2id parameters keeps old records working until they are
// rehashed on the next successful login.
func TestUpgrade(t *testing.T) {
	ctx := context.Background()
	oldPepper := Pepper{ID: "old", Key: testKey(1)}
	newPepper := Pepper{ID: "new", Key: testKey(2)}
	oldHasher := newTestHasher(t, Argon2Params{Time: 1, MemoryKiB: 1024, Threads: 1}, oldPepper)
	upgraded := newTestHasher(t, Argon2Params{Time: 2, MemoryKiB: 2048, Threads: 1}, newPepper, oldPepper)

	c := enrolled(t, oldHasher, testPoints)
	assert.False(t, oldHasher.stale(&c))
	assert.True(t, upgraded.stale(&c))

	ok, err := upgraded.verify(ctx, &c, shifted(testPoints, 3, -DefaultTolerance))
	require.NoError(t, err)
	assert.True(t, ok)

	clicks := shifted(testPoints, DefaultTolerance, 1)
	re, err := upgraded.rehash(ctx, &c, clicks)
	require.NoError(t, err)
	assert.False(t, upgraded.stale(&re))
	assert.Equal(t, currentScheme, re.Scheme)
	assert.Equal(t, "new", re.PepperID)
	assert.Equal(t, Argon2Params{Time: 2, MemoryKiB: 2048, Threads: 1}, paramsOf(&re))
	assert.Equal(t, c.Offsets, re.Offsets)
	assert.NotEqual(t, c.Salt, re.Salt)
	assert.NotEqual(t, c.Hash, re.Hash)
	for _, keep := range []func(c store.PictureCredential) any{
		func(c store.PictureCredential) any { return c.Tenant },
		func(c store.PictureCredential) any { return c.UserID },
		func(c store.PictureCredential) any { return c.Image },
		func(c store.PictureCredential) any { return c.ImageDigest },
		func(c store.PictureCredential) any { return c.Points },
		func(c store.PictureCredential) any { return c.Tolerance },
	} {
		assert.Equal(t, keep(c), keep(re))
	}
	assert.Equal(t, "old", c.PepperID, "rehash changed its argument")

	// Rehashing with clicks r off the enrolled points keeps the enrolled cells, hence the
	// enrolled tolerance window.
	for _, ps := range [][]Point{testPoints, shifted(testPoints, -DefaultTolerance, DefaultTolerance)} {
		ok, err = upgraded.verify(ctx, &re, ps)
		require.NoError(t, err)
		assert.True(t, ok)
	}
	ok, err = upgraded.verify(ctx, &re, shifted(testPoints, DefaultTolerance+1, 0))
	require.NoError(t, err)
	assert.False(t, ok)

	// Without the old pepper, old records cannot be checked.
	dropped := newTestHasher(t, testArgon, newPepper)
	ok, err = dropped.verify(ctx, &c, testPoints)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"old" is unknown`)
	assert.False(t, ok)

	// A hasher whose current pepper is the same key under another ID is still stale.
	renamed := newTestHasher(t, Argon2Params{Time: 1, MemoryKiB: 1024, Threads: 1}, Pepper{ID: "old2", Key: testKey(1)}, oldPepper)
	assert.True(t, renamed.stale(&c))
}

func TestRehashErrors(t *testing.T) {
	h := newTestHasher(t, testArgon)
	c := enrolled(t, h, testPoints)

	_, err := h.rehash(context.Background(), &c, testPoints[:4])
	require.Error(t, err)

	bad := c
	bad.Offsets = c.Offsets[:6]
	_, err = h.rehash(context.Background(), &bad, testPoints)
	require.Error(t, err)
}

// The hash of fixed inputs never changes: a change to the hash input breaks every stored
// record, and must come with a new scheme.
func TestGoldenHash(t *testing.T) {
	salt, _ := hex.DecodeString("a0a1a2a3a4a5a6a7a8a9aaabacadaeaf")
	key, _ := hex.DecodeString("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
	h := newTestHasher(t, testArgon, Pepper{ID: "golden", Key: key})
	h.rand = bytes.NewReader(salt)

	// Corners of the image give cells of −1.
	ps := []Point{{0, 0}, {300, 200}, {500, 400}, {700, 600}, {999, 749}}
	c := newCredential(ps)
	require.NoError(t, h.enroll(context.Background(), &c, ps))

	assert.Equal(t, salt, c.Salt)
	assert.Equal(t, []int{21, 21, 34, 16, 29, 11, 24, 6, 36, 32}, c.Offsets)
	assert.Equal(t, "0ec40055137fb880e517232eb44a567599efd28f79b1d0aa2aadb9e546eda5b1", hex.EncodeToString(c.Hash))

	// The hash is argon2id(HMAC-SHA256(pepper, input), salt), and the input is this encoding.
	cells := []int{-1, -1, 6, 4, 11, 9, 16, 14, 23, 17}
	_, got := discretize(ps, DefaultTolerance)
	require.Equal(t, cells, got)
	in, err := hashInput(currentScheme, c.Tenant, c.UserID, c.ImageDigest, c.Tolerance, cells)
	require.NoError(t, err)
	assert.Equal(t, ""+
		"00000019"+hex.EncodeToString([]byte("visid picture password v1"))+
		"00000001"+ // scheme
		"00000004"+hex.EncodeToString([]byte("acme"))+
		"00000006"+hex.EncodeToString([]byte("user_1"))+
		"00000020"+"aa74f6fd03bf68be7e0f4bd06cae61a72ab8025b50d00888f3e1068f22067463"+ // SHA-256("harbour")
		"00000005"+ // points
		"00000014"+ // r
		"ffffffff"+"ffffffff"+"00000006"+"00000004"+"0000000b"+"00000009"+"00000010"+"0000000e"+"00000017"+"00000011",
		hex.EncodeToString(in))
	mac := hmac.New(sha256.New, key)
	mac.Write(in)
	assert.Equal(t, c.Hash, argon2.IDKey(mac.Sum(nil), salt, 1, 64, 1, 32))

	ok, err := h.verify(context.Background(), &c, ps)
	require.NoError(t, err)
	assert.True(t, ok)
}

func TestHashInputUnambiguous(t *testing.T) {
	cells := make([]int, 10)
	base, err := hashInput(1, "ab", "c", []byte{1}, 20, cells)
	require.NoError(t, err)
	others := []struct {
		name   string
		scheme int
		tenant string
		user   string
		digest []byte
		r      int
		cells  []int
	}{
		{"tenant/user split", 1, "a", "bc", []byte{1}, 20, cells},
		{"user/digest split", 1, "ab", "c\x01", nil, 20, cells},
		{"scheme", 2, "ab", "c", []byte{1}, 20, cells},
		{"r", 1, "ab", "c", []byte{1}, 21, cells},
		{"more cells", 1, "ab", "c", []byte{1}, 20, make([]int, 12)},
		{"a cell", 1, "ab", "c", []byte{1}, 20, []int{0, 0, 0, 0, 0, 0, 0, 0, 0, -1}},
	}
	for _, o := range others {
		t.Run(o.name, func(t *testing.T) {
			in, err := hashInput(o.scheme, o.tenant, o.user, o.digest, o.r, o.cells)
			require.NoError(t, err)
			assert.NotEqual(t, base, in)
		})
	}

	_, err = hashInput(1, "ab", "c", nil, 20, make([]int, 3))
	require.Error(t, err)
	_, err = hashInput(1, "ab", "c", nil, 20, nil)
	require.Error(t, err)
	_, err = hashInput(-1, "ab", "c", nil, 20, cells)
	require.Error(t, err)
}

// At most maxConcurrent argon2id computations run at once, whatever the number of callers.
func TestConcurrencyBound(t *testing.T) {
	const maxConcurrent, callers = 3, 100
	// 8 MiB makes each computation last long enough for the callers to overlap.
	h, err := newHasher([]Pepper{{ID: "p1", Key: testKey(1)}}, Argon2Params{Time: 1, MemoryKiB: 8 * 1024, Threads: 1}, maxConcurrent)
	require.NoError(t, err)
	c := enrolled(t, h, testPoints)
	h.peak.Store(0)

	var wg sync.WaitGroup
	oks := make([]bool, callers)
	errs := make([]error, callers)
	for i := range callers {
		wg.Go(func() {
			if i%10 == 0 {
				errs[i] = h.decoy(context.Background())
				oks[i] = true
				return
			}
			oks[i], errs[i] = h.verify(context.Background(), &c, testPoints)
		})
	}
	wg.Wait()

	for i := range callers {
		require.NoError(t, errs[i])
		assert.True(t, oks[i])
	}
	assert.LessOrEqual(t, h.peak.Load(), int32(maxConcurrent))
	assert.GreaterOrEqual(t, h.peak.Load(), int32(2), "the computations never overlapped")
	assert.Equal(t, int32(0), h.inflight.Load())
}

func TestWaitRespectsContext(t *testing.T) {
	h, err := newHasher([]Pepper{{ID: "p1", Key: testKey(1)}}, testArgon, 2)
	require.NoError(t, err)
	c := enrolled(t, h, testPoints)

	// Every slot is taken.
	for range cap(h.sem) {
		h.sem <- struct{}{}
	}
	defer func() {
		for range cap(h.sem) {
			<-h.sem
		}
	}()

	calls := []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"verify", func(ctx context.Context) error {
			ok, err := h.verify(ctx, &c, testPoints)
			assert.False(t, ok)
			return err
		}},
		{"decoy", func(ctx context.Context) error { return h.decoy(ctx) }},
		{"enroll", func(ctx context.Context) error {
			c2 := newCredential(testPoints)
			return h.enroll(ctx, &c2, testPoints)
		}},
		{"rehash", func(ctx context.Context) error {
			_, err := h.rehash(ctx, &c, testPoints)
			return err
		}},
	}
	for _, tt := range calls {
		t.Run(tt.name+" cancelled while waiting", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			start := time.Now() // before the timer is armed: it fires 20 ms after it at the soonest
			time.AfterFunc(20*time.Millisecond, cancel)
			err := tt.call(ctx)
			assert.ErrorIs(t, err, context.Canceled)
			assert.GreaterOrEqual(t, time.Since(start), 20*time.Millisecond)
		})
		t.Run(tt.name+" deadline", func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
			defer cancel()
			assert.ErrorIs(t, tt.call(ctx), context.DeadlineExceeded)
		})
	}

	// A context already done does not take a slot even when one is free.
	<-h.sem
	defer func() { h.sem <- struct{}{} }()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h.peak.Store(0)
	ok, err := h.verify(ctx, &c, testPoints)
	assert.False(t, ok)
	assert.True(t, errors.Is(err, context.Canceled))
	assert.Equal(t, int32(0), h.peak.Load())
}
