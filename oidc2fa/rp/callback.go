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
	// AMR is the amr claim: the authentication methods used (RFC 8176). visid says "pwd" for a
	// picture password, and for a passkey "hwk" (a key that cannot leave its device) or "swk"
	// (a key that may be synced to other devices), with "mfa": Method names which.
	AMR []string
	// PreferredUsername and Email are the preferred_username and email claims: the user's
	// userName and primary email at visid when the token was issued ("" when absent: a user
	// without a primary email has no email claim, and the provider leaves out a name that
	// names another user too). They name the user for the application; Subject is what stays
	// the same when they change.
	PreferredUsername string
	Email             string
	// LoginHint is what the sign-in was started with: the login hint given to AuthCodeURL.
	// Callback has already checked that the ID token names that user. It comes from the RP's
	// own session, so comparing it with the application's session proves nothing about the
	// token: to check that the user of this browser's first factor is the one who passed the
	// second, call CheckUser with that user. An application that knows neither the user's
	// email nor userName at visid compares Subject with the visid id it keeps for the user of
	// its first factor.
	LoginHint string
	// Claims are all the claims of the ID token, as encoding/json decodes them into a
	// map[string]any (numbers are float64).
	Claims map[string]any
	// IDToken is the ID token as the provider issued it (a compact JWS).
	IDToken string
}

// The second-factor methods Result.Method reports.
const (
	MethodPicture = "picture" // a picture password (amr "pwd")
	MethodPasskey = "passkey" // a passkey (amr "hwk" or "swk")
)

// Method names the way the user passed the second factor, from AMR: MethodPasskey,
// MethodPicture, or "" when the amr says neither (a host's own authenticator, or
// oidc2fa.Config.AMR set to other values).
func (r *Result) Method() string {
	picture := false
	for _, m := range r.AMR {
		switch m {
		case "hwk", "swk":
			return MethodPasskey
		case "pwd":
			picture = true
		}
	}
	if picture {
		return MethodPicture
	}
	return ""
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
//   - checks that the token names the user the sign-in was started for (Result.CheckUser with
//     the login hint given to AuthCodeURL): the hint equals sub, or equals preferred_username
//     or email case-insensitively (with the store's folding, schema.Fold). Otherwise it
//     returns ErrWrongUser and no Result: the browser passed another user's second factor (it
//     can edit the authorization request on its way to the provider, unless the request was
//     pushed). The sign-in is used up all the same.
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
			LockedUntil: lockedUntil(q),
			Enrollment:  s.Enroll}
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
	if err := res.CheckUser(s.LoginHint); err != nil {
		// Neither the hint nor the token's names are logged: the sub says who passed.
		p.log.WarnContext(ctx, "rp: the second factor was passed by another user than the sign-in was started for",
			"sub", res.Subject)
		return nil, fmt.Errorf("rp: callback: %w", err)
	}
	res.LoginHint = s.LoginHint
	return res, nil
}

// CheckUser checks that the ID token names user, the user of the application's first factor:
// user equals Subject exactly, or equals PreferredUsername or Email case-insensitively, with
// the folding the visid store uses for userNames (schema.Fold, so "ROSS@example.com" names the
// user "roſſ@example.com" too). Otherwise it returns an error wrapping ErrWrongUser.
//
// It can only succeed for the user the token was issued to: the provider puts
// preferred_username and email in a token only when, as a login hint, each names that user and
// nobody else (a name that is one user's userName and another's primary email names nobody),
// and leaves them out otherwise. So a name CheckUser accepts is one the provider resolves to
// Subject alone. The strongest binding is still the visid id: store Subject at the user's first
// sign-in and check it with CheckSubject afterwards.
//
// Callback has already run it with the sign-in's login hint. An application calls it again
// with the user its own session says passed the first factor, when that may not be the hint
// the sign-in was started with (a second sign-in started in another tab of the same browser,
// for instance); a comparison with LoginHint would compare two values of the application's
// own, and prove nothing about the token.
func (res *Result) CheckUser(user string) error {
	if user == "" {
		return fmt.Errorf("rp: no user to compare the ID token with: %w", ErrWrongUser)
	}
	if user == res.Subject {
		return nil
	}
	folded := schema.Fold(user)
	if res.PreferredUsername != "" && schema.Fold(res.PreferredUsername) == folded ||
		res.Email != "" && schema.Fold(res.Email) == folded {
		return nil
	}
	return fmt.Errorf("rp: the ID token names neither this user's visid id, userName nor email: %w", ErrWrongUser)
}

// CheckSubject checks that the ID token was issued to sub, the visid id (user_…) the
// application stored for the user of its first factor, compared exactly. Otherwise it returns
// an error wrapping ErrWrongUser.
//
// It is the strongest binding of the second factor to the first: a visid id is never
// reassigned and never changes, while a userName or an email can be renamed, reassigned or
// shared. An application stores Result.Subject with its user at the first sign-in with both
// factors (or when it enrolls the user) and calls CheckSubject at every sign-in after that.
func (res *Result) CheckSubject(sub string) error {
	if sub == "" || sub != res.Subject {
		return fmt.Errorf("rp: the ID token was issued to another visid user than this one: %w", ErrWrongUser)
	}
	return nil
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
