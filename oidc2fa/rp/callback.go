package rp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/visid/visid/store/schema"
)

// Result is a second factor that passed: the verified ID token and what it says.
type Result struct {
	// Subject is the sub claim: the visid id of the user (user_…), stable and never reassigned.
	Subject string
	// AuthTime is the auth_time claim, when the user passed the second factor; zero when the
	// token has none.
	AuthTime time.Time
	// AMR is the amr claim: the authentication methods used.
	AMR []string
	// PreferredUsername and Email are the preferred_username and email claims: the user's
	// userName and primary email at visid when the token was issued ("" when absent).
	PreferredUsername string
	Email             string
	// LoginHint is the login hint AuthCodeURL was given for this sign-in. Callback has checked
	// that the token names that user (see Callback); an application that sends the user's
	// email or userName as the hint has nothing more to compare. One that cannot know either
	// compares Subject with the visid id it keeps for the user of its first factor.
	LoginHint string
	// Claims are all the claims of the ID token, as encoding/json decodes them into a
	// map[string]any (numbers are float64).
	Claims map[string]any
	// IDToken is the ID token as the provider issued it (a compact JWS).
	IDToken string
}

// Callback finishes the second factor, or an enrollment, at the redirect URI. In order, it:
//
//   - takes the sign-in (or enrollment) saved under the callback's state from Config.Sessions,
//     so each finishes once (missing, unknown, expired, used or another browser's: ErrState);
//   - checks that the iss parameter is the issuer (RFC 9207; missing or another: ErrIssuer);
//   - returns an *AuthError when the callback carries error (such as access_denied);
//   - for an enrollment that EnrollURL started, stops there: enrollment=complete returns a nil
//     Result and an *EnrollmentComplete error, and a callback without it is an error;
//   - redeems the code at the token endpoint with the client secret and the PKCE verifier (an
//     error answer, such as invalid_grant for a used code: *AuthError);
//   - verifies the ID token: an EdDSA signature by a key of the provider's JWKS (ErrSignature),
//     iss (ErrIssuer), aud and azp (ErrAudience), exp (ErrExpired), iat, nbf and sub
//     (ErrInvalidToken), and the nonce of the sign-in (ErrNonce);
//   - checks that the token names the user the sign-in was started for: the login hint given
//     to AuthCodeURL equals sub, or equals preferred_username or email case-insensitively (with
//     the store's folding, schema.Fold). Otherwise it returns ErrWrongUser and no Result: the
//     browser passed another user's second factor (it can edit the authorization request on
//     its way to the provider, unless the request was pushed).
//
// State and iss are checked before error, so a forged callback cannot put words in the
// provider's mouth. A finished enrollment is reported as an error, not as a Result, so that a
// handler which signs the user in whenever the error is nil never signs anyone in after an
// enrollment: match it with errors.As. Which kind of callback it is comes from the session
// saved under the state, never from the callback's parameters, so a sign-in's callback that
// carries enrollment=complete (and no code) fails like any callback without a code. Callback
// may clear a cookie on w, so call it before writing the response.
func (p *RP) Callback(ctx context.Context, w http.ResponseWriter, r *http.Request) (*Result, error) {
	q := r.URL.Query()
	state, ok := single(q, "state")
	if !ok || state == "" {
		return nil, fmt.Errorf("rp: callback: the state parameter is missing or repeated: %w", ErrState)
	}
	s, err := p.cfg.Sessions.Take(w, r, state)
	if err != nil {
		if errors.Is(err, ErrState) {
			return nil, fmt.Errorf("rp: callback: %w", err)
		}
		return nil, fmt.Errorf("rp: callback: reading the sign-in session: %w", err)
	}
	if s.State != state {
		return nil, fmt.Errorf("rp: callback: Sessions returned another sign-in's session: %w", ErrState)
	}
	switch iss, ok := single(q, "iss"); {
	case !ok:
		return nil, fmt.Errorf("rp: callback: the iss parameter is missing or repeated: %w", ErrIssuer)
	case iss != p.issuer:
		return nil, fmt.Errorf("rp: callback: the iss parameter is %q, not %q: %w", iss, p.issuer, ErrIssuer)
	}
	if q.Has("error") {
		return nil, &AuthError{Code: q.Get("error"), Description: q.Get("error_description"), URI: q.Get("error_uri"),
			Enrollment: s.Enroll}
	}
	if s.Enroll {
		return nil, enrollmentEnd(q, s)
	}
	code, ok := single(q, "code")
	if !ok || code == "" {
		return nil, errors.New("rp: callback: the callback carries neither code nor error")
	}
	raw, err := p.exchange(ctx, code, s.Verifier)
	if err != nil {
		return nil, err
	}
	res, err := p.verify(ctx, raw, s.Nonce)
	if err != nil {
		return nil, err
	}
	if !namesUser(res, s.LoginHint) {
		p.log.WarnContext(ctx, "rp: the second factor was passed by another user than the sign-in was started for",
			"sub", res.Subject)
		return nil, fmt.Errorf("rp: callback: %w", ErrWrongUser)
	}
	res.LoginHint = s.LoginHint
	return res, nil
}

// namesUser reports whether the token of res names the user hint named: hint is its sub, or its
// preferred_username or email as the store compares them (case-insensitively, schema.Fold).
func namesUser(res *Result, hint string) bool {
	if hint == "" {
		return false
	}
	if hint == res.Subject {
		return true
	}
	folded := schema.Fold(hint)
	return res.PreferredUsername != "" && schema.Fold(res.PreferredUsername) == folded ||
		res.Email != "" && schema.Fold(res.Email) == folded
}

// single returns the one value of a parameter; ok is false when it is absent or repeated.
func single(q url.Values, name string) (string, bool) {
	vs := q[name]
	if len(vs) != 1 {
		return "", false
	}
	return vs[0], true
}

// tokenResponse is a token endpoint answer: an ID token only, or an error.
type tokenResponse struct {
	IDToken   string `json:"id_token"`
	TokenType string `json:"token_type"`
	errorResponse
}

// exchange redeems code at the token endpoint and returns the ID token.
func (p *RP) exchange(ctx context.Context, code, verifier string) (string, error) {
	resp, body, err := p.postForm(ctx, "token request", p.token, url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {p.cfg.RedirectURI},
		"code_verifier": {verifier},
	})
	if err != nil {
		return "", err
	}
	var tr tokenResponse
	jsonErr := json.Unmarshal(body, &tr)
	switch {
	case jsonErr == nil && tr.Error != "":
		return "", tr.authError()
	case resp.StatusCode != http.StatusOK:
		return "", fmt.Errorf("rp: token request: the token endpoint answered %s", resp.Status)
	case jsonErr != nil:
		return "", fmt.Errorf("rp: token response: %w", jsonErr)
	case tr.IDToken == "":
		return "", fmt.Errorf("rp: token response: no id_token: %w", ErrInvalidToken)
	case tr.TokenType != "" && !strings.EqualFold(tr.TokenType, "Bearer"):
		return "", fmt.Errorf("rp: token response: token_type %q is not Bearer", tr.TokenType)
	}
	return tr.IDToken, nil
}
