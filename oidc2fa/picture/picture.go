package picture

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"runtime"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/visid/visid/internal/pagetext"
	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/store"
)

// Defaults of the lock. Failures are counted per user and source network: MaxFailures in a
// row from one network lock the user's factor for that network only, so that someone who knows
// only a user's name locks out nobody but themselves. A user-wide lock, for every network but
// the user's familiar ones, needs failures from UserLockNetworks networks, a guess spread over
// many addresses.
const (
	// DefaultMaxFailures is how many wrong attempts in a row from one network lock the factor
	// for that network when Config.MaxFailures is 0.
	DefaultMaxFailures = 5
	// DefaultLockBase is how long the MaxFailures-th failure in a row from a network locks the
	// factor for that network when Config.LockBase is 0.
	DefaultLockBase = time.Minute
	// DefaultLockMax is the longest a network's lock lasts when Config.LockMax is 0. It is long
	// because a network's lock shuts out only that network: after it, one guess a day.
	DefaultLockMax = 24 * time.Hour
	// DefaultUserLockNetworks is from how many networks failures must come, since the user's
	// last success, to lock the factor for every network, when Config.UserLockNetworks is 0.
	// Below it, each of DefaultUserLockNetworks-1 networks gets about 15 guesses in its first
	// day (5, then one per back-off) and one a day after: 60 in the first day together, fewer
	// than the 100 consecutive failures NIST SP 800-63B allows an account.
	DefaultUserLockNetworks = 5
	// DefaultUserLockBase is how long the user-wide lock lasts when Config.UserLockBase is 0;
	// DefaultUserLockMax its longest when Config.UserLockMax is 0.
	DefaultUserLockBase = time.Hour
	DefaultUserLockMax  = 24 * time.Hour
	// DefaultIPv4PrefixLen and DefaultIPv6PrefixLen are the sizes of a source network when
	// Config.IPv4PrefixLen and IPv6PrefixLen are 0: what one party gets cheaply, an IPv4 /24 and
	// an IPv6 /48 (a free tunnel allocation or a hosting plan, 256 of the /56s a provider gives
	// a subscriber), so that one allocation counts as one network towards the user-wide lock.
	DefaultIPv4PrefixLen = 24
	DefaultIPv6PrefixLen = 48
	// DefaultFamiliarFor is how long a network from which the user passed stays familiar when
	// Config.FamiliarFor is 0, and DefaultFamiliarNetworks how many of them are kept, the most
	// recently passed, when Config.FamiliarNetworks is 0.
	DefaultFamiliarFor      = 30 * 24 * time.Hour
	DefaultFamiliarNetworks = 8
)

// Config configures the picture login. Credentials and Peppers are required; every other field
// has the default its comment gives.
type Config struct {
	// Credentials stores the enrolled picture passwords and counts failures, so a lock holds on
	// every instance that shares the store.
	Credentials store.PictureCredentials

	// Passkeys stores the users' passkeys (WebAuthn credentials), the second way through the
	// factor for the tenants whose policy allows it (store.Tenant.SecondFactor,
	// oidc2fa.Login.Passkeys): their sign-in page offers "Use a passkey" beside the picture,
	// their enrollment offers to add one. nil: no passkeys, whatever a tenant allows. The
	// provider's BaseURL must name a domain (the WebAuthn relying party ID is its host), not
	// an IP address.
	Passkeys store.Passkeys

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
	// MaxFailures is how many wrong attempts in a row from one source network lock the factor
	// for that network; every login flow also ends after that many attempts, whatever the
	// counts. 0: DefaultMaxFailures.
	MaxFailures int
	// LockBase is how long the MaxFailures-th failure in a row from a network locks the factor
	// for that network, counted from that failure; each further failure from it doubles it
	// (attempts during a lock count too), up to LockMax. A success from the network, an Unlock
	// or enrolling again ends it. 0: DefaultLockBase; LockMax 0: DefaultLockMax.
	LockBase time.Duration
	LockMax  time.Duration
	// UserLockNetworks is from how many source networks failures must come, since the user's
	// last success, to lock the factor for every network but the user's familiar ones (see
	// FamiliarFor): the user-wide lock. It lasts UserLockBase from the user's latest failure,
	// from any network (attempts during the lock count too), and each further network doubles
	// it, up to UserLockMax; so while it holds, at most one guess is checked per UserLockBase
	// from the unfamiliar networks, however many guess. A success (but one from a familiar
	// network while the lock holds), an Unlock or enrolling again ends it. 0:
	// DefaultUserLockNetworks, DefaultUserLockBase, DefaultUserLockMax.
	UserLockNetworks int
	UserLockBase     time.Duration
	UserLockMax      time.Duration
	// IPv4PrefixLen and IPv6PrefixLen are the sizes of a source network: the client address
	// (oidc2fa.Login.ClientAddr) is counted as its /IPv4PrefixLen or /IPv6PrefixLen, for the
	// network's own lock and towards the user-wide lock alike. 32 and 128 count every address
	// alone. A network smaller than what one party gets cheaply (longer than /24 or /48) lets one
	// party's failures count as many networks and lock the user everywhere. 0:
	// DefaultIPv4PrefixLen, DefaultIPv6PrefixLen.
	IPv4PrefixLen int
	IPv6PrefixLen int
	// FamiliarFor and FamiliarNetworks make the user's familiar networks: the FamiliarNetworks
	// networks the user most recently passed the factor from, each for FamiliarFor after its
	// latest success there. The user-wide lock does not shut out a familiar network, which only
	// its own failures lock, so a guess spread over many networks does not lock the user out at
	// home. A familiar network's failures still count towards the user-wide lock, and a success
	// there while it holds does not end it: it keeps shutting out the others. 0:
	// DefaultFamiliarFor (30 days), DefaultFamiliarNetworks (8).
	FamiliarFor      time.Duration
	FamiliarNetworks int

	// Languages adds languages to the pages or changes texts of a built-in one (see
	// oidc2fa.Catalog and BuiltinCatalogs); a catalog may also give the titles of the images
	// ("image.<name>"). The pages ship in English, German, French, Spanish and Japanese and
	// speak the best match for the person's languages (oidc2fa.Login.Languages). nil: the
	// built-in languages.
	Languages []oidc2fa.Catalog

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
	userNets    int
	userBase    time.Duration
	userMax     time.Duration
	v4Bits      int
	v6Bits      int
	famFor      time.Duration
	famKeep     int
	passkeys    store.Passkeys
	rp          relyingParty
	log         *slog.Logger
	now         func() time.Time
	tel         *telemetry
	texts       *pagetext.Set
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
		lockBase:    or(cfg.LockBase, DefaultLockBase),
		lockMax:     or(cfg.LockMax, DefaultLockMax),
		userNets:    orInt(cfg.UserLockNetworks, DefaultUserLockNetworks),
		userBase:    or(cfg.UserLockBase, DefaultUserLockBase),
		userMax:     or(cfg.UserLockMax, DefaultUserLockMax),
		v4Bits:      orInt(cfg.IPv4PrefixLen, DefaultIPv4PrefixLen),
		v6Bits:      orInt(cfg.IPv6PrefixLen, DefaultIPv6PrefixLen),
		famFor:      or(cfg.FamiliarFor, DefaultFamiliarFor),
		famKeep:     orInt(cfg.FamiliarNetworks, DefaultFamiliarNetworks),
		passkeys:    cfg.Passkeys,
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
	case cfg.LockBase < 0 || cfg.LockMax < 0 || cfg.UserLockBase < 0 || cfg.UserLockMax < 0:
		return nil, errors.New("picture: Config.LockBase, LockMax, UserLockBase and UserLockMax must not be negative")
	case a.userNets < 1:
		return nil, errors.New("picture: Config.UserLockNetworks must not be negative")
	case a.v4Bits < 1 || a.v4Bits > 32 || a.v6Bits < 1 || a.v6Bits > 128:
		return nil, errors.New("picture: Config.IPv4PrefixLen must be between 1 and 32, IPv6PrefixLen between 1 and 128")
	case cfg.FamiliarFor < 0 || cfg.FamiliarNetworks < 0:
		return nil, errors.New("picture: Config.FamiliarFor and FamiliarNetworks must not be negative")
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
	if a.texts, err = newTextSet(cfg.Languages); err != nil {
		return nil, err
	}
	a.hash.tel = a.tel
	if a.log == nil {
		a.log = slog.Default()
	}
	if a.now == nil {
		a.now = time.Now
	}
	if a.lockMax < a.lockBase {
		return nil, errors.New("picture: Config.LockMax must not be shorter than LockBase")
	}
	if a.userMax < a.userBase {
		return nil, errors.New("picture: Config.UserLockMax must not be shorter than UserLockBase")
	}
	return a, nil
}

func orInt(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func or(v, def time.Duration) time.Duration {
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

// Unlock forgets the failures of a user from every network, so the user may try again from
// anywhere: the administrator's unlock, which ends every lock. store.ErrNotFound if the user has
// not enrolled. With a store.Change in ctx (store.WithChange, Actor "admin"), a store that keeps
// an event log records secondfactor.unlocked in the same write when there were failures.
func (a *Authenticator) Unlock(ctx context.Context, tenant, userID string) error {
	return a.creds.ResetFailures(ctx, tenant, userID)
}

// Lock is a lock of a user's factor in force.
type Lock struct {
	// Network is the source network the lock shuts out, such as "192.0.2.0/24"; "" for the
	// user-wide lock, which shuts out every network but the user's familiar ones (see
	// FamiliarNetworks).
	Network string
	// Failures counts the failures in a row from Network, or for the user-wide lock from every
	// network since the user's last success; Networks is, for the user-wide lock, how many
	// networks they came from.
	Failures int
	Networks int
	// Until is when the lock ends.
	Until time.Time
}

// Locks returns the locks of a user's factor in force now: the user-wide one first, if any,
// then one per locked network, ordered by network. store.ErrNotFound if the user has not
// enrolled.
func (a *Authenticator) Locks(ctx context.Context, tenant, userID string) ([]Lock, error) {
	c, err := a.creds.Get(ctx, tenant, userID)
	if err != nil {
		return nil, err
	}
	now := a.now()
	var out []Lock
	if until := a.userLockedUntil(c, now); !until.IsZero() {
		out = append(out, Lock{Failures: c.Failures, Networks: c.Networks, Until: until})
	}
	nets, err := a.creds.ListNetworkFailures(ctx, tenant, userID)
	if err != nil {
		return nil, err
	}
	for _, n := range nets {
		if until := a.netLockedUntil(n, now); !until.IsZero() {
			out = append(out, Lock{Network: n.Network, Failures: n.Failures, Until: until})
		}
	}
	return out, nil
}

// FamiliarNetworks returns the user's familiar networks now, the most recently passed first:
// those of the Config.FamiliarNetworks networks the user most recently passed from where the
// latest success is less than Config.FamiliarFor old. The user-wide lock does not shut them out.
// store.ErrNotFound if the user has not enrolled.
func (a *Authenticator) FamiliarNetworks(ctx context.Context, tenant, userID string) ([]store.FamiliarNetwork, error) {
	fams, err := a.creds.FamiliarNetworks(ctx, tenant, userID)
	if err != nil {
		return nil, err
	}
	now := a.now()
	out := fams[:0]
	for i, f := range fams {
		if i < a.famKeep && now.Sub(f.Passed) < a.famFor {
			out = append(out, f)
		}
	}
	return out, nil
}

// familiar reports whether network is one of fams, a user's familiar networks, as of now.
func (a *Authenticator) familiar(fams []store.FamiliarNetwork, network string, now time.Time) bool {
	for i, f := range fams {
		if i < a.famKeep && f.Network == network && now.Sub(f.Passed) < a.famFor {
			return true
		}
	}
	return false
}

// Locked reports whether a lock of a user's factor is in force now, for any network.
// store.ErrNotFound if the user has not enrolled.
func (a *Authenticator) Locked(ctx context.Context, tenant, userID string) (bool, error) {
	locks, err := a.Locks(ctx, tenant, userID)
	return len(locks) > 0, err
}

// LockedUntil returns when the last of the locks of a user's factor in force now ends (see
// Locks), or the zero time when none is. store.ErrNotFound if the user has not enrolled.
func (a *Authenticator) LockedUntil(ctx context.Context, tenant, userID string) (time.Time, error) {
	locks, err := a.Locks(ctx, tenant, userID)
	var until time.Time
	for _, l := range locks {
		if l.Until.After(until) {
			until = l.Until
		}
	}
	return until, err
}

// network is the source network of addr, as failures are counted: its /IPv4PrefixLen or
// /IPv6PrefixLen, or "unknown" when there is no address.
func (a *Authenticator) network(addr netip.Addr) string {
	if !addr.IsValid() {
		return "unknown"
	}
	addr = addr.Unmap().WithZone("")
	bits := a.v4Bits
	if addr.Is6() {
		bits = a.v6Bits
	}
	return netip.PrefixFrom(addr, bits).Masked().String()
}

// HasFactor implements oidc2fa.FactorChecker: whether the user has a picture password or a
// passkey.
func (a *Authenticator) HasFactor(ctx context.Context, tenant, subject string) (bool, error) {
	_, err := a.creds.Get(ctx, tenant, subject)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return false, err
	default:
		return true, nil
	}
	if a.passkeys == nil {
		return false, nil
	}
	ps, err := a.passkeys.List(ctx, tenant, subject)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	}
	return len(ps) > 0, nil
}

// netLockedUntil is when the lock of network n ends, as of now; the zero time when it is not
// locked now. The MaxFailures-th failure in a row locks for LockBase, each further one for twice
// as long as the one before, up to LockMax, counted from the latest failure.
func (a *Authenticator) netLockedUntil(n store.NetworkFailures, now time.Time) time.Time {
	return backOff(n.Failures-a.maxFailures, n.LastFailure, now, a.lockBase, a.lockMax)
}

// userLockedUntil is when the user-wide lock of c ends, as of now; the zero time when it is not
// locked now. Failures from UserLockNetworks networks lock for UserLockBase, each further
// network for twice as long as the one before, up to UserLockMax, counted from the user's
// latest failure.
func (a *Authenticator) userLockedUntil(c *store.PictureCredential, now time.Time) time.Time {
	return backOff(c.Networks-a.userNets, c.LastFailure, now, a.userBase, a.userMax)
}

// backOff is when a lock that began at the n-th step beyond its threshold (n < 0: not reached),
// the latest at last, ends as of now: base, doubled n times, up to max; the zero time when it is
// not in force now. A lock without a time (last is zero: counted before times were kept) holds
// until its next step starts the clock.
func backOff(n int, last, now time.Time, base, max time.Duration) time.Time {
	if n < 0 {
		return time.Time{}
	}
	if last.IsZero() {
		return now.Add(max)
	}
	d := max
	if n < 62 && base<<n > 0 && base<<n < max {
		d = base << n
	}
	if end := last.Add(d); now.Before(end) {
		return end
	}
	return time.Time{}
}
