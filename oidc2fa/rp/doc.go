// Package rp is the relying-party side of oidc2fa, for Go applications: it sends a user who
// passed the application's first factor to the visid second factor, and checks the answer. It
// also sends a user the application has authenticated to set up the factor (EnrollURL).
//
// The provider's token endpoint answers with an ID token only — no access_token — which
// golang.org/x/oauth2 refuses, so this package does the whole exchange itself: state, nonce and
// PKCE (S256) kept per browser by a Sessions, the iss parameter of RFC 9207, the code redeemed
// with the client secret, and the ID token verified with EdDSA through the provider's JWKS.
//
// # Wiring
//
// One RP per issuer (tenant), made once at start-up; New fetches the discovery document:
//
//	sessions, err := rp.NewCookieSessions(rp.CookieSessionsConfig{Key: cookieKey, Secure: true})
//	if err != nil { … }
//	second, err := rp.New(ctx, rp.Config{
//		Issuer:       "https://id.example.com/oidc/acme",
//		ClientID:     clientID,     // from oidc2fa.RegisterClient
//		ClientSecret: clientSecret, // idem
//		RedirectURI:  "https://app.example.com/2fa/callback",
//		Sessions:     sessions,
//	})
//	if err != nil { … }
//	if err := second.CheckClient(ctx); err != nil { … } // errors.Is(err, rp.ErrClient): wrong id or secret
//
// CheckClient finds a wrong client id or secret at start-up rather than after a user has passed
// the second factor.
//
// The login handler runs after the password (or whatever the first factor is) was checked:
//
//	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
//		user, ok := checkPassword(r) // the application's first factor
//		if !ok { … }
//		saveFirstFactor(w, r, user.Email) // the application's own session
//		target, err := second.AuthCodeURL(w, r, user.Email)
//		if err != nil {
//			http.Error(w, "the second factor cannot start", http.StatusInternalServerError)
//			return
//		}
//		http.Redirect(w, r, target, http.StatusSeeOther)
//	})
//
// The callback handler, at the redirect URI, finishes it:
//
//	mux.HandleFunc("GET /2fa/callback", func(w http.ResponseWriter, r *http.Request) {
//		res, err := second.Callback(r.Context(), w, r)
//		var denied *rp.AuthError
//		var enrolled *rp.EnrollmentComplete
//		switch {
//		case errors.As(err, &enrolled): // see Enrollment below: nobody is signed in
//			http.Redirect(w, r, "/settings?2fa=enrolled", http.StatusSeeOther)
//			return
//		case errors.As(err, &denied) && denied.Code == rp.AccessDenied:
//			http.Error(w, "the second factor was not passed", http.StatusForbidden)
//			return
//		case errors.Is(err, rp.ErrWrongUser): // another user's second factor: refuse
//			http.Error(w, "the second factor was passed by another account", http.StatusForbidden)
//			return
//		case errors.Is(err, rp.ErrState), errors.Is(err, rp.ErrExpired):
//			http.Redirect(w, r, "/login", http.StatusSeeOther) // start again
//			return
//		case err != nil:
//			log.Printf("second factor: %v", err)
//			http.Error(w, "the second factor failed", http.StatusBadGateway)
//			return
//		}
//		user, ok := firstFactor(r) // the application's own session of this browser
//		if !ok {
//			http.Error(w, "sign in with your password first", http.StatusForbidden)
//			return
//		}
//		// The token, not the sign-in's hint, against the user of this browser's first factor
//		// (which may have changed meanwhile, in another tab).
//		if err := res.CheckUser(user.Email); err != nil { // ErrWrongUser
//			http.Error(w, "the second factor was passed by another account", http.StatusForbidden)
//			return
//		}
//		// The strongest binding: the visid id stored with the user at the first sign-in.
//		if user.VisidID == "" {
//			saveVisidID(user, res.Subject) // the application's own user store
//		} else if err := res.CheckSubject(user.VisidID); err != nil { // ErrWrongUser
//			http.Error(w, "the second factor was passed by another account", http.StatusForbidden)
//			return
//		}
//		signIn(w, r, user, res.Subject, res.AuthTime) // the application's own session
//		http.Redirect(w, r, "/", http.StatusSeeOther)
//	})
//
// # Binding the second factor to the first
//
// The authorization request travels through the browser, which can edit it: someone who knows
// alice's password and has an account of their own could start alice's sign-in and change
// login_hint to their own user, whose second factor they can pass. Two checks stop that.
//
// Callback checks that the ID token names the user the sign-in was started for: the login hint
// given to AuthCodeURL must equal the token's sub exactly, or its preferred_username or email
// case-insensitively (with the folding the provider's store uses for userNames, schema.Fold).
// Otherwise it returns ErrWrongUser, and no Result. Result.CheckUser is the same check with
// another user: the callback handler above runs it with the user of this browser's first
// factor, as the application's own session records it. Comparing Result.LoginHint with that
// session instead would compare two of the application's own values, and prove nothing about
// the token. An application that cannot know the user's email or userName at visid (it sends
// the visid id as the hint, say) compares Result.Subject with the visid id it has stored for
// the user of its first factor.
//
// A name the token carries names its user alone. The provider resolves a login hint as a visid
// id, a userName or a primary email (the last two with the store's folding), and a hint that
// matches different users — alice's email as another user's userName, one primary email
// shared by two users — names nobody: the sign-in fails as for an unknown user. It puts
// preferred_username and email in an ID token only when each, as a hint, would name that user
// and nobody else. So CheckUser can only succeed for the user the token was issued to, and
// someone who can provision a user with alice's email as its userName or primary email passes
// neither for alice nor as alice.
//
// The strongest binding is the visid id: it never changes and is never reused, while names
// can be renamed, reassigned or shared. Store Result.Subject with the user at the first sign-in
// with both factors, and call Result.CheckSubject with it at every sign-in after that, as the
// callback handler above does.
//
// When the provider offers pushed authorization requests (RFC 9126, discovery's
// pushed_authorization_request_endpoint), AuthCodeURL pushes the request with the client's
// credentials and the browser carries only client_id and a one-time request_uri, so it cannot
// change the request at all. Config.DisablePAR turns that off (New fails with ErrDiscovery if
// the provider requires pushed requests). AuthCodeURL pushes with the request's context;
// AuthCodeURLContext takes another.
//
// # Enrollment
//
// When the provider can enroll users (its discovery document lists an enrollment_endpoint),
// EnrollURL lets a user the application has authenticated set up the second factor. The
// application's backend asks the provider for a one-time link with its client secret, so a
// login hint alone never enrolls anyone:
//
//	mux.HandleFunc("POST /settings/2fa", func(w http.ResponseWriter, r *http.Request) {
//		user, ok := signedInUser(r) // the application's own session, never a form field
//		if !ok { … }
//		target, err := second.EnrollURL(r.Context(), w, r, user.Email)
//		if errors.Is(err, rp.ErrNoEnrollment) { … } // the provider cannot enroll
//		if err != nil {
//			http.Error(w, "the enrollment cannot start", http.StatusInternalServerError)
//			return
//		}
//		http.Redirect(w, r, target, http.StatusSeeOther)
//	})
//
// EnrollURL sets up a first factor only. For a user who already has one the provider refuses
// (EnrollURL's error matches ErrSignInFirst, and is an *AuthError with Code LoginRequired): a
// password alone must never replace the second factor. Replacing it takes a sign-in with both
// factors first, whose Result — kept in the application's session, ID token included — goes to
// ReenrollURL within a few minutes (the provider's Config.ReenrollmentMaxAge, 5 by default):
//
//	mux.HandleFunc("POST /settings/2fa/change", func(w http.ResponseWriter, r *http.Request) {
//		res, ok := signedInResult(r) // the *rp.Result of this browser's sign-in
//		if !ok { … }
//		target, err := second.ReenrollURL(r.Context(), w, r, res)
//		if errors.Is(err, rp.ErrSignInFirst) {
//			// The sign-in is too old: run the second factor again (AuthCodeURL), and call
//			// ReenrollURL with the new Result in the callback handler.
//			…
//		}
//		…
//		http.Redirect(w, r, target, http.StatusSeeOther)
//	})
//
// The enrollment comes back to the same redirect URI, so the callback handler above sees it.
// Callback knows it from the session saved under its state, and reports it as an error,
// *rp.EnrollmentComplete, with a nil Result: a handler that signs the user in only when the
// error is nil can never sign anyone in after an enrollment. A cancelled enrollment is an
// *rp.AuthError with Code rp.AccessDenied, as a denied sign-in is.
//
// # Sessions
//
// Sessions keep enrollments as they keep sign-ins (Session.Enroll marks them).
// NewServerSessions keeps sign-ins in memory (one instance, or sticky sessions) and binds each
// to its browser with a cookie holding only a random value. NewCookieSessions keeps each sign-in
// in an AES-256-GCM cookie bound to its state, so any instance with the key can finish it. Both
// make every sign-in one-time and let it expire (10 minutes by default); each sign-in has its
// own cookie, so two tabs do not disturb each other. A host may implement Sessions on its own
// session store.
//
// # Keys
//
// The JWKS is fetched at the first Callback and kept for its Cache-Control max-age. A token
// whose kid is unknown — the provider rotated its key — triggers a new fetch, at most once per
// JWKSRefreshInterval; when a refresh fails, the keys already known keep working.
//
// The guide to the relying side, and to binding the second factor to the first, is https://github.com/visid/visid/blob/main/docs/second-factor.md#the-relying-side-in-go-oidc2farp.
package rp
