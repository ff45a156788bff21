package picture

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/store"
)

// Defaults of the lock.
const (
	// DefaultMaxFailures is how many wrong attempts in a row lock the factor when
	// Config.MaxFailures is 0.
	DefaultMaxFailures = 5
	// DefaultLockBase is how long the MaxFailures-th failure in a row locks the factor when
	// Config.LockBase is 0.
	DefaultLockBase = time.Minute
	// DefaultLockMax is the longest a lock lasts when Config.LockMax is 0.
	DefaultLockMax = time.Hour
)

// Config configures the picture login. Credentials and Peppers are required; every other field
// has the default its comment gives.
type Config struct {
	// Credentials stores the enrolled picture passwords and counts failures, so a lock holds on
	// every instance that shares the store.
	Credentials store.PictureCredentials

	// Peppers key the hash input of every credential: a copy of the store alone is not enough
	// to search for the points. Peppers[0] keys new credentials; the others still verify the
	// credentials they keyed, which are rehashed with Peppers[0] at their next successful login
	// (rotation). Each key is at least 32 random bytes, kept out of the store; its ID is stored
	// with each credential.
	Peppers []Pepper

	// Images are the pictures users may choose from. nil: BuiltinImages().
	Images []Image
	// Points is how many points a new enrollment has, MinPoints to MaxPoints; 0: DefaultPoints.
	Points int
	// Tolerance is r: a click is accepted when it lies within r canonical units of the enrolled
	// point on each axis; MinTolerance to MaxTolerance; 0: DefaultTolerance (cells of 41 units,
	// about 8.75 bits per point on the 1000 × 750 space).
	Tolerance int
	// Argon2 are the argon2id parameters of new hashes; a zero field takes its default
	// (DefaultArgon2Time, DefaultArgon2MemoryKiB, DefaultArgon2Threads). A credential hashed
	// with other parameters is rehashed at its next successful login.
	Argon2 Argon2Params
	// MaxConcurrentHashes bounds the argon2id computations running at once, so a burst of
	// logins uses at most MaxConcurrentHashes × Argon2.MemoryKiB of memory; the others wait.
	// 0: runtime.GOMAXPROCS(0).
	MaxConcurrentHashes int
	// MaxFailures is how many wrong attempts in a row lock the factor for a user; every login
	// flow also ends after that many attempts, whatever the user's count. 0: DefaultMaxFailures.
	MaxFailures int
	// LockBase is how long the MaxFailures-th failure in a row locks the factor, counted from
	// that failure; each further failure doubles it (attempts during a lock count too), up to
	// LockMax. A success or an Unlock ends it. 0: DefaultLockBase; LockMax 0: DefaultLockMax.
	LockBase time.Duration
	LockMax  time.Duration

	// Logger receives the outcome of every attempt (with the reason: wrong picture, unknown,
	// inactive or not enrolled user, locked); never the points. nil: slog.Default().
	Logger *slog.Logger
	// Now is the clock of the credentials' times and of AuthTime. nil: time.Now.
	Now func() time.Time

	// MeterProvider receives the login's metrics (MetricAttempts, MetricLockouts,
	// MetricHashesInFlight, MetricHashWait); none names a user or carries a point. nil:
	// otel.GetMeterProvider(), which records nothing until the host installs an SDK.
	MeterProvider metric.MeterProvider
	// TracerProvider receives a span for each argon2id computation ("picture argon2id"),
	// without attributes. nil: otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// MetricsTenant adds the tenant (visid.tenant) to MetricAttempts and MetricLockouts. Each
	// tenant then makes series of its own, so turn it on only when the tenants are few. false:
	// no tenant in metrics.
	MetricsTenant bool
}

// Authenticator is the picture login: an oidc2fa.Authenticator and oidc2fa.Enroller.
type Authenticator struct {
	creds       store.PictureCredentials
	hash        *hasher
	images      *imageSet
	points      int
	tolerance   int
	maxFailures int
	lockBase    time.Duration
	lockMax     time.Duration
	log         *slog.Logger
	now         func() time.Time
	tel         *telemetry
}

var (
	_ oidc2fa.Authenticator = (*Authenticator)(nil)
	_ oidc2fa.Enroller      = (*Authenticator)(nil)
	_ oidc2fa.FactorChecker = (*Authenticator)(nil)
)

// New returns the picture login of cfg. It starts no goroutines.
func New(cfg Config) (*Authenticator, error) {
	if cfg.Credentials == nil {
		return nil, errors.New("picture: Config.Credentials is required")
	}
	images := cfg.Images
	if images == nil {
		images = BuiltinImages()
	}
	set, err := newImageSet(images)
	if err != nil {
		return nil, err
	}
	a := &Authenticator{
		creds:       cfg.Credentials,
		images:      set,
		points:      orInt(cfg.Points, DefaultPoints),
		tolerance:   orInt(cfg.Tolerance, DefaultTolerance),
		maxFailures: orInt(cfg.MaxFailures, DefaultMaxFailures),
		lockBase:    cfg.LockBase,
		lockMax:     cfg.LockMax,
		log:         cfg.Logger,
		now:         cfg.Now,
	}
	switch {
	case a.points < MinPoints || a.points > MaxPoints:
		return nil, fmt.Errorf("picture: Config.Points must be between %d and %d", MinPoints, MaxPoints)
	case a.tolerance < MinTolerance || a.tolerance > MaxTolerance:
		return nil, fmt.Errorf("picture: Config.Tolerance must be between %d and %d", MinTolerance, MaxTolerance)
	case a.maxFailures < 1:
		return nil, errors.New("picture: Config.MaxFailures must not be negative")
	case cfg.LockBase < 0 || cfg.LockMax < 0:
		return nil, errors.New("picture: Config.LockBase and LockMax must not be negative")
	case cfg.MaxConcurrentHashes < 0:
		return nil, errors.New("picture: Config.MaxConcurrentHashes must not be negative")
	}
	argon := Argon2Params{
		Time:      orUint(cfg.Argon2.Time, DefaultArgon2Time),
		MemoryKiB: orUint(cfg.Argon2.MemoryKiB, DefaultArgon2MemoryKiB),
		Threads:   uint8(orUint(uint32(cfg.Argon2.Threads), DefaultArgon2Threads)),
	}
	a.hash, err = newHasher(cfg.Peppers, argon, orInt(cfg.MaxConcurrentHashes, runtime.GOMAXPROCS(0)))
	if err != nil {
		return nil, err
	}
	if a.tel, err = newTelemetry(cfg); err != nil {
		return nil, err
	}
	a.hash.tel = a.tel
	if a.log == nil {
		a.log = slog.Default()
	}
	if a.now == nil {
		a.now = time.Now
	}
	if a.lockBase == 0 {
		a.lockBase = DefaultLockBase
	}
	if a.lockMax == 0 {
		a.lockMax = DefaultLockMax
	}
	if a.lockMax < a.lockBase {
		return nil, errors.New("picture: Config.LockMax must not be shorter than LockBase")
	}
	return a, nil
}

func orInt(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func orUint(v, def uint32) uint32 {
	if v == 0 {
		return def
	}
	return v
}

// Errors of Enroll.
var (
	// ErrUnknownImage: the image is not one of Config.Images.
	ErrUnknownImage = errors.New("picture: no such image")
	// ErrTooClose: two points lie in the same or neighbouring cells, so they could not be told
	// apart reliably.
	ErrTooClose = errors.New("picture: two points are too close to each other")
)

// Enroll sets the picture password of a user of tenant: the image named image and points, in
// order, in the canonical space. It replaces the user's credential and clears a lock. It is the
// library call behind the enrollment pages, for an administrator's tool or a test; the points
// are the user's secret, so a host must not choose them for a real person.
func (a *Authenticator) Enroll(ctx context.Context, tenant, userID, image string, points []Point) error {
	return a.enroll(ctx, tenant, userID, image, points, true)
}

// enroll is Enroll; when replace is false it stores the credential only if the user has none,
// and returns store.ErrConflict otherwise.
func (a *Authenticator) enroll(ctx context.Context, tenant, userID, image string, points []Point, replace bool) error {
	im := a.images.byName[image]
	if im == nil {
		return ErrUnknownImage
	}
	if len(points) != a.points {
		return fmt.Errorf("picture: want %d points, got %d", a.points, len(points))
	}
	for i, p := range points {
		if !inRange(p) {
			return errRange
		}
		for _, q := range points[:i] {
			if tooClose(q, p, a.tolerance) {
				return ErrTooClose
			}
		}
	}
	now := a.now()
	c := store.PictureCredential{
		Tenant:      tenant,
		UserID:      userID,
		Image:       im.Name,
		ImageDigest: im.digest,
		Points:      len(points),
		Tolerance:   a.tolerance,
		Created:     now,
		Updated:     now,
	}
	if err := a.hash.enroll(ctx, &c, points); err != nil {
		return err
	}
	if !replace {
		return a.creds.Create(ctx, c)
	}
	return a.creds.Put(ctx, c)
}

// Unlock clears the failure count of a user, so the user may try again: the administrator's
// unlock. store.ErrNotFound if the user has not enrolled. With a store.Change in ctx
// (store.WithChange, Actor "admin"), a store that keeps an event log records
// secondfactor.unlocked in the same write when the count was above zero.
func (a *Authenticator) Unlock(ctx context.Context, tenant, userID string) error {
	return a.creds.ResetFailures(ctx, tenant, userID)
}

// Locked reports whether the factor is locked for a user now. store.ErrNotFound if the user has
// not enrolled.
func (a *Authenticator) Locked(ctx context.Context, tenant, userID string) (bool, error) {
	until, err := a.LockedUntil(ctx, tenant, userID)
	return !until.IsZero(), err
}

// LockedUntil returns when the lock of a user's factor ends, or the zero time when the factor
// is not locked now. store.ErrNotFound if the user has not enrolled.
func (a *Authenticator) LockedUntil(ctx context.Context, tenant, userID string) (time.Time, error) {
	c, err := a.creds.Get(ctx, tenant, userID)
	if err != nil {
		return time.Time{}, err
	}
	return a.lockedUntil(c.Failures, c.LastFailure, a.now()), nil
}

// HasFactor implements oidc2fa.FactorChecker: whether the user has a picture password.
func (a *Authenticator) HasFactor(ctx context.Context, tenant, subject string) (bool, error) {
	_, err := a.creds.Get(ctx, tenant, subject)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}

// lockedUntil is when the lock of a credential with failures in a row, the last at last, ends,
// as of now; the zero time when it is not locked now. The MaxFailures-th failure locks for
// LockBase, each further one for twice as long as the one before, up to LockMax. A credential
// locked before its failures had times (last is zero) stays locked until its next attempt
// starts the clock.
func (a *Authenticator) lockedUntil(failures int, last, now time.Time) time.Time {
	if failures < a.maxFailures {
		return time.Time{}
	}
	if last.IsZero() {
		return now.Add(a.lockMax)
	}
	d := a.lockMax
	if n := failures - a.maxFailures; n < 62 && a.lockBase<<n > 0 && a.lockBase<<n < a.lockMax {
		d = a.lockBase << n
	}
	if end := last.Add(d); now.Before(end) {
		return end
	}
	return time.Time{}
}
