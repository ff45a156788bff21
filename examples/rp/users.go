package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/crypto/argon2"

	"github.com/visid/visid/oidc2fa/rp"
)

// The demo user every start has; the startup hints print its password.
const (
	demoEmail    = "alice@example.com"
	demoPassword = "correct horse battery staple"
)

// The argon2id parameters: OWASP's minimum for argon2id (19 MiB, two passes, one lane). A
// real application tunes them to what its hardware affords and stores them with each hash.
const (
	argonTime    = 2
	argonMemory  = 19 * 1024 // KiB
	argonThreads = 1
	argonKeyLen  = 32
	saltLen      = 16
)

// passwordHash is an argon2id hash of a password with its salt. Only hashes are kept; the
// passwords are dropped once hashed.
type passwordHash struct {
	salt [saltLen]byte
	key  [argonKeyLen]byte
}

// hashPassword hashes password with a fresh random salt.
func hashPassword(password string) passwordHash {
	var h passwordHash
	_, _ = rand.Read(h.salt[:]) // never fails: crypto/rand crashes the program rather than return an error
	copy(h.key[:], argon2.IDKey([]byte(password), h.salt[:], argonTime, argonMemory, argonThreads, argonKeyLen))
	return h
}

// matches reports whether password is the hashed one; the comparison takes the same time
// wherever the keys differ.
func (h passwordHash) matches(password string) bool {
	key := argon2.IDKey([]byte(password), h.salt[:], argonTime, argonMemory, argonThreads, argonKeyLen)
	return subtle.ConstantTimeCompare(key, h.key[:]) == 1
}

// users is the application's own user list: the first factor. The list is read-only once
// loaded; only the visid ids are added as users sign in.
type users struct {
	byEmail map[string]passwordHash // by normalized email
	// absent is hashed against for an unknown email, so that an unknown user takes as long to
	// refuse as a wrong password.
	absent passwordHash
	// hashing bounds the argon2 computations running at once: each takes argonMemory.
	hashing chan struct{}

	mu sync.Mutex
	// visidIDs are the visid ids (the ID token's sub) of the users who have passed both factors,
	// by normalized email: stored at the first sign-in, checked at every later one. Kept in
	// memory like the list; a real application stores it with the user.
	visidIDs map[string]string
}

// newUsers returns the list with the demo user only.
func newUsers() *users {
	u := &users{
		byEmail:  map[string]passwordHash{},
		absent:   hashPassword("no user has this password"),
		hashing:  make(chan struct{}, runtime.GOMAXPROCS(0)),
		visidIDs: map[string]string{},
	}
	_ = u.add(demoEmail, demoPassword) // the list is empty: no duplicate
	return u
}

// normalizeEmail is the form of an email the list is keyed by, and that the application sends
// to visid as login_hint: visid compares userNames without regard to case.
func normalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// add adds a user; it fails for an email already in the list.
func (u *users) add(email, password string) error {
	email = normalizeEmail(email)
	if _, dup := u.byEmail[email]; dup {
		return fmt.Errorf("%s is listed twice", email)
	}
	u.byEmail[email] = hashPassword(password)
	return nil
}

// load adds the users of a file of lines "email:password". Blank lines and lines starting
// with # are skipped; the password is everything after the first colon.
func (u *users) load(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" || strings.HasPrefix(strings.TrimSpace(text), "#") {
			continue
		}
		email, password, ok := strings.Cut(text, ":")
		email = strings.TrimSpace(email)
		switch {
		case !ok || password == "":
			return n, fmt.Errorf("%s:%d: want email:password", path, line)
		case !strings.Contains(email, "@") || strings.ContainsAny(email, " \t"):
			return n, fmt.Errorf("%s:%d: %q is not an email address", path, line, email)
		}
		if err := u.add(email, password); err != nil {
			return n, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		n++
	}
	if err := sc.Err(); err != nil {
		return n, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}

// check is the first factor: it returns the normalized email when password is that user's.
// An unknown email costs the same hash as a known one. It waits its turn to hash, or until ctx
// is done.
func (u *users) check(ctx context.Context, email, password string) (string, bool) {
	select {
	case u.hashing <- struct{}{}:
		defer func() { <-u.hashing }()
	case <-ctx.Done():
		return "", false
	}
	email = normalizeEmail(email)
	h, known := u.byEmail[email]
	if !known {
		h = u.absent
	}
	if !h.matches(password) || !known {
		return "", false
	}
	return email, true
}

// bindVisidID binds the second factor to the visid user who passed it first: at email's first
// sign-in with both factors it stores res.Subject, and at every later one it checks the token's
// sub against what it stored (rp.Result.CheckSubject: an error wrapping rp.ErrWrongUser when
// another visid user passed). A name at visid can be renamed or handed to another user; the
// visid id cannot.
func (u *users) bindVisidID(email string, res *rp.Result) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if id, ok := u.visidIDs[email]; ok {
		return res.CheckSubject(id)
	}
	u.visidIDs[email] = res.Subject
	return nil
}

// len is how many users the list has.
func (u *users) len() int { return len(u.byEmail) }
