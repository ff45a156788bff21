package picture

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"golang.org/x/text/language"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/schema"
)

// absentUser is looked up when the login hint named nobody, so that an unknown user costs the
// same store calls as a known one. No user has this id.
const absentUser = "user_0000000000000000000000000"

// failedMessage is the key of the one thing a person hears after any failed attempt, whatever
// the reason.
const failedMessage = "login.failed"

// methods is the amr of a picture login (RFC 8176): a graphical password is a password.
var methods = []string{"pwd"}

// loginState is what the login pages keep in the interaction between requests.
type loginState struct {
	Attempts int  `json:"a"` // attempts in this interaction
	Failed   bool `json:"f"` // the last attempt failed: the page says so
	// Passkey is the pending passkey challenge, taken by the request that answers it.
	Passkey *session `json:"p,omitempty"`
}

// challenge is what a login shows and checks: the user's credential and image, or, when there
// is nothing to check (reason says why), a decoy image that is the same on every visit.
type challenge struct {
	subject string // the user's id, or absentUser
	cred    *store.PictureCredential
	img     *image
	points  int
	reason  string // "" when cred can be checked
}

// ServeLogin implements oidc2fa.Authenticator. Below the login URL it serves:
//
//	GET  ""                    the page: the user's picture and a form for the points
//	POST ""                    an attempt: fields csrf and points ("x1,y1;x2,y2;…")
//	GET  image                 the picture
//	POST cancel                the person gives up (field csrf)
//	GET  static/picture.js, static/picture.css
func (a *Authenticator) ServeLogin(w http.ResponseWriter, r *http.Request, l *oidc2fa.Login) {
	if serveStatic(w, r, l.Rest) {
		return
	}
	ctx := r.Context()
	ch, err := a.challenge(ctx, l)
	if err != nil {
		a.internal(w, r, err)
		return
	}
	var st loginState
	if len(l.State) > 0 {
		_ = json.Unmarshal(l.State, &st) // the provider stored what SaveState was given
	}
	switch {
	case l.Rest == "image":
		serveImage(w, r, ch.img)
	case l.Rest == "cancel" && r.Method == http.MethodPost:
		a.log.InfoContext(ctx, "picture login cancelled", "tenant", l.Tenant, "subject", l.Subject)
		l.Fail(w, r, oidc2fa.Cancelled)
	case l.Rest == "" && r.Method == http.MethodPost:
		a.attempt(w, r, l, ch, st)
	case l.Rest == passkeyOptionsPath && r.Method == http.MethodPost:
		a.beginPasskeyLogin(w, r, l)
	case l.Rest == passkeyPath && r.Method == http.MethodPost:
		a.passkeyAttempt(w, r, l, ch)
	case l.Rest == "" && r.Method == http.MethodGet:
		t := a.texts.Match(l.Languages...)
		d := &pageData{
			T:            t,
			Title:        t.Text("login.title"),
			ClientName:   l.Client.Name,
			StyleURL:     l.Path(stylePath),
			ScriptURL:    l.Path(scriptPath),
			CSRF:         l.CSRFToken,
			Points:       ch.points,
			Tolerance:    a.tolerance,
			Action:       l.Path(""),
			ImageURL:     l.Path("image"),
			ImageTitle:   imageTitle(t, ch.img),
			CancelAction: l.Path("cancel"),
		}
		if st.Failed {
			d.Message = t.Text(failedMessage)
		}
		page := "login"
		if a.passkeysOffered(l.Passkeys, l.Origin) {
			d.withPasskey(l.Path(passkeyScriptPath), l.Path(passkeyOptionsPath), l.Path(passkeyPath))
			only, err := a.passkeyOnly(ctx, l, ch)
			if err != nil {
				a.internal(w, r, err)
				return
			}
			if only {
				page, d.ScriptURL = "passkey-login", ""
			}
		}
		a.render(w, r, http.StatusOK, page, d.withTenant(l.Look))
	case l.Rest == "" || l.Rest == passkeyOptionsPath || l.Rest == passkeyPath:
		allow := "POST"
		if l.Rest == "" {
			allow = "GET, POST"
		}
		methodNotAllowed(w, allow)
	case l.Rest == "cancel":
		methodNotAllowed(w, "POST")
	default:
		http.NotFound(w, r)
	}
}

// passkeyOnly reports whether the sign-in's user has passkeys and no picture password: their
// page offers the passkey alone. Every other user (unknown ones included) sees a picture. It
// reads the passkeys whoever the hint names, so the page costs the same store calls for all.
func (a *Authenticator) passkeyOnly(ctx context.Context, l *oidc2fa.Login, ch *challenge) (bool, error) {
	ps, err := a.passkeys.List(ctx, l.Tenant, ch.subject)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	}
	return ch.reason == "not enrolled" && l.User != nil && l.User.Active && len(ps) > 0, nil
}

// challenge finds what the login of l shows and checks. It reads the store the same way
// whether or not the hint named a user.
func (a *Authenticator) challenge(ctx context.Context, l *oidc2fa.Login) (*challenge, error) {
	ch := &challenge{subject: l.Subject}
	if ch.subject == "" {
		ch.subject = absentUser
	}
	cred, err := a.creds.Get(ctx, l.Tenant, ch.subject)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return nil, err
	default:
		ch.cred = cred
	}
	switch {
	case l.AmbiguousHint:
		ch.reason = "ambiguous hint" // the hint matched several users: it names nobody
	case l.User == nil:
		ch.reason = "unknown user"
	case !l.User.Active:
		ch.reason = "inactive user"
	case ch.cred == nil:
		ch.reason = "not enrolled"
	case a.images.byName[ch.cred.Image] == nil:
		ch.reason = "the enrolled image is no longer offered"
	}
	if ch.reason != "" {
		ch.cred = nil
		ch.img = a.decoyImage(l)
		ch.points = a.points
		return ch, nil
	}
	ch.img = a.images.byName[ch.cred.Image]
	ch.points = ch.cred.Points
	if !hmac.Equal(ch.img.digest, ch.cred.ImageDigest) {
		a.log.WarnContext(ctx, "the enrolled image has changed since the user enrolled", "tenant", l.Tenant,
			"subject", l.Subject, "image", ch.img.Name)
	}
	return ch, nil
}

// decoyImage is the image shown when there is no credential to check: chosen by a keyed hash of
// the tenant and the hint, so the same hint always shows the same image, as a real user's does.
func (a *Authenticator) decoyImage(l *oidc2fa.Login) *image {
	m := hmac.New(sha256.New, a.hash.current.Key)
	// Folded as the store folds userNames, so hints that name one user show one image.
	m.Write([]byte("visid picture decoy\x00" + l.Tenant + "\x00" + schema.Fold(l.LoginHint)))
	n := binary.BigEndian.Uint64(m.Sum(nil))
	return a.images.list[n%uint64(len(a.images.list))]
}

// attempt checks the points of a POST. Every path spends one argon2id hash and the same store
// calls, so a wrong picture, an unknown, inactive or unenrolled user and a locked one take the
// same time and get the same answer; only the log tells them apart. Every sign-in gets
// MaxFailures attempts, whatever the stored counts: an attempt on a factor locked for the
// client's network, or for every network (unless the client's is familiar), is answered as a
// wrong picture and never checked.
func (a *Authenticator) attempt(w http.ResponseWriter, r *http.Request, l *oidc2fa.Login, ch *challenge, st loginState) {
	ctx := r.Context()
	st.Attempts++
	now := a.now()
	points, perr := ParsePoints(r.PostFormValue("points"), ch.points)
	reason := ch.reason
	g, err := a.enter(ctx, l, ch, now)
	switch {
	case reason != "":
	case errors.Is(err, store.ErrNotFound):
		reason = "not enrolled" // the credential went since the page was shown
	case err != nil:
		a.internal(w, r, err)
		return
	case g.refused:
		reason = "locked"
	case perr != nil:
		reason = "malformed points"
	default:
		ok, err := a.hash.verify(ctx, ch.cred, points)
		if err != nil {
			a.internal(w, r, err)
			return
		}
		if ok {
			a.succeed(w, r, l, ch, store.PictureSuccess{Network: g.network, At: now, KeepFamiliar: a.famKeep,
				// A success from a familiar network leaves the user-wide lock to the others.
				KeepUserCount: g.userLockedAtRead}, points)
			return
		}
		reason = "wrong picture"
	}
	if reason != "wrong picture" {
		if err := a.hash.decoy(ctx); err != nil {
			a.internal(w, r, err)
			return
		}
	}
	a.failAttempt(w, r, l, ch, st, g, "picture", reason)
}

// gate is an attempt as the lock sees it, once enter has counted it.
type gate struct {
	network          string              // the client's source network
	familiar         bool                // the user recently passed from it
	userLockedAtRead bool                // the user-wide lock held when the attempt came
	count            store.FailureCounts // the counts with this attempt
	refused          bool                // a lock refuses the attempt: it must not be checked
}

// enter counts an attempt of the user of ch as a failure, before it is checked, so that
// concurrent attempts cannot run past a limit (a success resets the counts), and says whether a
// lock refuses it: one on the client's network, the user-wide one unless the network is
// familiar, or a count that moved past its limit under concurrent attempts (after a lock ends,
// only the first attempt is checked). The picture and the passkey share it. An error
// store.ErrNotFound means the user has no picture password.
func (a *Authenticator) enter(ctx context.Context, l *oidc2fa.Login, ch *challenge, now time.Time) (gate, error) {
	g := gate{network: a.network(l.ClientAddr)}
	nf, err := a.creds.NetworkFailures(ctx, l.Tenant, ch.subject, g.network)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return g, err
	}
	fams, err := a.creds.FamiliarNetworks(ctx, l.Tenant, ch.subject)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return g, err
	}
	// The user-wide lock does not shut out a network the user recently passed from: only its
	// own failures lock it.
	g.familiar = a.familiar(fams, g.network, now)
	g.userLockedAtRead = ch.cred != nil && !a.userLockedUntil(ch.cred, now).IsZero()
	lockedAtRead := (ch.cred != nil && !a.netLockedUntil(nf, now).IsZero()) || (!g.familiar && g.userLockedAtRead)
	g.count, err = a.creds.AddFailure(ctx, l.Tenant, ch.subject, g.network, now)
	if err != nil {
		return g, err
	}
	g.refused = ch.cred != nil && (lockedAtRead ||
		g.count.Network > a.maxFailures && g.count.Network != nf.Failures+1 ||
		!g.familiar && g.count.Networks >= a.userNets && g.count.User != ch.cred.Failures+1)
	return g, nil
}

// failAttempt answers a failed attempt with method ("picture" or "passkey") for reason: it
// counts and logs it (and a lock it started), then ends the sign-in after MaxFailures attempts
// or sends the browser back to the page, which says "That did not match", whatever the reason.
func (a *Authenticator) failAttempt(w http.ResponseWriter, r *http.Request, l *oidc2fa.Login, ch *challenge, st loginState, g gate, method, reason string) {
	ctx := r.Context()
	netLocked := ch.cred != nil && g.count.Network >= a.maxFailures
	userLocked := ch.cred != nil && g.count.Networks >= a.userNets // for every network but the familiar ones
	locked := netLocked || userLocked && !g.familiar
	outcome, known := outcomes[reason]
	if !known {
		outcome = "wrong_passkey" // a passkey's reasons are the errors of its check
	}
	a.tel.count(ctx, a.tel.attempts, outcome, l.Tenant)
	checked := reason == "wrong picture" || reason == "malformed points" || (method == "passkey" && !known)
	if locked && checked {
		a.tel.count(ctx, a.tel.lockouts, "", l.Tenant)
	}
	a.log.InfoContext(ctx, method+" login failed", "tenant", l.Tenant, "subject", l.Subject,
		"client", l.Client.ID, "network", g.network, "familiar", g.familiar, "reason", reason, "attempt", st.Attempts, "locked", locked)
	if netLocked && reason != "not enrolled" {
		a.log.WarnContext(ctx, "picture login locked after too many failures", "lock", "network", "tenant", l.Tenant,
			"subject", l.Subject, "network", g.network, "failures", g.count.Network,
			"until", a.netLockedUntil(store.NetworkFailures{Failures: g.count.Network, LastFailure: a.now()}, a.now()))
	}
	if userLocked && reason != "not enrolled" {
		until := a.userLockedUntil(&store.PictureCredential{Networks: g.count.Networks, LastFailure: a.now()}, a.now())
		a.log.WarnContext(ctx, "picture login locked after too many failures", "lock", "every network", "tenant", l.Tenant,
			"subject", l.Subject, "networks", g.count.Networks, "failures", g.count.User, "until", until)
	}
	if st.Attempts >= a.maxFailures {
		if locked {
			var until time.Time
			if netLocked {
				until = a.netLockedUntil(store.NetworkFailures{Failures: g.count.Network, LastFailure: a.now()}, a.now())
			}
			if userLocked && !g.familiar {
				if u := a.userLockedUntil(&store.PictureCredential{Networks: g.count.Networks, LastFailure: a.now()}, a.now()); u.After(until) {
					until = u
				}
			}
			l.FailLocked(w, r, until)
		} else {
			l.Fail(w, r, oidc2fa.Denied)
		}
		return
	}
	st.Failed = true
	err := l.UpdateState(ctx, func(old []byte) ([]byte, error) {
		var now loginState
		if len(old) > 0 {
			_ = json.Unmarshal(old, &now)
		}
		// A challenge asked for meanwhile stays, and so do the attempts counted meanwhile (a
		// passkey's attempt is counted when it takes its challenge): the count never goes back.
		next := st
		next.Passkey, next.Attempts = now.Passkey, max(st.Attempts, now.Attempts)
		return json.Marshal(next)
	})
	if err != nil {
		a.ended(w, r, l, err)
		return
	}
	http.Redirect(w, r, l.Path(""), http.StatusSeeOther)
}

// ended answers a request whose sign-in's state could not be written: when another request
// ended the sign-in meanwhile (a double submit that the first answered), the browser goes back
// to the page, where the provider says the sign-in has ended; any other error is internal.
func (a *Authenticator) ended(w http.ResponseWriter, r *http.Request, l *oidc2fa.Login, err error) {
	if errors.Is(err, store.ErrNotFound) {
		http.Redirect(w, r, l.Path(""), http.StatusSeeOther)
		return
	}
	a.internal(w, r, err)
}

// succeed records s: it resets the failure counts of the network and, unless
// s.KeepUserCount, of the user, and makes the network the user's most recently passed
// familiar one. Then it rehashes a credential written with older parameters and tells the
// provider.
func (a *Authenticator) succeed(w http.ResponseWriter, r *http.Request, l *oidc2fa.Login, ch *challenge, s store.PictureSuccess, points []Point) {
	ctx := r.Context()
	if err := a.creds.Succeeded(ctx, l.Tenant, l.Subject, s); err != nil {
		a.internal(w, r, err)
		return
	}
	if a.hash.stale(ch.cred) {
		fresh, err := a.hash.rehash(ctx, ch.cred, points)
		if err == nil {
			fresh.Updated = a.now()
			err = a.creds.Rehash(ctx, fresh, ch.cred.Hash)
		}
		switch {
		case errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound):
			// The user enrolled again (or was removed) meanwhile: the new record stands.
		case err != nil:
			a.log.ErrorContext(ctx, "rehashing a picture credential failed", "tenant", l.Tenant, "subject", l.Subject, "err", err)
		default:
			a.log.InfoContext(ctx, "picture credential rehashed with the current parameters", "tenant", l.Tenant, "subject", l.Subject)
		}
	}
	a.tel.count(ctx, a.tel.attempts, "succeeded", l.Tenant)
	a.log.InfoContext(ctx, "picture login passed", "tenant", l.Tenant, "subject", l.Subject, "client", l.Client.ID)
	l.Succeed(w, r, oidc2fa.Success{Subject: l.Subject, AuthTime: a.now(), Methods: methods})
}

// internal answers 500 without the error's text and logs the cause. When the store is
// unavailable (store.ErrUnavailable) it answers a 503 page with Retry-After instead, that asks
// the person to reload in a few seconds.
func (a *Authenticator) internal(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, store.ErrUnavailable) {
		a.log.ErrorContext(r.Context(), "picture login failed: the store is unavailable", "err", err)
		prefs, _, _ := language.ParseAcceptLanguage(r.Header.Get("Accept-Language"))
		t := a.texts.Match(prefs...)
		w.Header().Set("Retry-After", strconv.Itoa(int(store.UnavailableRetryAfter/time.Second)))
		a.render(w, r, http.StatusServiceUnavailable, "ended", &pageData{T: t, Title: t.Text("ended.title"),
			Message: t.Text("unavailable.message"), InlineStyle: inlineStyle})
		return
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		a.log.DebugContext(r.Context(), "picture login request ended early", "err", err)
	} else {
		a.log.ErrorContext(r.Context(), "picture login failed internally", "err", err)
	}
	pageHeaders(w.Header())
	http.Error(w, "internal server error", http.StatusInternalServerError)
}

func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
}
