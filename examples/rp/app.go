package main

import (
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/visid/visid/oidc2fa/rp"
)

// maxFormBytes bounds the body of the login and logout forms.
const maxFormBytes = 16 << 10

// The values of the login form's action field, one per submit button. A form sent without one
// (Enter in a field of a browser that sends no button) signs in.
const (
	actionSignIn = "signin" // sign in: the password, then visid's second factor
	actionEnroll = "enroll" // set up the picture password: the password, then visid's enrollment
)

// app is the relying application: its own password as the first factor, then visid, through
// oidc2fa/rp, as the second.
type app struct {
	users    *users
	sessions *sessions
	second   *rp.RP // the visid second factor
	pages    *pages
	log      *slog.Logger
}

// handler routes the application's five paths.
func (a *app) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", a.home)
	mux.HandleFunc("POST /login", a.login)
	mux.HandleFunc("GET /callback", a.callback) // the redirect URI registered with visid
	mux.HandleFunc("POST /logout", a.logout)
	mux.HandleFunc("POST /picture", a.changePicture)
	return mux
}

// home shows who is signed in, or the password form.
func (a *app) home(w http.ResponseWriter, r *http.Request) {
	s, ok := a.sessions.get(r)
	if ok && s.signedIn() {
		a.pages.signedIn(w, r, s)
		return
	}
	if !ok {
		s = a.sessions.start(w, r, session{}) // for the form's CSRF token
	}
	a.pages.login(w, r, http.StatusOK, s, s.Email, "")
}

// login checks the password, the first factor, and sends the browser to visid for the second,
// or, with the action "enroll", to set up the second.
func (a *app) login(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		a.pages.problem(w, r, http.StatusBadRequest, "The form could not be read", "Please sign in again.")
		return
	}
	email := r.PostFormValue("email")
	s, ok := a.sessions.get(r)
	if !ok || !s.csrfOK(r.PostFormValue("csrf")) {
		a.log.DebugContext(ctx, "login form without a valid session or CSRF token")
		s = a.sessions.start(w, r, session{})
		a.pages.login(w, r, http.StatusForbidden, s, email, "The form had expired. Please sign in again.")
		return
	}
	action := r.PostFormValue("action")
	if action != "" && action != actionSignIn && action != actionEnroll {
		a.pages.problem(w, r, http.StatusBadRequest, "The form could not be read", "Please sign in again.")
		return
	}
	user, ok := a.users.check(ctx, email, r.PostFormValue("password"))
	if !ok {
		a.log.InfoContext(ctx, "first factor failed") // neither the email nor the password is logged
		a.pages.login(w, r, http.StatusOK, s, email, "The email or the password is wrong.")
		return
	}
	if action == actionEnroll {
		a.enroll(w, r, user)
		return
	}

	// The first factor passed: remember for whom, under a new session id, and start the second
	// factor for the same user. AuthCodeURL sets its own cookie, so it runs before any write.
	a.sessions.start(w, r, session{Email: user})
	target, err := a.second.AuthCodeURL(w, r, user)
	if err != nil {
		a.log.ErrorContext(ctx, "starting the second factor", "err", err)
		a.pages.problem(w, r, http.StatusInternalServerError, "Something went wrong",
			"The second factor could not be started. Please try again later.")
		return
	}
	a.log.InfoContext(ctx, "first factor passed; off to visid", "user", user)
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// enroll sends a user who passed the password, the first factor, to visid to set up (or
// replace) the picture password. It signs nobody in: the browser gets a new session that has
// proved nothing, and the enrollment's callback never signs in (see callback).
func (a *app) enroll(w http.ResponseWriter, r *http.Request, user string) {
	ctx := r.Context()
	a.sessions.start(w, r, session{})
	// EnrollURL asks visid, with the client secret, for a one-time link, and sets its own
	// cookie, so it runs before any write.
	target, err := a.second.EnrollURL(ctx, w, r, user)
	var authErr *rp.AuthError
	switch {
	case errors.Is(err, rp.ErrNoEnrollment):
		a.log.WarnContext(ctx, "visid offers no enrollment")
		a.pages.problem(w, r, http.StatusNotImplemented, "Picture passwords cannot be set up here",
			"This visid offers no way to set up the second factor.")
		return
	case errors.Is(err, rp.ErrSignInFirst):
		// The password alone never replaces the second factor.
		a.log.InfoContext(ctx, "enrollment refused: the user has a picture password", "user", user)
		a.pages.problem(w, r, http.StatusConflict, "You already have a picture password",
			"A password alone cannot replace it. Sign in with your password and your picture password, "+
				"then choose “Change picture password”.")
		return
	case errors.As(err, &authErr):
		a.log.WarnContext(ctx, "visid refused the enrollment", "error", authErr.Code, "description", authErr.Description)
		a.pages.problem(w, r, http.StatusBadGateway, "The picture password cannot be set up",
			"visid refused to set it up for this account ("+authErr.Code+"). Ask the administrator whether visid knows you.")
		return
	case err != nil:
		a.log.ErrorContext(ctx, "starting the enrollment", "err", err)
		a.pages.problem(w, r, http.StatusInternalServerError, "Something went wrong",
			"The setup of the picture password could not be started. Please try again later.")
		return
	}
	a.log.InfoContext(ctx, "first factor passed; off to visid to set up the second", "user", user) // never the link: it is a secret
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// callback is where visid sends the browser back: it finishes the second factor and signs the
// user in when both factors were passed by the same user, or reports the end of an enrollment,
// which signs nobody in.
func (a *app) callback(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	res, err := a.second.Callback(ctx, w, r)
	var (
		enrolled *rp.EnrollmentComplete
		authErr  *rp.AuthError
	)
	switch {
	case errors.As(err, &enrolled):
		// Callback reports an enrollment as an error, never as a Result: nobody is signed in,
		// and the browser's session stays as it is (it proved nothing when the enrollment
		// started).
		a.log.InfoContext(ctx, "picture password set up", "user", enrolled.LoginHint)
		s, ok := a.sessions.get(r)
		a.pages.enrolled(w, r, ok && s.signedIn())
		return
	case errors.As(err, &authErr) && authErr.Enrollment && authErr.Code == rp.AccessDenied:
		a.log.InfoContext(ctx, "enrollment not finished", "error", authErr.Code)
		a.pages.problem(w, r, http.StatusOK, "The picture password was not set up",
			"It was cancelled, or visid did not let you set it up. Nothing was changed.")
		return
	case errors.As(err, &authErr) && authErr.Enrollment:
		a.log.WarnContext(ctx, "visid did not finish the enrollment", "error", authErr.Code, "description", authErr.Description)
		a.pages.problem(w, r, http.StatusBadRequest, "The picture password was not set up",
			"visid did not finish setting it up ("+authErr.Code+"). Nothing was changed.")
		return
	case errors.As(err, &authErr) && authErr.Code == rp.AccessDenied && !authErr.LockedUntil.IsZero():
		// visid tells a client that pushes every sign-in that the factor is locked, and until
		// when: only this app's backend, after the password, started this sign-in.
		a.log.InfoContext(ctx, "second factor locked", "until", authErr.LockedUntil)
		a.pages.problem(w, r, http.StatusForbidden, "Your picture password is locked",
			"After too many wrong attempts visid locked your picture password until "+
				authErr.LockedUntil.UTC().Format("15:04 UTC on 2 January 2006")+
				". Try again after that, or ask your administrator to unlock it.")
		return
	case errors.As(err, &authErr) && authErr.Code == rp.AccessDenied:
		a.log.InfoContext(ctx, "second factor not passed", "error", authErr.Code)
		// access_denied is a cancel, wrong pictures or a locked picture password, and visid
		// deliberately does not say which (a lock would tell a stranger that the user exists):
		// the page blames nobody and says what each case asks of the person.
		a.pages.problem(w, r, http.StatusForbidden, "The sign-in was not finished",
			"The second step was not passed, so you are not signed in. If you stopped it, sign in again from the start page. "+
				"After several wrong pictures visid locks the picture password for a while, a minute at first and longer "+
				"after each lock: wait before you try again, or ask your administrator to unlock it.")
		return
	case errors.As(err, &authErr):
		a.log.WarnContext(ctx, "visid refused the sign-in", "error", authErr.Code, "description", authErr.Description)
		a.pages.problem(w, r, http.StatusBadRequest, "The sign-in did not finish",
			"visid did not complete the second factor ("+authErr.Code+"), so you are not signed in.")
		return
	case errors.Is(err, rp.ErrWrongUser):
		// visid confirmed the second factor of another user than the one this sign-in was for:
		// the browser changed the request on its way (possible only without pushed requests).
		a.log.WarnContext(ctx, "the second factor was passed by another account; nobody is signed in")
		a.pages.problem(w, r, http.StatusForbidden, "The second factor was passed by another account",
			"visid confirmed the second factor of another account than the one whose password was given, so you are not signed in.")
		return
	case errors.Is(err, rp.ErrState), errors.Is(err, rp.ErrExpired):
		a.log.InfoContext(ctx, "callback refused", "err", err)
		a.pages.problem(w, r, http.StatusBadRequest, "This sign-in has ended",
			"It was finished already, took too long, or was started in another browser.")
		return
	case err != nil || res == nil:
		a.log.ErrorContext(ctx, "second factor failed", "err", err)
		a.pages.problem(w, r, http.StatusBadGateway, "Something went wrong",
			"The sign-in could not be finished. Please try again later.")
		return
	}

	// Callback checked that the ID token names the user the sign-in was started for. Let the
	// browser in only if the token also names the user whose password this browser's session
	// passed: a callback of an older sign-in in another tab, for another user, must not sign in
	// this one. The check is of the token (Result.CheckUser), not of Result.LoginHint, which
	// comes from this application's own session.
	s, ok := a.sessions.get(r)
	switch {
	case !ok || s.Email == "":
		a.log.WarnContext(ctx, "second factor passed, but this browser has not passed the password")
		a.pages.problem(w, r, http.StatusForbidden, "Sign in with your password first",
			"This browser has not passed the password step, so you are not signed in.")
		return
	case res.CheckUser(s.Email) != nil:
		a.log.WarnContext(ctx, "the two factors were passed by different users",
			"first_factor", s.Email, "sub", res.Subject)
		a.pages.problem(w, r, http.StatusForbidden, "The two factors were for different users",
			"The password step and the second factor were not for the same user (two sign-ins at once?), so you are not signed in.")
		return
	case a.users.bindVisidID(s.Email, res) != nil:
		// The strongest binding: the token's sub is not the visid user who passed this user's
		// second factor before (a name at visid was handed to another user).
		a.log.WarnContext(ctx, "the second factor was passed by another visid user than before",
			"first_factor", s.Email, "sub", res.Subject)
		a.pages.problem(w, r, http.StatusForbidden, "The second factor was passed by another account",
			"The second factor was passed by another visid account than the one this user signed in with before, so you are not signed in.")
		return
	}
	second := &secondFactor{Subject: res.Subject, AuthTime: res.AuthTime, AMR: slices.Clone(res.AMR)}
	if s.Reenroll {
		a.reenroll(w, r, s.Email, second, res)
		return
	}
	a.sessions.start(w, r, session{Email: s.Email, Second: second})
	a.log.InfoContext(ctx, "signed in with both factors", "user", s.Email, "sub", res.Subject,
		"auth_time", res.AuthTime.Format(time.RFC3339), "amr", res.AMR)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// changePicture starts a change of the picture password: the user signs in with both factors
// again (visid accepts a replacement only right after a sign-in with the current one), and the
// callback then sends the browser on to set up the new one.
func (a *app) changePicture(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		a.pages.problem(w, r, http.StatusBadRequest, "The form could not be read", "Please try again.")
		return
	}
	s, ok := a.sessions.get(r)
	if !ok || !s.signedIn() || !s.csrfOK(r.PostFormValue("csrf")) {
		a.pages.problem(w, r, http.StatusForbidden, "Sign in first",
			"Only a user signed in with both factors can change the picture password.")
		return
	}
	// The session keeps the password's proof but not the old second factor: the new sign-in
	// must pass it again.
	a.sessions.start(w, r, session{Email: s.Email, Reenroll: true})
	target, err := a.second.AuthCodeURL(w, r, s.Email)
	if err != nil {
		a.log.ErrorContext(ctx, "starting the second factor", "err", err)
		a.pages.problem(w, r, http.StatusInternalServerError, "Something went wrong",
			"The second factor could not be started. Please try again later.")
		return
	}
	a.log.InfoContext(ctx, "confirming the second factor before changing it", "user", s.Email)
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// reenroll sends a user who has just passed both factors to visid to replace the picture
// password, with the proof of that sign-in; the browser stays signed in.
func (a *app) reenroll(w http.ResponseWriter, r *http.Request, email string, second *secondFactor, res *rp.Result) {
	ctx := r.Context()
	a.sessions.start(w, r, session{Email: email, Second: second})
	target, err := a.second.ReenrollURL(ctx, w, r, res)
	var authErr *rp.AuthError
	switch {
	case errors.As(err, &authErr):
		a.log.WarnContext(ctx, "visid refused the change of the picture password", "error", authErr.Code, "description", authErr.Description)
		a.pages.problem(w, r, http.StatusBadGateway, "The picture password cannot be changed",
			"visid refused to change it ("+authErr.Code+"). You are still signed in.")
		return
	case err != nil:
		a.log.ErrorContext(ctx, "starting the change of the picture password", "err", err)
		a.pages.problem(w, r, http.StatusInternalServerError, "Something went wrong",
			"The change of the picture password could not be started. You are still signed in.")
		return
	}
	a.log.InfoContext(ctx, "both factors passed; off to visid to change the second", "user", email)
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// logout ends the session.
func (a *app) logout(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		a.pages.problem(w, r, http.StatusBadRequest, "The form could not be read", "Please try again.")
		return
	}
	if s, ok := a.sessions.get(r); ok && !s.csrfOK(r.PostFormValue("csrf")) {
		a.pages.problem(w, r, http.StatusForbidden, "The form had expired", "Nothing was changed; sign out from the start page.")
		return
	}
	a.sessions.end(w, r)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
