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
// # Parts
//
// rp.go holds the RP (New, AuthCodeURL, PKCE, pushed requests when discovery offers them);
// callback.go finishes a sign-in (state, iss, the code, the ID token) and idtoken.go checks the
// token (signature, iss, aud, exp, nonce, the user the sign-in was for: CheckUser and
// CheckSubject); jwks.go keeps the provider's keys (refetched on an unknown kid, at most once a
// JWKSRefreshInterval); enroll.go makes enrollment links (EnrollURL, ReenrollURL); sessions.go,
// cookiesessions.go and expiring.go keep a sign-in's state per browser (NewServerSessions in
// memory, NewCookieSessions in a sealed cookie); checkclient.go and checkredirect.go find a wrong
// client secret or an unregistered redirect URI at start-up; errors.go names every error a
// caller tells apart (AuthError, ErrWrongUser, ErrState, ErrExpired, EnrollmentComplete, …).
//
// What the relying side must check, and why — binding the second factor to the first (the login
// hint, the name claims, the visid id, pushed requests), enrollment and re-enrollment, sessions
// across instances, key rotation — is described once, in https://github.com/visid/visid/blob/main/docs/second-factor.md#the-relying-side-in-go-oidc2farp
// and https://github.com/visid/visid/blob/main/docs/second-factor.md#binding-the-second-factor-to-the-first.
package rp
