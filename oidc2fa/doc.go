// Package oidc2fa is an OpenID Connect provider for a second factor, as an http.Handler to mount
// on the host's own mux.
//
// A relying application that has checked a first factor (a password) sends the browser to
// {BaseURL}/authorize/{tenant} with scope "openid 2fa", PKCE (S256), state, nonce and login_hint
// naming the user. The provider stores the request as an interaction bound to the browser, and
// its Authenticator — the image-based login of oidc2fa/picture, or the host's own — proves that
// the same user is at the browser. The browser then goes back to the client's redirect URI with a
// code (303), and the client redeems it at {BaseURL}/token/{tenant} for an ID token and nothing
// else: no access token, no refresh token. ID tokens are signed with EdDSA (Ed25519) and verified
// through {BaseURL}/jwks/{tenant}. oidc2fa/rp does the relying side for Go applications.
//
//	keys, err := oidc2fa.NewKeyRing(oidc2fa.KeyRingConfig{})
//	if err != nil {
//		return err
//	}
//	provider, err := oidc2fa.New(oidc2fa.Config{
//		Tenants: b.Tenants, Users: b.Users, Clients: b.Clients, Codes: b.Codes, Interactions: b.Interactions,
//		Pushed:        b.Pushed, // pushed authorization requests (RFC 9126)
//		Authenticator: authenticator,
//		Signer:        keys,
//		BaseURL:       "https://id.example.com/oidc", // the issuer of tenant acme is …/oidc/acme
//		CookieKey:     cookieKey,                     // shared by every instance
//	})
//	if err != nil {
//		return err
//	}
//	mux.Handle("/oidc/", http.StripPrefix("/oidc", provider))
//
// Clients are registered with RegisterClient, which returns the client secret once.
//
// # Binding the second factor to the first
//
// Whatever travels through the browser can be edited there, login_hint included. Two things
// keep a stolen password plus the attacker's own account from passing as the victim:
//
//   - Pushed authorization requests (RFC 9126, with Config.Pushed): the client's backend POSTs
//     the authorization request to {BaseURL}/par/{tenant} with its client authentication and
//     gets a one-time request_uri (201, {"request_uri","expires_in"}, 90 s by default); the
//     browser then brings only client_id and request_uri to the authorization endpoint, which
//     ignores every other parameter. Config.RequirePAR (all clients) and
//     store.Client.RequirePAR (ClientSpec.RequirePAR, SetRequirePAR) refuse plain requests.
//   - A login_hint names one user or nobody: it is looked up as a visid id, a userName and a
//     primary email (the last two with the store's folding, schema.Fold), and a hint that
//     matches different users names nobody. Such a sign-in looks and costs the same as one for
//     an unknown user (the Authenticator sees Login.AmbiguousHint, and must not show it); it is
//     logged with its reason, never the names, and counted as the outcome ambiguous_hint.
//   - The ID token names the user who passed: sub (the visid id), preferred_username (the
//     userName) and email (the primary email), each of the last two only when it names this
//     user and nobody else as a login hint. The relying party must check them against the user
//     of its first factor; oidc2fa/rp does (Result.CheckUser, and Result.CheckSubject with the
//     visid id the relying party stored, the strongest binding).
//
// # Replacing a factor
//
// A client's enrollment link (POST {BaseURL}/enroll/{tenant}) for a user who already has the
// factor (FactorChecker) needs id_token_hint: an ID token of this provider, issued to that
// client for that user, whose auth_time is at most Config.ReenrollmentMaxAge (5 minutes) old.
// Without it the answer is 400 login_required, so a password alone never replaces the second
// factor. An administrator's link (NewEnrollmentLink) may always replace it.
//
// # Limits
//
// The authorization endpoint and the POSTs of the login and enrollment pages, which anyone may
// send, are limited per client address (Config.AddressLimiter, DefaultAddressRate a minute);
// state, nonce and login_hint are at most 512 bytes, and parameters with NUL bytes or invalid
// UTF-8 are refused. The client address is the connection's peer, or, when the peer is one of
// Config.TrustedProxies, the right-most untrusted address of X-Forwarded-For (ClientIP); the
// Authenticator gets the same address as Login.ClientAddr.
//
// # Metrics and traces
//
// The provider reports through the OpenTelemetry API to Config.MeterProvider and
// Config.TracerProvider (nil: the global providers, which record nothing until the host
// installs an SDK): MetricRequestDuration by endpoint, method and status, sign-ins started
// (MetricAuthorizations) and ended by outcome (MetricOutcomes), codes redeemed and replayed, and
// pushed requests, and a server span per request. No metric names a user; a tenant only when
// Config.MetricsTenant is set.
//
// # Departures from the usual OpenID profile
//
//   - The token response has no access_token: golang.org/x/oauth2 cannot read it, so use
//     oidc2fa/rp, or POST the token request yourself and verify the ID token with any JOSE
//     library (github.com/coreos/go-oidc verifies it once discovery lists EdDSA, which it does).
//   - Only EdDSA is offered for ID tokens, though OpenID Discovery expects RS256.
//   - login_hint (or email_hint) is required: a second factor authenticates the user the first
//     factor identified. prompt=none is always login_required.
//   - Client authentication is client_secret_post or client_secret_basic, checked before the
//     code is touched, so a client that tries Basic first does not burn its code.
//
// Expired codes, interactions and pushed requests stay in the store until the host calls
// DeleteExpired on the Codes, Interactions and PushedRequests stores; the provider starts no
// goroutines.
package oidc2fa
