package picture

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/argon2"

	"github.com/visid/visid/store"
)

// Argon2Params are argon2id's cost parameters.
type Argon2Params struct {
	Time      uint32 // passes over the memory
	MemoryKiB uint32 // memory per hash, in KiB
	Threads   uint8  // lanes
}

// The default argon2id parameters are OWASP's minimum for argon2id: 2 passes over 19 MiB, one
// thread.
const (
	DefaultArgon2Time      = 2
	DefaultArgon2MemoryKiB = 19 * 1024
	DefaultArgon2Threads   = 1
)

// Pepper is a server-side secret keying the hash input, so that a copy of the store alone is
// not enough to search for passwords. ID names it in records; Key is at least 32 bytes.
type Pepper struct {
	ID  string
	Key []byte
}

// currentScheme is the record format and hash input that enroll and rehash write.
const currentScheme = 1

const (
	minPepperLen = 32
	saltLen      = 16
	hashLen      = 32
	// hashDomain separates this hash input from any other use of the pepper.
	hashDomain = "visid picture password v1"
)

// hasher turns click points into the stored hash of a store.PictureCredential and checks them
// against it. Clicks are never logged and never put into errors.
//
// At most maxConcurrent argon2id computations run at once, each using MemoryKiB of memory at
// the current parameters (records written with larger parameters use theirs when verified).
type hasher struct {
	current Pepper
	peppers map[string][]byte
	argon   Argon2Params
	sem     chan struct{}
	// rand is the salt source: crypto/rand.Reader, replaced in tests.
	rand io.Reader
	// tel receives the wait for a slot, the computations in flight and a span for each.
	tel *telemetry

	// inflight is how many argon2id computations are running, and peak the highest inflight
	// seen. Tests read them.
	inflight atomic.Int32
	peak     atomic.Int32
}

// newHasher returns a hasher that writes new hashes with peppers[0] and argon, and verifies
// records keyed with any of peppers. Zero fields of argon are errors, not defaults.
func newHasher(peppers []Pepper, argon Argon2Params, maxConcurrent int) (*hasher, error) {
	if len(peppers) == 0 {
		return nil, errors.New("picture: at least one pepper is required")
	}
	keys := make(map[string][]byte, len(peppers))
	for _, p := range peppers {
		if p.ID == "" {
			return nil, errors.New("picture: a pepper needs an ID")
		}
		if len(p.Key) < minPepperLen {
			return nil, fmt.Errorf("picture: pepper %q: the key must be at least %d bytes", p.ID, minPepperLen)
		}
		if _, dup := keys[p.ID]; dup {
			return nil, fmt.Errorf("picture: pepper ID %q is listed twice", p.ID)
		}
		keys[p.ID] = slices.Clone(p.Key)
	}
	if err := checkArgon(argon); err != nil {
		return nil, fmt.Errorf("picture: %w", err)
	}
	if maxConcurrent < 1 {
		return nil, errors.New("picture: the number of concurrent argon2id computations must be at least 1")
	}
	tel, err := newTelemetry(Config{}) // the global providers; New passes its Config's
	if err != nil {
		return nil, err
	}
	cur := peppers[0]
	return &hasher{
		tel:     tel,
		current: Pepper{ID: cur.ID, Key: keys[cur.ID]},
		peppers: keys,
		argon:   argon,
		sem:     make(chan struct{}, maxConcurrent),
		rand:    rand.Reader,
	}, nil
}

// checkArgon reports parameters argon2.IDKey would refuse (it panics on them).
func checkArgon(p Argon2Params) error {
	switch {
	case p.Time == 0:
		return errors.New("argon2id time must be at least 1")
	case p.Threads == 0:
		return errors.New("argon2id threads must be at least 1")
	case p.MemoryKiB < 8*uint32(p.Threads):
		return errors.New("argon2id memory must be at least 8 KiB per thread")
	}
	return nil
}

// paramsOf returns the argon2id parameters recorded in c.
func paramsOf(c *store.PictureCredential) Argon2Params {
	return Argon2Params{Time: c.ArgonTime, MemoryKiB: c.ArgonMemory, Threads: c.ArgonThreads}
}

// enroll hashes the points ps of a new credential. c arrives with Tenant, UserID, Image,
// ImageDigest, Points (= len(ps)) and Tolerance set; enroll fills Scheme, Offsets, PepperID,
// Salt, Hash and the argon2id parameters, and leaves c unchanged on error. It checks the
// number of points and their range, not whether they are too close to each other.
func (h *hasher) enroll(ctx context.Context, c *store.PictureCredential, ps []Point) error {
	if err := checkNew(c, ps); err != nil {
		return err
	}
	offsets, cells := discretize(ps, c.Tolerance)
	hash, salt, err := h.hashCurrent(ctx, c, cells)
	if err != nil {
		return err
	}
	c.Scheme = currentScheme
	c.Offsets = offsets
	h.setHash(c, salt, hash)
	return nil
}

// rehash returns a copy of c hashed again with a fresh salt, the current pepper, parameters and
// scheme, and the same offsets: the cells of ps are computed with c's offsets. The caller has
// just verified ps against c, and stores the copy with store.PictureCredentials.Rehash.
func (h *hasher) rehash(ctx context.Context, c *store.PictureCredential, ps []Point) (store.PictureCredential, error) {
	if err := checkNew(c, ps); err != nil {
		return store.PictureCredential{}, err
	}
	if err := checkOffsets(c); err != nil {
		return store.PictureCredential{}, err
	}
	cells := cellsAt(ps, c.Offsets, c.Tolerance)
	if cells == nil {
		return store.PictureCredential{}, errors.New("picture: the record's offsets do not match its number of points")
	}
	hash, salt, err := h.hashCurrent(ctx, c, cells)
	if err != nil {
		return store.PictureCredential{}, err
	}
	out := *c
	out.ImageDigest = slices.Clone(c.ImageDigest)
	out.Offsets = slices.Clone(c.Offsets)
	out.Scheme = currentScheme
	h.setHash(&out, salt, hash)
	return out, nil
}

// checkNew checks what enroll and rehash need of c and ps.
func checkNew(c *store.PictureCredential, ps []Point) error {
	if c.Points < 1 || c.Points > MaxPoints {
		return fmt.Errorf("picture: a password has 1 to %d points", MaxPoints)
	}
	if len(ps) != c.Points {
		return fmt.Errorf("picture: want %d points, got %d", c.Points, len(ps))
	}
	if c.Tolerance < 1 || c.Tolerance > Width {
		return errors.New("picture: the tolerance is out of range")
	}
	if len(c.ImageDigest) != sha256.Size {
		return errors.New("picture: the image digest must be a SHA-256")
	}
	for _, p := range ps {
		if !inRange(p) {
			return errRange
		}
	}
	return nil
}

// hashCurrent hashes cells for c with a fresh salt, the current scheme, pepper and parameters.
func (h *hasher) hashCurrent(ctx context.Context, c *store.PictureCredential, cells []int) (hash, salt []byte, err error) {
	salt = make([]byte, saltLen)
	if _, err := io.ReadFull(h.rand, salt); err != nil {
		return nil, nil, fmt.Errorf("picture: reading a salt: %w", err)
	}
	hash, err = h.hash(ctx, currentScheme, h.current.Key, c, cells, salt, h.argon)
	if err != nil {
		return nil, nil, err
	}
	return hash, salt, nil
}

// setHash writes the current pepper and parameters, salt and hash into c.
func (h *hasher) setHash(c *store.PictureCredential, salt, hash []byte) {
	c.PepperID = h.current.ID
	c.Salt = salt
	c.Hash = hash
	c.ArgonTime = h.argon.Time
	c.ArgonMemory = h.argon.MemoryKiB
	c.ArgonThreads = h.argon.Threads
}

// verify reports whether the clicks ps match c. It uses c's own scheme, pepper, argon2id
// parameters, salt and offsets. A wrong number of clicks, clicks out of range, or a record
// whose offsets do not match its number of points give false without an error, after the same
// argon2id work as a real check. A record that cannot be checked (unsupported scheme, unknown
// pepper, invalid parameters) gives false and an error.
func (h *hasher) verify(ctx context.Context, c *store.PictureCredential, ps []Point) (bool, error) {
	if c.Scheme != currentScheme {
		return false, fmt.Errorf("picture: unsupported record scheme %d", c.Scheme)
	}
	key, ok := h.peppers[c.PepperID]
	if !ok {
		return false, fmt.Errorf("picture: the record's pepper ID %q is unknown", c.PepperID)
	}
	params := paramsOf(c)
	if err := checkArgon(params); err != nil {
		return false, fmt.Errorf("picture: invalid record: %w", err)
	}
	if c.Points < 1 || c.Points > MaxPoints || c.Tolerance < 1 || c.Tolerance > Width || len(c.Salt) == 0 || len(c.Hash) == 0 {
		return false, errors.New("picture: invalid record")
	}
	if err := checkOffsets(c); err != nil {
		return false, err
	}

	match := len(ps) == c.Points && len(c.Offsets) == 2*c.Points
	for _, p := range ps {
		match = match && inRange(p)
	}
	var cells []int
	if match {
		cells = cellsAt(ps, c.Offsets, c.Tolerance)
	} else {
		// Hash something of the right shape so that the work, and the time, are the same.
		cells = make([]int, 2*c.Points)
	}
	got, err := h.hash(ctx, c.Scheme, key, c, cells, c.Salt, params)
	if err != nil {
		return false, err
	}
	return match && subtle.ConstantTimeCompare(got, c.Hash) == 1, nil
}

// checkOffsets reports offsets outside [0, 2r], which discretize never writes.
func checkOffsets(c *store.PictureCredential) error {
	for _, d := range c.Offsets {
		if d < 0 || d > 2*c.Tolerance {
			return errors.New("picture: invalid record: an offset is out of range")
		}
	}
	return nil
}

// stale reports whether c was hashed with another scheme, pepper or argon2id parameters than
// the current ones, so that a successful login should rehash it.
func (h *hasher) stale(c *store.PictureCredential) bool {
	return c.Scheme != currentScheme || c.PepperID != h.current.ID || paramsOf(c) != h.argon
}

// decoy does the argon2id work of a verify at the current parameters, under the same bound, and
// discards the result. It is used for users without a credential, so that their timing looks
// the same.
func (h *hasher) decoy(ctx context.Context) error {
	c := store.PictureCredential{Points: DefaultPoints, Tolerance: DefaultTolerance}
	_, err := h.hash(ctx, currentScheme, h.current.Key, &c, make([]int, 2*DefaultPoints), make([]byte, saltLen), h.argon)
	return err
}

// hash computes argon2id(HMAC-SHA256(pepper, hashInput(…)), salt) under the concurrency bound.
func (h *hasher) hash(ctx context.Context, scheme int, pepper []byte, c *store.PictureCredential, cells []int, salt []byte, p Argon2Params) ([]byte, error) {
	in, err := hashInput(scheme, c.Tenant, c.UserID, c.ImageDigest, c.Tolerance, cells)
	if err != nil {
		return nil, err
	}
	mac := hmac.New(sha256.New, pepper)
	mac.Write(in)
	return h.argon2(ctx, mac.Sum(nil), salt, p)
}

// argon2 runs argon2.IDKey once a slot of the semaphore is free. Waiting for a slot ends with
// ctx.Err() when ctx is done.
func (h *hasher) argon2(ctx context.Context, password, salt []byte, p Argon2Params) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	waitStart := time.Now()
	select {
	case h.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-h.sem }()
	h.tel.wait.Record(ctx, time.Since(waitStart).Seconds())
	ctx, span := h.tel.tracer.Start(ctx, "picture argon2id")
	defer span.End()
	h.tel.inflight.Add(ctx, 1)
	defer h.tel.inflight.Add(ctx, -1)

	n := h.inflight.Add(1)
	for {
		peak := h.peak.Load()
		if n <= peak || h.peak.CompareAndSwap(peak, n) {
			break
		}
	}
	key := argon2.IDKey(password, salt, p.Time, p.MemoryKiB, p.Threads, hashLen)
	h.inflight.Add(-1)
	return key, nil
}

// hashInput encodes what the hash covers, unambiguously: every variable-length field is
// prefixed with its length as a big-endian uint32, integers are big-endian uint32, and the cell
// indices, whose number is 2 × the number of points, are big-endian int32 (two's complement: a
// cell is −1 near the left and top edges).
//
//	str(domain) u32(scheme) str(tenant) str(userID) str(imageDigest) u32(points) u32(r) i32(cell)…
func hashInput(scheme int, tenant, userID string, imageDigest []byte, r int, cells []int) ([]byte, error) {
	if len(cells) == 0 || len(cells)%2 != 0 {
		return nil, errors.New("picture: hash input: the number of cells must be even and positive")
	}
	n := len(cells) / 2
	for _, v := range []int{scheme, n, r} {
		if v < 0 || v > math.MaxUint32 {
			return nil, errors.New("picture: hash input: a parameter is out of range")
		}
	}
	if len(tenant) > math.MaxUint32 || len(userID) > math.MaxUint32 || len(imageDigest) > math.MaxUint32 {
		return nil, errors.New("picture: hash input: a field is too long")
	}
	size := 4*4 + len(hashDomain) + len(tenant) + len(userID) + len(imageDigest) + 3*4 + 4*len(cells)
	b := make([]byte, 0, size)
	b = appendString(b, hashDomain)
	b = binary.BigEndian.AppendUint32(b, uint32(scheme))
	b = appendString(b, tenant)
	b = appendString(b, userID)
	b = appendString(b, string(imageDigest))
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	b = binary.BigEndian.AppendUint32(b, uint32(r))
	for _, v := range cells {
		if v < math.MinInt32 || v > math.MaxInt32 {
			return nil, errors.New("picture: hash input: a cell is out of range")
		}
		b = binary.BigEndian.AppendUint32(b, uint32(int32(v)))
	}
	return b, nil
}

// appendString appends s prefixed with its length.
func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}
