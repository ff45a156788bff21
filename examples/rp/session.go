package main

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"sync"
	"time"
)

// The application's own session: a cookie holding a random id, mapped in memory to what the
// browser has proved so far.
const (
	sessionCookie   = "rp_session"
	sessionLifetime = 8 * time.Hour // from sign-in; a session is not extended by use
	maxSessions     = 10000         // when full, the oldest session ends
)

// session is what a browser has proved: nothing yet, the password of Email, or both factors.
type session struct {
	// CSRF is the token the session's forms carry.
	CSRF string
	// Email is the user who passed the first factor; "" before the password.
	Email string
	// Second is set once visid confirmed the second factor for Email.
	Second *secondFactor
	// Reenroll marks a sign-in started to change the picture password: once visid confirms
	// both factors again, the browser goes on to set up a new one.
	Reenroll bool
}

// secondFactor is what visid said about the second factor.
type secondFactor struct {
	Subject  string // the visid id of the user (sub)
	AuthTime time.Time
	AMR      []string
}

// signedIn reports whether the browser passed both factors.
func (s session) signedIn() bool { return s.Email != "" && s.Second != nil }

// csrfOK reports whether token is the session's CSRF token.
func (s session) csrfOK(token string) bool {
	return token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.CSRF)) == 1
}

// sessions keeps the sessions of every browser in memory: they end with the process.
type sessions struct {
	secure bool // the cookie is Secure: the application is served over https
	now    func() time.Time

	mu    sync.Mutex
	byID  map[string]stored
	order []started // oldest first; an entry may outlive its session
}

type stored struct {
	s       session
	expires time.Time
}

type started struct {
	id string
	at time.Time
}

func newSessions(secure bool, now func() time.Time) *sessions {
	return &sessions{secure: secure, now: now, byID: map[string]stored{}}
}

// get returns the session of r's cookie.
func (ss *sessions) get(r *http.Request) (session, bool) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return session{}, false
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	e, ok := ss.byID[c.Value]
	if !ok || !ss.now().Before(e.expires) {
		return session{}, false
	}
	return e.s, true
}

// start ends r's session, if any, and begins s under a new id with a new CSRF token, set as
// the cookie on w. A new id at each step (password, second factor) means an id planted in the
// browser before the sign-in is worth nothing after it.
func (ss *sessions) start(w http.ResponseWriter, r *http.Request, s session) session {
	id := randomToken()
	s.CSRF = randomToken()
	ss.mu.Lock()
	if c, err := r.Cookie(sessionCookie); err == nil {
		delete(ss.byID, c.Value)
	}
	now := ss.now()
	// Sessions end in the order they started: drop the expired ones, then the oldest if full.
	for len(ss.order) > 0 && (now.Sub(ss.order[0].at) >= sessionLifetime || len(ss.order) >= maxSessions) {
		delete(ss.byID, ss.order[0].id)
		ss.order = ss.order[1:]
	}
	ss.byID[id] = stored{s: s, expires: now.Add(sessionLifetime)}
	ss.order = append(ss.order, started{id: id, at: now})
	ss.mu.Unlock()
	ss.setCookie(w, id, 0)
	return s
}

// end ends r's session and clears the cookie.
func (ss *sessions) end(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil {
		ss.mu.Lock()
		delete(ss.byID, c.Value)
		ss.mu.Unlock()
	}
	ss.setCookie(w, "", -1)
}

// setCookie sets (maxAge 0: for the browser's session) or clears (maxAge -1) the cookie.
func (ss *sessions) setCookie(w http.ResponseWriter, id string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name:     sessionCookie,
		Value:    id,
		Path:     "/",
		MaxAge:   maxAge,
		HttpOnly: true,
		Secure:   ss.secure,
		// Lax: sent when visid redirects the browser back to /callback (a top-level GET), never
		// with a POST from another site.
		SameSite: http.SameSiteLaxMode,
	})
}

// randomToken is 256 random bits, base64url-encoded.
func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails: crypto/rand crashes the program rather than return an error
	return base64.RawURLEncoding.EncodeToString(b[:])
}
