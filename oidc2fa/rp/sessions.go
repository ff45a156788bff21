package rp

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Session is what the RP keeps of one sign-in between AuthCodeURL and Callback, or of one
// enrollment between EnrollURL and Callback.
type Session struct {
	// State is the state parameter: 256 random bits, base64url. Sessions are found by it.
	State string
	// Nonce is the nonce the ID token must echo; "" for an enrollment.
	Nonce string
	// Verifier is the PKCE code_verifier whose S256 challenge went to the provider; "" for an
	// enrollment.
	Verifier string
	// LoginHint is the login hint the sign-in (or enrollment) was started with.
	LoginHint string
	// Enroll marks an enrollment that EnrollURL started, not a sign-in: its callback can only
	// report the enrollment, never sign anyone in. A Sessions must keep it as saved; false for
	// every session AuthCodeURL saves.
	Enroll bool
}

// Sessions keeps sign-ins between AuthCodeURL and Callback, and enrollments between EnrollURL
// and Callback; it keeps every field of a Session as saved. An implementation must bind each
// session to the browser that started it (a cookie, or the host's own session), so that a
// callback URL carried to another browser fails (RFC 9700 §4.7). NewServerSessions and
// NewCookieSessions are the two the package offers; a host with its own session store may
// implement it on that.
type Sessions interface {
	// Save keeps s for the browser of r, for a limited time. It may set a cookie on w, so it
	// runs before the response is written.
	Save(w http.ResponseWriter, r *http.Request, s Session) error

	// Take returns the session saved under state for the browser of r and ends it, so that a
	// second Take of the same state fails; of concurrent Takes of one state, at most one
	// succeeds. When there is no such session — never saved, saved for another browser,
	// expired, already taken, or its cookie was altered — the error wraps ErrState; any other
	// error is a failure of the implementation's own storage. It may clear a cookie on w.
	Take(w http.ResponseWriter, r *http.Request, state string) (Session, error)
}

// DefaultSessionTTL is how long a sign-in may take, from AuthCodeURL to Callback, when a
// Sessions config's TTL is 0.
const DefaultSessionTTL = 10 * time.Minute

// DefaultMaxSessions bounds the sign-ins a ServerSessions holds, and the used states a
// CookieSessions remembers, when the config's limit is 0.
const DefaultMaxSessions = 10000

// DefaultCookieName is the prefix of the sessions' cookie names when the config's Name is "".
const DefaultCookieName = "visid_rp"

// cookies names, sets and clears the cookie of a sign-in. Each sign-in has its own cookie,
// named after its state, so sign-ins in two tabs do not disturb each other.
type cookies struct {
	name   string
	path   string
	secure bool
	ttl    time.Duration
}

func newCookies(name, path string, secure bool, ttl time.Duration) (cookies, error) {
	if name == "" {
		name = DefaultCookieName
	}
	if path == "" {
		path = "/"
	}
	if ttl == 0 {
		ttl = DefaultSessionTTL
	}
	switch {
	case ttl < 0:
		return cookies{}, errors.New("rp: a Sessions TTL must not be negative")
	case !validCookieName(name):
		return cookies{}, fmt.Errorf("rp: %q is not a valid cookie name", name)
	}
	return cookies{name: name, path: path, secure: secure, ttl: ttl}, nil
}

// nameOf is the cookie name of the sign-in with state: the prefix and 96 bits of a hash of the
// state, which the callback's query may fill with anything.
func (c cookies) nameOf(state string) string {
	sum := sha256.Sum256([]byte("visid rp cookie\x00" + state))
	return c.name + "_" + base64.RawURLEncoding.EncodeToString(sum[:12])
}

func (c cookies) set(w http.ResponseWriter, r *http.Request, state, value string) {
	http.SetCookie(w, &http.Cookie{
		Name:     c.nameOf(state),
		Value:    value,
		Path:     c.path,
		MaxAge:   int((c.ttl + time.Second - 1) / time.Second),
		HttpOnly: true,
		Secure:   c.secure || r.TLS != nil,
		SameSite: http.SameSiteLaxMode, // sent on the provider's top-level redirect back
	})
}

// get returns the value of the sign-in's cookie and clears it on w when present.
func (c cookies) get(w http.ResponseWriter, r *http.Request, state string) (string, bool) {
	ck, err := r.Cookie(c.nameOf(state))
	if err != nil {
		return "", false
	}
	http.SetCookie(w, &http.Cookie{Name: ck.Name, Value: "", Path: c.path, MaxAge: -1,
		HttpOnly: true, Secure: c.secure || r.TLS != nil, SameSite: http.SameSiteLaxMode})
	return ck.Value, true
}

func validCookieName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f {
			return false
		}
		switch c {
		case '(', ')', '<', '>', '@', ',', ';', ':', '\\', '"', '/', '[', ']', '?', '=', '{', '}':
			return false
		}
	}
	return s != ""
}

// ServerSessionsConfig configures NewServerSessions. The zero value is usable.
type ServerSessionsConfig struct {
	// TTL is how long a sign-in may take. 0: DefaultSessionTTL.
	TTL time.Duration
	// Now is the clock for expiry. nil: time.Now.
	Now func() time.Time
	// MaxSessions bounds the sign-ins held at once; when full, the oldest is dropped. 0:
	// DefaultMaxSessions.
	MaxSessions int
	// Name is the prefix of the binding cookies' names. "": DefaultCookieName.
	Name string
	// Path is the binding cookies' path; it must cover the redirect URI. "": "/".
	Path string
	// Secure marks the binding cookies Secure; they are when the request came over TLS anyway.
	// Set it when TLS ends at a proxy in front of the application.
	Secure bool
}

// ServerSessions keeps sign-ins in this process's memory, by state. Each is bound to its browser
// by a cookie holding a random value that only that browser has; the cookie carries nothing
// else. Expired sign-ins are dropped as new ones are saved, without a goroutine. Sign-ins do not
// survive a restart and are not shared by several instances: use NewCookieSessions (or a
// Sessions of your own) behind a load balancer without sticky sessions.
type ServerSessions struct {
	now     func() time.Time
	ttl     time.Duration
	cookies cookies

	mu      sync.Mutex
	pending *expiring[string, serverSession]
}

type serverSession struct {
	s       Session
	binding [32]byte // SHA-256 of the cookie's value
}

var _ Sessions = (*ServerSessions)(nil)

// NewServerSessions returns sessions kept in memory. It fails for a negative TTL or
// MaxSessions, or an invalid cookie name.
func NewServerSessions(cfg ServerSessionsConfig) (*ServerSessions, error) {
	if cfg.MaxSessions < 0 {
		return nil, errors.New("rp: ServerSessionsConfig.MaxSessions must not be negative")
	}
	c, err := newCookies(cfg.Name, cfg.Path, cfg.Secure, cfg.TTL)
	if err != nil {
		return nil, err
	}
	s := &ServerSessions{now: cfg.Now, ttl: c.ttl, cookies: c,
		pending: newExpiring[string, serverSession](orDefault(cfg.MaxSessions, DefaultMaxSessions))}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

func orDefault(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}

// Save implements Sessions: it keeps s until TTL has passed and sets the binding cookie.
func (ss *ServerSessions) Save(w http.ResponseWriter, r *http.Request, s Session) error {
	if s.State == "" {
		return errors.New("rp: a session needs a state")
	}
	binding := randomString()
	ss.mu.Lock()
	now := ss.now()
	ok := ss.pending.put(now, s.State, serverSession{s: s, binding: sha256.Sum256([]byte(binding))}, now.Add(ss.ttl))
	ss.mu.Unlock()
	if !ok {
		return errors.New("rp: a session with this state exists already")
	}
	ss.cookies.set(w, r, s.State, binding)
	return nil
}

// Take implements Sessions. A request without the session's binding cookie gets ErrState and
// leaves the session in place, so a state that leaked cannot be used to cancel the sign-in.
func (ss *ServerSessions) Take(w http.ResponseWriter, r *http.Request, state string) (Session, error) {
	binding, hasCookie := ss.cookies.get(w, r, state)
	sum := sha256.Sum256([]byte(binding))
	ss.mu.Lock()
	defer ss.mu.Unlock()
	now := ss.now()
	e, ok := ss.pending.get(now, state)
	switch {
	case !ok:
		return Session{}, fmt.Errorf("no pending sign-in has this state: %w", ErrState)
	case !hasCookie || subtle.ConstantTimeCompare(sum[:], e.binding[:]) != 1:
		return Session{}, fmt.Errorf("the sign-in was started in another browser: %w", ErrState)
	}
	ss.pending.remove(state)
	return e.s, nil
}

// Len returns how many sign-ins are pending, expired ones not counted: for metrics.
func (ss *ServerSessions) Len() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.pending.len(ss.now())
}
