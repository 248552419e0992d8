// A real OpenID Connect provider (npm oidc-provider) on loopback for Verity's login tests.
//
// Why a real provider: a hand-rolled fake would only prove the app agrees with our own reading of
// the spec; oidc-provider is certified and rejects what real identity providers reject.
//
// Environment:
//   OIDC_PORT           port on 127.0.0.1; 0 lets the OS pick one (race-free), default 0
//   OIDC_CLIENT_ID      the single confidential client's id
//   OIDC_CLIENT_SECRET  its secret
//   OIDC_REDIRECT_URIS  comma-separated redirect URIs (plain http on loopback is fine)
//   OIDC_TOKEN_AUTH     token_endpoint_auth_method, default client_secret_basic
//   OIDC_PKCE_REQUIRED  "0" lets the client skip PKCE; by default PKCE (S256) is mandatory
//
// stdout carries exactly one line, `READY <issuer>`, once the server listens; everything else
// (notices, errors) goes to stderr so a reader of stdout never blocks on a full pipe.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';

// These notices are expected in a test harness (dev login form, in-memory storage, the Node 20
// used here being older than the provider's preferred LTS); drop them, keep anything else.
const EXPECTED = /devInteractions|in-memory adapter|Unsupported runtime/;
for (const level of ['info', 'warn']) {
  console[level] = (...args) => {
    if (!EXPECTED.test(String(args[0]))) console.error(...args);
  };
}

// Imported after the console filter is in place: the module warns at load time.
const { default: Provider } = await import('oidc-provider');

function required(name) {
  const value = process.env[name];
  if (!value) {
    console.error(`provider.mjs: environment variable ${name} is required`);
    process.exit(2);
  }
  return value;
}

const clientId = required('OIDC_CLIENT_ID');
const clientSecret = required('OIDC_CLIENT_SECRET');
const redirectUris = required('OIDC_REDIRECT_URIS').split(',').map((u) => u.trim()).filter(Boolean);
const tokenAuth = process.env.OIDC_TOKEN_AUTH || 'client_secret_basic';
const pkceRequired = process.env.OIDC_PKCE_REQUIRED !== '0';

// A fresh signing key per run instead of the library's published dev keys, so tokens signed by
// one run never verify against another and the "dev keys" warning stays quiet.
const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
  format: 'jwk',
});

/**
 * The login typed into the dev form is the account id (the subject); a login without @ gets a
 * test domain. A login may carry options after `;`: `email=<address>` gives the account that
 * address instead, `unverified` makes the provider say `email_verified: false`, as providers
 * that let anyone sign up and type any address do (`mallory;email=alice@example.test;unverified`).
 */
async function findAccount(_ctx, id) {
  const [login, ...options] = id.split(';');
  const given = options.find((option) => option.startsWith('email='));
  const email = given ? given.slice('email='.length) : login.includes('@') ? login : `${login}@example.test`;
  const verified = !options.includes('unverified');
  const local = (given ? login : email).split('@')[0];
  const name = local
    .split(/[._-]+/)
    .filter(Boolean)
    .map((part) => part[0].toUpperCase() + part.slice(1))
    .join(' ');
  return {
    accountId: id,
    async claims() {
      return { sub: id, email, email_verified: verified, name: name || email };
    },
  };
}

const server = createServer();
server.listen(Number(process.env.OIDC_PORT || 0), '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: redirectUris,
        // "web" clients may register plain http redirect URIs for the code flow (only implicit
        // is forced onto https), which is what a loopback test app needs.
        application_type: 'web',
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: tokenAuth,
      },
    ],
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name'],
    },
    // By default the ID token of a code flow carries only `sub`; the app reads email from it.
    conformIdTokenClaims: false,
    pkce: { required: () => pkceRequired },
    findAccount,
    jwks: { keys: [{ ...signingKey, alg: 'RS256', use: 'sig', kid: 'test-1' }] },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    features: { devInteractions: { enabled: true } },
    ttl: {
      AccessToken: 600,
      AuthorizationCode: 60,
      IdToken: 600,
      Interaction: 600,
      Session: 3600,
      Grant: 3600,
    },
    // The default renders HTML with the error; tests want the reason on stderr too.
    async renderError(ctx, out) {
      console.error('oidc-provider error:', JSON.stringify(out));
      ctx.type = 'html';
      ctx.body = `<!DOCTYPE html><pre>${JSON.stringify(out).replace(/[<&]/g, '')}</pre>`;
    },
  });
  provider.on('server_error', (_ctx, err) => console.error('oidc-provider server_error:', err));
  server.on('request', provider.callback());
  process.stdout.write(`READY ${issuer}\n`);
});

// Exit promptly and quietly when the harness stops us.
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => process.exit(0));
}
