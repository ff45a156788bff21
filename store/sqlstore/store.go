package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"time"

	// The two drivers sqlstore speaks.
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/visid/visid/store"
)

// Dialect names the SQL dialect of a Config's database.
type Dialect int

// The dialects. The zero Dialect means: detect it from the database's driver.
const (
	// SQLite is SQLite through modernc.org/sqlite (driver name "sqlite").
	SQLite = Dialect(sqliteDialect)
	// Postgres is PostgreSQL through github.com/jackc/pgx/v5/stdlib (driver name "pgx").
	Postgres = Dialect(postgresDialect)
)

func (d Dialect) String() string {
	switch d {
	case SQLite:
		return "SQLite"
	case Postgres:
		return "PostgreSQL"
	}
	return fmt.Sprintf("Dialect(%d)", int(d))
}

// Config configures a Store.
type Config struct {
	// DB is the database. Required. The Store never closes it.
	//
	// A SQLite database should be opened with a busy timeout (DSN parameter
	// _pragma=busy_timeout(10000)) and is best in WAL mode; Open does both. The Store does not
	// rely on foreign keys being enforced: it removes what a delete takes with it itself.
	DB *sql.DB

	// Dialect is the database's SQL dialect. Zero: detected from DB's driver
	// (modernc.org/sqlite is SQLite, github.com/jackc/pgx/v5/stdlib is Postgres).
	Dialect Dialect

	// StatementTimeout bounds how long one statement may run on PostgreSQL: Open sets it as
	// the statement_timeout of every connection it opens, and a statement that runs longer
	// fails (SQLSTATE 57014, query_canceled) instead of holding its connection and locks.
	// Zero: 30 s. Negative: none (the server's setting holds). A Store made by New over a
	// Config.DB leaves the DB's connections as they are: give them a statement_timeout
	// yourself (for pgx, the DSN parameter statement_timeout=30000). Every store call also
	// stops when its ctx is done, on both dialects.
	StatementTimeout time.Duration

	// MaxOpenConns bounds the connections Open keeps to PostgreSQL, busy and idle together: a
	// request that finds them all busy waits for one until its ctx ends, and then fails with
	// store.ErrUnavailable (a 503 with Retry-After from visid's handlers). Size it so that
	// instances × MaxOpenConns stays below the server's max_connections. Zero:
	// DefaultMaxOpenConns; negative: no bound. The DSN parameter pool_max_conns (pgx's name) overrides it.
	// MaxIdleConns, ConnMaxLifetime and ConnMaxIdleTime are database/sql's settings of the same
	// names; zero: DefaultMaxIdleConns, DefaultConnMaxLifetime, DefaultConnMaxIdleTime, and the
	// DSN parameters pool_max_idle_conns, pool_max_conn_lifetime and pool_max_conn_idle_time
	// (durations such as 30m) override them. They apply to PostgreSQL as Open opens it; a
	// SQLite database keeps Open's own settings, and a Store made by New leaves its DB's.
	MaxOpenConns    int
	MaxIdleConns    int
	ConnMaxLifetime time.Duration
	ConnMaxIdleTime time.Duration

	// KeyEncryptionKey is the AES-256 key (32 bytes) that encrypts signing keys' private keys
	// before they are stored. Nil: the Store's SigningKeys.Add and List fail with
	// ErrNoKeyEncryptionKey, and the rest of the Store works.
	KeyEncryptionKey []byte
}

// ErrNoKeyEncryptionKey is what SigningKeys.Add and List return when Config.KeyEncryptionKey is
// unset.
var ErrNoKeyEncryptionKey = errors.New("sqlstore: no KeyEncryptionKey configured: signing keys cannot be stored")

// Store is the database/sql backend. It is safe for concurrent use. Call Migrate once before
// using it on a new database.
type Store struct {
	db   *sql.DB
	d    dialect
	kek  []byte
	own  bool          // Open opened db: Close closes it
	wsem chan struct{} // SQLite: serializes this Store's write transactions

	// savedChecked, when set (by tests only), is called by Webhooks.SaveDelivery between its
	// look for events after the cursor and its write.
	savedChecked func()
}

// New returns a Store over cfg.DB. It opens no connection.
func New(cfg Config) (*Store, error) {
	if cfg.DB == nil {
		return nil, errors.New("sqlstore: Config.DB is nil")
	}
	d := cfg.Dialect
	if d == 0 {
		switch fmt.Sprintf("%T", cfg.DB.Driver()) {
		case "*sqlite.Driver":
			d = SQLite
		case "*stdlib.Driver":
			d = Postgres
		default:
			return nil, fmt.Errorf("sqlstore: cannot tell the dialect of driver %T: set Config.Dialect", cfg.DB.Driver())
		}
	}
	if d != SQLite && d != Postgres {
		return nil, fmt.Errorf("sqlstore: unknown %v", d)
	}
	if cfg.KeyEncryptionKey != nil && len(cfg.KeyEncryptionKey) != 32 {
		return nil, fmt.Errorf("sqlstore: Config.KeyEncryptionKey has %d bytes, want 32", len(cfg.KeyEncryptionKey))
	}
	s := &Store{db: cfg.DB, d: dialect(d)}
	if cfg.KeyEncryptionKey != nil {
		s.kek = append([]byte(nil), cfg.KeyEncryptionKey...)
	}
	if s.d == sqliteDialect {
		s.wsem = make(chan struct{}, 1)
	}
	return s, nil
}

// Open opens the database dsn names and returns a Store over it, as Config{}.Open does.
func Open(ctx context.Context, dsn string) (*Store, error) {
	return Config{}.Open(ctx, dsn)
}

// DefaultStatementTimeout is the statement_timeout of Config.StatementTimeout's zero value.
const DefaultStatementTimeout = 30 * time.Second

// The pool's defaults for PostgreSQL: Config.MaxOpenConns, MaxIdleConns, ConnMaxLifetime and
// ConnMaxIdleTime when zero. Ten connections serve a few hundred requests a second (a store call
// holds one for a millisecond or two); the lifetime lets a pool follow a server that fails over
// or a proxy that rebalances.
const (
	DefaultMaxOpenConns    = 10
	DefaultMaxIdleConns    = 10
	DefaultConnMaxLifetime = 30 * time.Minute
	DefaultConnMaxIdleTime = 5 * time.Minute
)

// Open opens the database dsn names and returns a Store over it with the rest of cfg, whose DB
// and Dialect must be unset. Close closes the database.
//
//   - "sqlite:PATH" opens the SQLite file PATH (created if missing) in WAL mode, with a busy
//     timeout of 10 s and foreign keys on. PATH may carry further modernc.org/sqlite DSN
//     parameters after a '?'; ":memory:" is a private in-memory database on one connection.
//   - "postgres://…" or "postgresql://…" opens PostgreSQL through pgx, every connection with
//     the statement_timeout of cfg.StatementTimeout, in a pool bounded by cfg.MaxOpenConns
//     (DefaultMaxOpenConns); the parameters pool_max_conns, pool_max_idle_conns,
//     pool_max_conn_lifetime and pool_max_conn_idle_time set the pool instead of cfg.
func (cfg Config) Open(ctx context.Context, dsn string) (*Store, error) {
	if cfg.DB != nil || cfg.Dialect != 0 {
		return nil, errors.New("sqlstore: Config.Open: DB and Dialect come from the dsn and must be unset")
	}
	var db *sql.DB
	var err error
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(dsn, "sqlite:")
		if path == "" {
			return nil, errors.New("sqlstore: Open: sqlite: without a path")
		}
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		memory := InMemory(dsn)
		params := "_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=temp_store(MEMORY)"
		if !memory {
			params += "&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
		}
		db, err = sql.Open("sqlite", "file:"+path+sep+params)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: Open: %w", err)
		}
		if memory {
			db.SetMaxOpenConns(1) // every connection would be a database of its own
		} else {
			// Writers take turns anyway (one write transaction at a time); a few connections
			// let readers run beside the writer, which WAL allows.
			n := max(4, runtime.GOMAXPROCS(0))
			db.SetMaxOpenConns(n)
			db.SetMaxIdleConns(n)
		}
		cfg.Dialect = SQLite
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		dsn, pool, err := cfg.pool(dsn)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: Open: %w", err)
		}
		pc, err := pgx.ParseConfig(dsn)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: Open: %w", err)
		}
		if t := cfg.statementTimeout(); t > 0 {
			pc.RuntimeParams["statement_timeout"] = strconv.FormatInt(max(t.Milliseconds(), 1), 10)
		}
		db = stdlib.OpenDB(*pc)
		db.SetMaxOpenConns(pool.MaxOpenConns)
		idle := pool.MaxIdleConns
		if pool.MaxOpenConns > 0 {
			idle = min(idle, pool.MaxOpenConns)
		}
		db.SetMaxIdleConns(idle)
		db.SetConnMaxLifetime(pool.ConnMaxLifetime)
		db.SetConnMaxIdleTime(pool.ConnMaxIdleTime)
		cfg.Dialect = Postgres
	default:
		return nil, errors.New(`sqlstore: Open: the dsn must start with "sqlite:", "postgres://" or "postgresql://"`)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlstore: Open: %w", err)
	}
	cfg.DB = db
	s, err := New(cfg)
	if err != nil {
		db.Close()
		return nil, err
	}
	s.own = true
	return s, nil
}

// poolParams are the DSN parameters of the pool's settings, named as pgx's pgxpool names them.
// pgx's database/sql driver would send them to the server as settings, which it refuses, so
// pool takes them out of the DSN.
var poolParams = [...]string{"pool_max_conns", "pool_max_idle_conns", "pool_max_conn_lifetime", "pool_max_conn_idle_time"}

// pool returns dsn without the pool's parameters, and cfg's pool settings with the defaults
// filled in and the DSN's parameters applied.
func (cfg Config) pool(dsn string) (string, Config, error) {
	p := Config{
		MaxOpenConns:    orDefault(cfg.MaxOpenConns, DefaultMaxOpenConns),
		MaxIdleConns:    orDefault(cfg.MaxIdleConns, DefaultMaxIdleConns),
		ConnMaxLifetime: orDefault(cfg.ConnMaxLifetime, DefaultConnMaxLifetime),
		ConnMaxIdleTime: orDefault(cfg.ConnMaxIdleTime, DefaultConnMaxIdleTime),
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", p, errors.New("the PostgreSQL URL does not parse") // the error would quote the password
	}
	q := u.Query()
	found := false
	for _, name := range poolParams {
		if !q.Has(name) {
			continue
		}
		found = true
		v := q.Get(name)
		q.Del(name)
		var err error
		switch name {
		case "pool_max_conns":
			p.MaxOpenConns, err = positive(name, v)
		case "pool_max_idle_conns":
			p.MaxIdleConns, err = positive(name, v)
		case "pool_max_conn_lifetime":
			p.ConnMaxLifetime, err = duration(name, v)
		case "pool_max_conn_idle_time":
			p.ConnMaxIdleTime, err = duration(name, v)
		}
		if err != nil {
			return "", p, err
		}
	}
	if !found {
		return dsn, p, nil
	}
	u.RawQuery = q.Encode()
	return u.String(), p, nil
}

func orDefault[T int | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

func positive(name, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s=%q: want a whole number of at least 1", name, v)
	}
	return n, nil
}

func duration(name, v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s=%q: want a duration such as 30m", name, v)
	}
	return d, nil
}

// statementTimeout returns the statement_timeout Open sets, 0 for none.
func (cfg Config) statementTimeout() time.Duration {
	switch {
	case cfg.StatementTimeout == 0:
		return DefaultStatementTimeout
	case cfg.StatementTimeout < 0:
		return 0
	}
	return cfg.StatementTimeout
}

// InMemory reports whether dsn names a SQLite in-memory database ("sqlite::memory:", or a
// mode=memory parameter): one that Open keeps on one connection and that lives only as long as
// the Store.
func InMemory(dsn string) bool {
	path, ok := strings.CutPrefix(dsn, "sqlite:")
	return ok && (path == ":memory:" || strings.Contains(path, "mode=memory"))
}

// Close closes the database if Open opened it; a Store made by New leaves its DB open.
func (s *Store) Close() error {
	if s.own {
		return s.db.Close()
	}
	return nil
}

// DB returns the Store's database.
func (s *Store) DB() *sql.DB { return s.db }

// Dialect returns the Store's dialect.
func (s *Store) Dialect() Dialect { return Dialect(s.d) }

// Backend returns the store's implementation of every store contract.
func (s *Store) Backend() store.Backend {
	return store.Backend{
		Tenants:      s.Tenants(),
		Users:        s.Users(),
		Groups:       s.Groups(),
		APIKeys:      s.APIKeys(),
		Clients:      s.Clients(),
		Codes:        s.Codes(),
		Interactions: s.Interactions(),
		Pushed:       s.PushedRequests(),
		AccessTokens: s.AccessTokens(),
		Pictures:     s.Pictures(),
		Passkeys:     s.Passkeys(),
		SigningKeys:  s.SigningKeys(),
		Events:       s.Events(),
		Webhooks:     s.Webhooks(),
	}
}

// Tenants returns the store's store.Tenants.
func (s *Store) Tenants() *Tenants { return &Tenants{s} }

// Users returns the store's store.Users.
func (s *Store) Users() *Users { return &Users{s} }

// Groups returns the store's store.Groups.
func (s *Store) Groups() *Groups { return &Groups{s} }

// APIKeys returns the store's store.APIKeys.
func (s *Store) APIKeys() *APIKeys { return &APIKeys{s} }

// Clients returns the store's store.Clients.
func (s *Store) Clients() *Clients { return &Clients{s} }

// Codes returns the store's store.Codes.
func (s *Store) Codes() *Codes { return &Codes{s} }

// Interactions returns the store's store.Interactions.
func (s *Store) Interactions() *Interactions { return &Interactions{s} }

// AccessTokens returns the store's store.AccessTokens.
func (s *Store) AccessTokens() *AccessTokens { return &AccessTokens{s} }

// PushedRequests returns the store's store.PushedRequests.
func (s *Store) PushedRequests() *PushedRequests { return &PushedRequests{s} }

// Pictures returns the store's store.PictureCredentials.
func (s *Store) Pictures() *Pictures { return &Pictures{s} }

// Passkeys returns the store's store.Passkeys.
func (s *Store) Passkeys() *Passkeys { return &Passkeys{s} }

// Webhooks returns the store's store.Webhooks.
func (s *Store) Webhooks() *Webhooks { return &Webhooks{s} }

// Events returns the store's store.Events.
func (s *Store) Events() *Events { return &Events{s} }

// SigningKeys returns the store's store.SigningKeys.
func (s *Store) SigningKeys() *SigningKeys { return &SigningKeys{s} }
