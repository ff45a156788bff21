package rp

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// maxCookieBytes bounds the cookie CookieSessions sets (browsers keep at least 4096 bytes of
// name, value and attributes).
const maxCookieBytes = 3800

// CookieSessionsConfig configures NewCookieSessions. Key is required.
type CookieSessionsConfig struct {
	// Key is the AES-256 key that encrypts and authenticates the cookies: exactly 32 random
	// bytes, kept secret, the same on every instance, used for nothing else. Changing it ends
	// the sign-ins in progress, nothing more.
	Key []byte
	// Name is the prefix of the cookies' names. "": DefaultCookieName.
	Name string
	// Path is the cookies' path; it must cover the redirect URI. "": "/".
	Path string
	// Secure marks the cookies Secure; they are when the request came over TLS anyway. Set it
	// when TLS ends at a proxy in front of the application.
	Secure bool
	// TTL is how long a sign-in may take; the cookie carries its expiry. 0: DefaultSessionTTL.
	TTL time.Duration
	// Now is the clock for expiry. nil: time.Now.
	Now func() time.Time
	// MaxUsed bounds how many taken states are remembered (for TTL) to refuse a replayed
	// cookie; when full, the oldest is forgotten. 0: DefaultMaxSessions.
	MaxUsed int
}

// CookieSessions keeps each sign-in in a cookie of the browser that started it, encrypted and
// authenticated with AES-256-GCM. The cookie is bound to its state (the state is the GCM
// additional data, and is inside the cookie as well), so it cannot be moved to another sign-in,
// and it carries its expiry. Nothing is kept on the server but the states already taken, for
// TTL, so that a replayed cookie is refused: that memory is per process, so behind several
// instances a replay can reach another instance — where the provider refuses the already
// redeemed code.
type CookieSessions struct {
	aead    cipher.AEAD
	now     func() time.Time
	ttl     time.Duration
	cookies cookies

	mu   sync.Mutex
	used *expiring[[32]byte, struct{}]
}

var _ Sessions = (*CookieSessions)(nil)

// cookiePayload is the plaintext of a cookie.
type cookiePayload struct {
	State     string `json:"s"`
	Nonce     string `json:"n"`
	Verifier  string `json:"v"`
	LoginHint string `json:"h,omitempty"`
	Enroll    bool   `json:"en,omitempty"` // absent in cookies of versions without enrollment: false
	Expires   int64  `json:"e"`            // Unix seconds
}

// NewCookieSessions returns sessions kept in encrypted cookies. It fails unless Key is 32
// bytes, and for a negative TTL or MaxUsed or an invalid cookie name.
func NewCookieSessions(cfg CookieSessionsConfig) (*CookieSessions, error) {
	if len(cfg.Key) != 32 {
		return nil, fmt.Errorf("rp: CookieSessionsConfig.Key must be 32 bytes, not %d", len(cfg.Key))
	}
	if cfg.MaxUsed < 0 {
		return nil, errors.New("rp: CookieSessionsConfig.MaxUsed must not be negative")
	}
	c, err := newCookies(cfg.Name, cfg.Path, cfg.Secure, cfg.TTL)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(cfg.Key) // copies the key
	if err != nil {
		return nil, fmt.Errorf("rp: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("rp: %w", err)
	}
	cs := &CookieSessions{aead: aead, now: cfg.Now, ttl: c.ttl, cookies: c,
		used: newExpiring[[32]byte, struct{}](orDefault(cfg.MaxUsed, DefaultMaxSessions))}
	if cs.now == nil {
		cs.now = time.Now
	}
	return cs, nil
}

// additionalData binds a cookie to its state.
func additionalData(state string) []byte { return []byte("visid rp session v1\x00" + state) }

// Save implements Sessions: it sets the sign-in's cookie, which expires after TTL.
func (cs *CookieSessions) Save(w http.ResponseWriter, r *http.Request, s Session) error {
	if s.State == "" {
		return errors.New("rp: a session needs a state")
	}
	plain, err := json.Marshal(cookiePayload{State: s.State, Nonce: s.Nonce, Verifier: s.Verifier,
		LoginHint: s.LoginHint, Enroll: s.Enroll, Expires: cs.now().Add(cs.ttl).Unix()})
	if err != nil {
		return fmt.Errorf("rp: %w", err)
	}
	nonce := make([]byte, cs.aead.NonceSize(), cs.aead.NonceSize()+len(plain)+cs.aead.Overhead())
	_, _ = rand.Read(nonce) // never fails
	sealed := cs.aead.Seal(nonce, nonce, plain, additionalData(s.State))
	value := base64.RawURLEncoding.EncodeToString(sealed)
	if len(value)+len(cs.cookies.nameOf(s.State)) > maxCookieBytes {
		return errors.New("rp: the session does not fit in a cookie (is the login hint very long?)")
	}
	cs.cookies.set(w, r, s.State, value)
	return nil
}

// Take implements Sessions: it opens the cookie of state, checks that it belongs to state and
// has not expired or been taken before, and clears it.
func (cs *CookieSessions) Take(w http.ResponseWriter, r *http.Request, state string) (Session, error) {
	value, ok := cs.cookies.get(w, r, state)
	if !ok {
		return Session{}, fmt.Errorf("this browser has no cookie for the sign-in: %w", ErrState)
	}
	sealed, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil || len(sealed) < cs.aead.NonceSize() {
		return Session{}, fmt.Errorf("the sign-in's cookie is malformed: %w", ErrState)
	}
	n := cs.aead.NonceSize()
	plain, err := cs.aead.Open(nil, sealed[:n], sealed[n:], additionalData(state))
	if err != nil {
		return Session{}, fmt.Errorf("the sign-in's cookie is not authentic or belongs to another sign-in: %w", ErrState)
	}
	var p cookiePayload
	if err := json.Unmarshal(plain, &p); err != nil || p.State != state {
		return Session{}, fmt.Errorf("the sign-in's cookie belongs to another sign-in: %w", ErrState)
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	now := cs.now()
	if now.Unix() >= p.Expires {
		return Session{}, fmt.Errorf("the sign-in expired: %w", ErrState)
	}
	// The cookie is valid until p.Expires, at most TTL from now: remember it as used that long.
	if !cs.used.put(now, sha256.Sum256([]byte(state)), struct{}{}, now.Add(cs.ttl)) {
		return Session{}, fmt.Errorf("the sign-in was already finished: %w", ErrState)
	}
	return Session{State: p.State, Nonce: p.Nonce, Verifier: p.Verifier, LoginHint: p.LoginHint, Enroll: p.Enroll}, nil
}
