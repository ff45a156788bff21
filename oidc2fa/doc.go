// Package oidc2fa is an OpenID Connect provider for a second factor, as an http.Handler to mount
// on the host's own mux.
//
// A relying application that has checked a first factor (a password) sends the browser to
// {BaseURL}/authorize/{tenant} with scope "openid 2fa", PKCE (S256), state, nonce and login_hint
// naming the user. The provider stores the request as an interaction bound to the browser, and
// its Authenticator — the image-based login of oidc2fa/picture, or the host's own — proves that
// the same user is at the browser. The browser then goes back to the client's redirect URI with a
// code (303), and the client redeems it at {BaseURL}/token/{tenant} for an ID token and, by
// default, nothing else: no access token, no refresh token. ID tokens are signed with EdDSA
// (Ed25519) unless the client chose RS256, ES256 or Ed25519 (store.Client.IDTokenAlg), with keys
// of the tenant's own, and verified through {BaseURL}/jwks/{tenant}. oidc2fa/rp does the relying
// side for Go applications.
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
// There b is a store.Backend (memstore.New().Backend(), or sqlstore's Store.Backend),
// authenticator the second factor (a *picture.Authenticator from picture.New, or any
// Authenticator), cookieKey 32 or more secret bytes, and mux the host's *http.ServeMux. The
// example of New is a complete host program.
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
// # The tenant's look
//
// A tenant may have a display name, a logo, an accent colour and a default language
// (store.Tenant, set with store.Tenants.Update, checked by store.CheckTenant). The
// Authenticator sees them as Login.Look and Enrollment.Look (TenantLook); the picture login and
// the provider's own pages show the logo, named by the display name (or the name alone), above
// the page's heading, and the accent colour as custom properties in a <style> element of its
// own, allowed by its hash (TenantLook.AccentCSS, StyleHashSource). The logo is served by the
// provider itself at {BaseURL}/logo/{tenant}/{version} (GET, HEAD), never from a third party,
// so the pages' policy needs only img-src 'self': with the media type the store found in its
// bytes, a strong ETag, Cache-Control "public, max-age=31536000, immutable" (version is the
// start of the logo's SHA-256: a new logo has a new URL, and an old URL answers 404),
// X-Content-Type-Options nosniff and, for an SVG opened on its own, a sandboxing policy.
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
// # Languages
//
// The provider's pages (the error pages and the first page of an enrollment link) and the
// picture login's speak English, German, French, Spanish and Japanese. A page speaks the best
// match, by golang.org/x/text/language's Matcher, for the person's languages in this order:
// the ui_locales of the authorization request, the browser's Accept-Language, the tenant's
// default language; English when none matches. <html lang> and Content-Language name it.
// ui_locales lasts the whole sign-in: a pushed request (RFC 9126) keeps it in its request_uri,
// whose hash covers it, and the login pages in a cookie beside the interaction's; a client
// asks for an enrollment link in a language with ui_locales at POST /enroll/{tenant}
// (EnrollmentRequest.UILocales). An Authenticator gets the same preferences as Login.Languages
// and Enrollment.Languages.
//
// A host adds a language, or changes texts of a built-in one, with Config.Languages (and
// picture.Config.Languages for the picture login's pages): one Catalog per language, whose
// keys BuiltinCatalogs lists with their texts:
//
//	english := oidc2fa.BuiltinCatalogs()[0].Messages // every key, in English
//	italian := map[string]string{}
//	for key, text := range english {
//		italian[key] = translate(text) // the host's own translation
//	}
//	cfg.Languages = []oidc2fa.Catalog{
//		{Language: language.Italian, Messages: italian},
//		{Language: language.German, Messages: map[string]string{"link.continue": "Los geht's"}},
//	}
//
// New refuses a new language that lacks a key, and a key that no page has.
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
//   - The token response has no access_token, unless the client was registered with
//     store.Client.AccessToken (ClientSpec.AccessToken, SetAccessToken), for libraries such as
//     golang.org/x/oauth2 and openid-client that require one. That access token is opaque, lives
//     at most MaxAccessTokenLifetime (5 minutes), and is good only at the UserInfo endpoint
//     {BaseURL}/userinfo/{tenant} (with Config.AccessTokens), which returns sub and the identity
//     claims the ID token carries. It grants nothing else. Replaying its code revokes it.
//   - EdDSA is the default algorithm of ID tokens, though OpenID Discovery expects RS256; a
//     client asks for RS256, ES256 or Ed25519 with store.Client.IDTokenAlg (ClientSpec.IDTokenAlg,
//     SetIDTokenAlg), and discovery lists every algorithm the Signer offers.
//   - login_hint (or email_hint) is required: a second factor authenticates the user the first
//     factor identified. prompt=none is always login_required.
//   - Client authentication is client_secret_post or client_secret_basic, checked before the
//     code is touched, so a client that tries Basic first does not burn its code.
//
// Expired codes, interactions, pushed requests and access tokens stay in the store until the
// host calls DeleteExpired on the Codes, Interactions, PushedRequests and AccessTokens stores;
// the provider starts no goroutines.
//
// The guide to the second factor, with a complete host program and the binding of the second
// factor to the first, is https://github.com/visid/visid/blob/main/docs/second-factor.md.
package oidc2fa
