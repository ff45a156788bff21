package rp

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ErrRedirectURI: the provider does not accept Config.RedirectURI for the client
// (CheckRedirectURI): it is not registered for it, exactly as written.
var ErrRedirectURI = errors.New("rp: the provider does not accept the redirect URI for this client")

// ErrCannotCheck: CheckRedirectURI cannot ask the provider, which offers no pushed
// authorization requests; the redirect URI is checked only when a browser brings a sign-in.
var ErrCannotCheck = errors.New("rp: the provider offers no pushed authorization requests to check the redirect URI with")

// CheckRedirectURI asks the provider whether it accepts Config.RedirectURI for the client, with
// a pushed authorization request (RFC 9126) that no browser will ever bring: the provider
// checks the redirect URI when the request is pushed, and the request expires unused. It is
// pushed even when Config.DisablePAR is set. It returns nil when the provider accepts the
// request, an error wrapping ErrRedirectURI (and the *AuthError) when it refuses the redirect
// URI, ErrCannotCheck when the provider lists no PAR endpoint, and another error when the
// provider cannot be asked or refuses for another reason. A host calls it at start, so that a
// redirect URI the provider does not know is found before a user signs in.
func (p *RP) CheckRedirectURI(ctx context.Context) error {
	if p.parOffered == "" {
		return ErrCannotCheck
	}
	sum := sha256.Sum256([]byte(randomString()))
	params := url.Values{
		"response_type":         {"code"},
		"client_id":             {p.cfg.ClientID},
		"redirect_uri":          {p.cfg.RedirectURI},
		"scope":                 {"openid 2fa"},
		"state":                 {randomString()},
		"nonce":                 {randomString()},
		"code_challenge":        {base64.RawURLEncoding.EncodeToString(sum[:])},
		"code_challenge_method": {"S256"},
		"login_hint":            {"visid-rp-redirect-check"},
	}
	_, err := p.pushTo(ctx, p.parOffered, params)
	var ae *AuthError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ae) && ae.Code == "invalid_request" && strings.Contains(ae.Description, "redirect_uri"):
		return fmt.Errorf("%w: %w", ErrRedirectURI, ae)
	}
	return fmt.Errorf("rp: checking the redirect URI: %w", err)
}
