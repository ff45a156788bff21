// Runs a second-factor sign-in with openid-client 6 (npm), unpatched, as a Node.js relying party
// would: discovery, an authorization URL with PKCE, nonce, state and login_hint, the browser's
// redirects (followed here with the provider's cookies), the picture login answered by a form
// POST of POINTS when the provider shows it, the code grant, and UserInfo with the access token.
// The client must be registered with an access token (idp client create … --access-token):
// openid-client refuses a token response without one. With MODE "par" the request is pushed
// first (RFC 9126) and the browser gets only client_id and request_uri.
// Usage: node openid-client.mjs ISSUER CLIENT_ID CLIENT_SECRET REDIRECT_URI LOGIN_HINT MODE [POINTS]
import * as client from 'openid-client';

const [issuer, clientId, secret, redirectURI, hint, mode, points] = process.argv.slice(2);
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

// The browser: follow redirects with the cookies the provider sets; on the picture login page,
// post the points with the page's CSRF token, as the page's form does.
let next = url.href;
let init = {};
const cookies = [];
for (let i = 0; !next.startsWith(redirectURI); i++) {
  if (i > 8) throw new Error('too many steps before the callback');
  const r = await fetch(next, { redirect: 'manual', ...init, headers: { ...init.headers, cookie: cookies.join('; ') } });
  for (const c of r.headers.getSetCookie()) cookies.push(c.split(';')[0]);
  init = {};
  if (r.headers.get('location')) {
    next = new URL(r.headers.get('location'), next).href;
    continue;
  }
  const page = await r.text();
  const csrf = page.match(/name="csrf" value="([^"]+)"/);
  if (r.status !== 200 || !csrf || !points) throw new Error(`no redirect from ${next}: ${r.status}`);
  init = {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf: csrf[1], points }).toString(),
  };
}

const tokens = await client.authorizationCodeGrant(config, new URL(next), {
  pkceCodeVerifier: verifier,
  expectedState: state,
  expectedNonce: nonce,
  idTokenExpected: true,
});
const claims = tokens.claims();
const userinfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
console.log(JSON.stringify({
  sub: claims.sub, iss: claims.iss, aud: claims.aud, nonce: claims.nonce === nonce,
  preferred_username: claims.preferred_username, browser_params: browserParams,
  token_type: tokens.token_type, expires_in: tokens.expires_in,
  alg: JSON.parse(Buffer.from(tokens.id_token.split('.')[0], 'base64url')).alg,
  userinfo,
}));
