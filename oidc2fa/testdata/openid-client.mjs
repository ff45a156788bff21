// Runs a second-factor sign-in with openid-client 6 (npm), as a Node.js relying party would:
// discovery, an authorization URL with PKCE, nonce, state and login_hint, the browser's
// redirects (followed here with the provider's cookies), and the code grant. openid-client
// refuses a token response without access_token, so the token endpoint's JSON is given a
// placeholder one through customFetch, as visid's README says. With MODE "par" the request is
// pushed first (RFC 9126) and the browser gets only client_id and request_uri.
// Usage: node openid-client.mjs ISSUER CLIENT_ID CLIENT_SECRET REDIRECT_URI LOGIN_HINT [par]
import * as client from 'openid-client';

const [issuer, clientId, secret, redirectURI, hint, mode] = process.argv.slice(2);
const options = issuer.startsWith('http://') ? { execute: [client.allowInsecureRequests] } : {};
const config = await client.discovery(new URL(issuer), clientId, secret, client.ClientSecretPost(secret), options);

const verifier = client.randomPKCECodeVerifier();
const state = client.randomState();
const nonce = client.randomNonce();
const params = {
  redirect_uri: redirectURI,
  scope: 'openid 2fa',
  code_challenge: await client.calculatePKCECodeChallenge(verifier),
  code_challenge_method: 'S256',
  state,
  nonce,
  login_hint: hint,
};
const url = mode === 'par'
  ? await client.buildAuthorizationUrlWithPAR(config, params)
  : client.buildAuthorizationUrl(config, params);
const browserParams = [...url.searchParams.keys()].sort();

let next = url.href;
const cookies = [];
for (let i = 0; !next.startsWith(redirectURI); i++) {
  if (i > 5) throw new Error('too many redirects before the callback');
  const r = await fetch(next, { redirect: 'manual', headers: { cookie: cookies.join('; ') } });
  for (const c of r.headers.getSetCookie()) cookies.push(c.split(';')[0]);
  if (!r.headers.get('location')) throw new Error(`no redirect from ${next}: ${r.status}`);
  next = new URL(r.headers.get('location'), next).href;
}

config[client.customFetch] = async (u, init) => {
  const res = await fetch(u, init);
  if (!String(u).startsWith(config.serverMetadata().token_endpoint)) return res;
  const body = await res.json();
  if (res.ok) body.access_token = 'none';
  return new Response(JSON.stringify(body), { status: res.status, headers: { 'content-type': 'application/json' } });
};
const tokens = await client.authorizationCodeGrant(config, new URL(next), {
  pkceCodeVerifier: verifier,
  expectedState: state,
  expectedNonce: nonce,
  idTokenExpected: true,
});
const claims = tokens.claims();
console.log(JSON.stringify({
  sub: claims.sub, iss: claims.iss, aud: claims.aud, nonce: claims.nonce === nonce,
  preferred_username: claims.preferred_username, browser_params: browserParams,
}));
