package rp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
)

// CheckClient asks the provider's token endpoint whether it accepts Config.ClientID and
// Config.ClientSecret, with a token request that names no code, so it redeems nothing and
// changes nothing: the provider authenticates the client before it reads the request. It returns
// nil when the client is accepted, an error wrapping ErrClient (and the *AuthError) when the
// provider answers invalid_client, and another error when the provider cannot be asked. A host
// calls it at start, to refuse to run with credentials that would fail only after a user has
// passed the second factor.
func (p *RP) CheckClient(ctx context.Context) error {
	resp, body, err := p.postForm(ctx, "checking the client", p.token, url.Values{"grant_type": {"authorization_code"}})
	if err != nil {
		return err
	}
	var er errorResponse
	if err := json.Unmarshal(body, &er); err != nil || er.Error == "" {
		return fmt.Errorf("rp: checking the client: the token endpoint answered %s without an OAuth error", resp.Status)
	}
	switch {
	case er.Error == "invalid_client" || resp.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("%w: %w", ErrClient, er.authError())
	case er.Error == "invalid_request" && resp.StatusCode == http.StatusBadRequest:
		return nil // authenticated, then refused for the missing code
	}
	return fmt.Errorf("rp: checking the client: %w", er.authError())
}
