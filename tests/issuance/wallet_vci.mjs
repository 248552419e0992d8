// A wallet we did not write receives a credential from the issuer under test, and a verifier
// we did not write checks it.
//
//   @openid4vc/openid4vci (OpenWallet Foundation, the library Credo uses): resolves the
//     credential offer by reference, the issuer and authorization server metadata, redeems
//     the pre-authorized code (and tx_code), asks the nonce endpoint, builds the key proof
//     and sends the OpenID4VCI 1.0 Credential Request.
//   @sd-jwt/sd-jwt-vc: verifies the SD-JWT VC with the issuer key found through the issuer's
//     /.well-known/jwt-vc-issuer metadata (the kid of the credential's header), fetches the
//     status list the credential names (checked against the key its own kid names in the
//     same metadata) and reads its entry with @sd-jwt/jwt-status-list.
//
//   @openid4vc/oauth2 (the same family): in the authorization code flow, the pushed
//     authorization request with PKCE, the DPoP proofs and their nonce retries, and the check
//     of `iss` in the authorization response (RFC 9207).
//
// Job on stdin (JSON):
//   {"action": "receive", "offer_url": "...", "tx_code": "123456"?}
//   {"action": "receive_authorized", "offer_url": "...", "wallet_provider"?: {"private_jwk",
//     "x5c"}, "key_attestation"?: true}: the authorization code flow with DPoP and, given a
//     wallet provider, its wallet attestation (and a key attestation of the holder key in the
//     proof's header); the person's part (load the authorization page, press Continue) is done with
//     fetch, as a browser would, and the redirect to the wallet is read, not followed.
//     With "holder_private_jwks": [[jwk, ...], ...] instead of "holder_private_jwk": one
//     credential request per inner list on the same DPoP-bound access token, each a batch of
//     one proof per key (one key attestation of the batch's keys in each proof's header);
//     prints {"batches": [[verified credential, ...], ...], "token_type",
//     "authorization_response"}.
//   {"action": "receive_batch", "offer_url": "...", "holder_private_jwks": [[jwk, ...], ...]}:
//     the pre-authorized code flow, then one credential request per inner list on the same
//     access token, each carrying one proof per key (a batch), all with the same c_nonce;
//     prints {"batches": [[verified credential, ...], ...]}.
//   {"action": "verify", "credential": "<sd-jwt>"}
//   Any job may carry "root_pem": the issuer key (of the credential and of its status list)
//     is then the x5c leaf's, checked with node:crypto's X509Certificate to be signed by that
//     root, valid now and naming the credential's iss as a URI subjectAltName (SD-JWT VC
//     §3.5), instead of the key the jwt-vc-issuer metadata lists.
// Prints JSON on stdout: {"credential", "payload", "claims", "status", "status_list_typ",
// "issuer_kid", "holder_jwk"}; on failure prints {"error": "..."} and exits 1.

import crypto from 'node:crypto'
import {
  clientAuthenticationAnonymous,
  clientAuthenticationClientAttestationJwt,
  clientAuthenticationNone,
  createClientAttestationJwt,
  setGlobalConfig,
} from '@openid4vc/oauth2'
import { Openid4vciClient, createKeyAttestationJwt } from '@openid4vc/openid4vci'
import { ES256, digest } from '@sd-jwt/crypto-nodejs'
import { getListFromStatusListJWT } from '@sd-jwt/jwt-status-list'
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc'

// The issuer under test listens on loopback over http.
setGlobalConfig({ allowInsecureUrls: true })

const b64url = (buffer) => Buffer.from(buffer).toString('base64url')
const decodePart = (part) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'))

// A fresh P-256 key, or the private JWK the job hands over (so that the caller can present
// the credential afterwards with the key it is bound to).
function holderKey(privateJwk) {
  if (privateJwk) {
    const privateKey = crypto.createPrivateKey({ key: privateJwk, format: 'jwk' })
    const { d, ...publicJwk } = privateKey.export({ format: 'jwk' })
    return { privateKey, publicJwk }
  }
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const publicJwk = publicKey.export({ format: 'jwk' })
  return { privateKey, publicJwk }
}

// Signs with the key a `jwk` signer names (the holder's, the DPoP key, the wallet instance's
// attested key) or, for an `x5c` signer, the wallet provider's.
function signWith(keys, provider) {
  return async (signer, { header, payload }) => {
    if (signer.alg !== 'ES256') throw new Error(`unexpected alg ${signer.alg}`)
    let key
    let signerJwk = signer.publicJwk
    if (signer.method === 'x5c' && provider) {
      key = provider.privateKey
      signerJwk = provider.publicJwk
    } else if (signer.method === 'jwk') {
      key = keys.find((candidate) => candidate && candidate.publicJwk.x === signer.publicJwk.x)?.privateKey
    }
    if (!key) throw new Error(`unexpected signer ${signer.method}`)
    const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}`
    const signature = crypto.sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' })
    return { jwt: `${input}.${b64url(signature)}`, signerJwk }
  }
}

function callbacks(holder, dpopKey, clientAuthentication = clientAuthenticationAnonymous(), more = {}) {
  return {
    hash: (data, alg) => crypto.createHash(alg.replace('-', '').toLowerCase()).update(data).digest(),
    generateRandom: (length) => crypto.randomBytes(length),
    clientAuthentication,
    signJwt: signWith([holder, dpopKey, more.instanceKey, ...(more.holders ?? [])], more.provider),
  }
}

// The wallet provider of the job: its signing key (private JWK) and its x5c.
function walletProvider(job) {
  if (!job.wallet_provider) return null
  const provider = holderKey(job.wallet_provider.private_jwk)
  return { ...provider, x5c: job.wallet_provider.x5c }
}

// OAuth 2.0 Attestation-Based Client Authentication as the OWF client does it: the provider
// signs the Client Attestation JWT (x5c) for this client_id and the instance key; the client
// then makes a fresh PoP for each PAR and token request.
async function attestedClientAuthentication(provider, instanceKey) {
  const signJwt = signWith([instanceKey], provider)
  const clientAttestationJwt = await createClientAttestationJwt({
    expiresAt: new Date(Date.now() + 3600 * 1000),
    issuer: 'https://wallet-provider.example.test',
    clientId: CLIENT_ID,
    confirmation: { jwk: instanceKey.publicJwk },
    callbacks: { signJwt },
    signer: { method: 'x5c', alg: 'ES256', x5c: provider.x5c },
  })
  return clientAuthenticationClientAttestationJwt({
    clientAttestationJwt,
    callbacks: { signJwt, generateRandom: (length) => crypto.randomBytes(length) },
  })
}

async function receive(job) {
  const holder = holderKey()
  const client = new Openid4vciClient({ callbacks: callbacks(holder) })
  const credentialOffer = await client.resolveCredentialOffer(job.offer_url)
  const issuerMetadata = await client.resolveIssuerMetadata(credentialOffer.credential_issuer)
  const { accessTokenResponse } = await client.retrievePreAuthorizedCodeAccessTokenFromOffer({
    credentialOffer,
    issuerMetadata,
    txCode: job.tx_code,
  })
  const { c_nonce: nonce } = await client.requestNonce({ issuerMetadata })
  const credentialConfigurationId = credentialOffer.credential_configuration_ids[0]
  const { jwt } = await client.createCredentialRequestJwtProof({
    issuerMetadata,
    credentialConfigurationId,
    signer: { method: 'jwk', alg: 'ES256', publicJwk: holder.publicJwk },
    nonce,
  })
  const response = await client.retrieveCredentials({
    issuerMetadata,
    accessToken: accessTokenResponse.access_token,
    credentialConfigurationId,
    proofs: { jwt: [jwt] },
  })
  const credential = response.credentialResponse.credentials[0].credential
  return { ...(await verify(credential, job.root_pem)), holder_jwk: holder.publicJwk }
}

// OpenID4VCI 1.0 §8: several proofs in one request (batch_credential_issuance), then further
// requests on the same access token ("multiple accesses").
async function receiveBatch(job) {
  const client = new Openid4vciClient({ callbacks: callbacks(null) })
  const credentialOffer = await client.resolveCredentialOffer(job.offer_url)
  const issuerMetadata = await client.resolveIssuerMetadata(credentialOffer.credential_issuer)
  const { accessTokenResponse } = await client.retrievePreAuthorizedCodeAccessTokenFromOffer({
    credentialOffer,
    issuerMetadata,
  })
  const credentialConfigurationId = credentialOffer.credential_configuration_ids[0]
  const batches = []
  for (const privateJwks of job.holder_private_jwks) {
    const { c_nonce: nonce } = await client.requestNonce({ issuerMetadata })
    const jwts = []
    for (const privateJwk of privateJwks) {
      const holder = holderKey(privateJwk)
      const { jwt } = await new Openid4vciClient({
        callbacks: callbacks(holder),
      }).createCredentialRequestJwtProof({
        issuerMetadata,
        credentialConfigurationId,
        signer: { method: 'jwk', alg: 'ES256', publicJwk: holder.publicJwk },
        nonce,
      })
      jwts.push(jwt)
    }
    const response = await client.retrieveCredentials({
      issuerMetadata,
      accessToken: accessTokenResponse.access_token,
      credentialConfigurationId,
      proofs: { jwt: jwts },
    })
    const verified = []
    for (const { credential } of response.credentialResponse.credentials) {
      verified.push(await verify(credential))
    }
    batches.push(verified)
  }
  return {
    batches,
    batch_size: issuerMetadata.credentialIssuer.batch_credential_issuance?.batch_size ?? null,
  }
}

const REDIRECT_URI = 'https://wallet.example.test/callback'
const CLIENT_ID = 'owf-wallet-under-test'

// The person on the authorization page: its cookie, its form's hidden fields, "Continue".
async function approveInBrowser(authorizationRequestUrl) {
  const page = await fetch(authorizationRequestUrl)
  if (!page.ok) throw new Error(`authorization page: HTTP ${page.status}`)
  const cookie = (page.headers.get('set-cookie') || '').split(';')[0]
  const html = await page.text()
  const form = new URLSearchParams()
  for (const [, name, value] of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    form.set(name, value.replaceAll('&#34;', '"').replaceAll('&amp;', '&'))
  }
  form.set('decision', 'continue')
  const action = new URL(authorizationRequestUrl)
  action.search = ''
  const answer = await fetch(action, {
    method: 'POST',
    body: form,
    headers: { cookie },
    redirect: 'manual',
  })
  if (answer.status !== 303) throw new Error(`authorization page POST: HTTP ${answer.status}`)
  return answer.headers.get('location')
}

async function receiveAuthorized(job) {
  // One batch of one key, or the batches the job names (each inner list one request).
  const batches = (job.holder_private_jwks ?? [[job.holder_private_jwk]]).map((keys) =>
    keys.map((privateJwk) => holderKey(privateJwk)),
  )
  const holders = batches.flat()
  const holder = holders[0]
  const dpopKey = holderKey()
  const provider = walletProvider(job)
  const instanceKey = provider ? holderKey() : null
  // A public client (token_endpoint_auth_methods_supported: none): client_id in the body;
  // with a wallet provider, an attested one (attest_jwt_client_auth).
  const clientAuthentication = provider
    ? await attestedClientAuthentication(provider, instanceKey)
    : clientAuthenticationNone({ clientId: CLIENT_ID })
  const client = new Openid4vciClient({
    callbacks: callbacks(holder, dpopKey, clientAuthentication, { instanceKey, provider, holders }),
  })
  const credentialOffer = await client.resolveCredentialOffer(job.offer_url)
  const issuerMetadata = await client.resolveIssuerMetadata(credentialOffer.credential_issuer)
  const credentialConfigurationId = credentialOffer.credential_configuration_ids[0]
  const configuration =
    issuerMetadata.credentialIssuer.credential_configurations_supported[credentialConfigurationId]
  const dpopSigner = { method: 'jwk', alg: 'ES256', publicJwk: dpopKey.publicJwk }
  const authorization = await client.initiateAuthorization({
    clientId: CLIENT_ID,
    redirectUri: REDIRECT_URI,
    scope: configuration.scope,
    credentialOffer,
    issuerMetadata,
    dpop: { signer: dpopSigner },
  })
  const redirect = await approveInBrowser(authorization.authorizationRequestUrl)
  const authorizationResponse = client.parseAndVerifyAuthorizationResponseRedirectUrl({
    url: redirect,
    authorizationServerMetadata: issuerMetadata.authorizationServers[0],
  })
  const { accessTokenResponse, dpop } = await client.retrieveAuthorizationCodeAccessTokenFromOffer({
    issuerMetadata,
    credentialOffer,
    authorizationCode: authorizationResponse.code,
    pkceCodeVerifier: authorization.pkce.codeVerifier,
    redirectUri: REDIRECT_URI,
    dpop: { signer: dpopSigner, nonce: authorization.dpop?.nonce },
  })
  if (accessTokenResponse.token_type !== 'DPoP') throw new Error('the access token is not DPoP-bound')
  let dpopNonce = dpop?.nonce
  const received = []
  // OpenID4VCI 1.0 §8: every request on the same access token ("multiple accesses"), each
  // with a c_nonce of its own and as many proofs as keys (batch_credential_issuance).
  for (const keys of batches) {
    const { c_nonce: nonce } = await client.requestNonce({ issuerMetadata })
    // OpenID4VCI 1.0 Appendix D: the provider attests the batch's holder keys, in each proof's
    // header.
    const keyAttestationJwt =
      provider && job.key_attestation
        ? await createKeyAttestationJwt({
            attestedKeys: keys.map((key) => key.publicJwk),
            expiresAt: new Date(Date.now() + 3600 * 1000),
            nonce,
            keyStorage: ['iso_18045_high'],
            use: 'proof_type.jwt',
            signer: { method: 'x5c', alg: 'ES256', x5c: provider.x5c },
            callbacks: { signJwt: signWith([], provider) },
          })
        : undefined
    const jwts = []
    for (const key of keys) {
      const { jwt } = await client.createCredentialRequestJwtProof({
        issuerMetadata,
        credentialConfigurationId,
        signer: { method: 'jwk', alg: 'ES256', publicJwk: key.publicJwk },
        nonce,
        keyAttestationJwt,
      })
      jwts.push(jwt)
    }
    const response = await client.retrieveCredentials({
      issuerMetadata,
      accessToken: accessTokenResponse.access_token,
      credentialConfigurationId,
      proofs: { jwt: jwts },
      dpop: { signer: dpopSigner, nonce: dpopNonce },
    })
    dpopNonce = response.dpop?.nonce ?? dpopNonce
    const verified = []
    for (const { credential } of response.credentialResponse.credentials) {
      verified.push(await verify(credential))
    }
    received.push(verified)
  }
  const flow = {
    token_type: accessTokenResponse.token_type,
    authorization_response: authorizationResponse,
  }
  if (job.holder_private_jwks) return { ...flow, batches: received }
  return { ...received[0][0], holder_jwk: holder.publicJwk, ...flow }
}

// SD-JWT VC §5: the well-known segment goes between the host and the path of `iss`.
async function issuerKey(iss, kid) {
  const url = new URL(iss)
  const metadataUrl = `${url.origin}/.well-known/jwt-vc-issuer${url.pathname.replace(/\/$/, '')}`
  const response = await fetch(metadataUrl)
  if (!response.ok) throw new Error(`jwt-vc-issuer metadata: HTTP ${response.status}`)
  const metadata = await response.json()
  if (metadata.issuer !== iss) throw new Error('jwt-vc-issuer metadata names another issuer')
  const key = metadata.jwks.keys.find((candidate) => candidate.kid === kid)
  if (!key) throw new Error(`no key ${kid} in the issuer's JWKS`)
  return key
}

// SD-JWT VC §3.5 with X.509: the leaf of x5c, chained to the root the verifier trusts.
function x5cKey(header, iss, rootPem) {
  if (!Array.isArray(header.x5c) || header.x5c.length === 0) throw new Error('no x5c header')
  const chain = header.x5c.map((der) => new crypto.X509Certificate(Buffer.from(der, 'base64')))
  const root = new crypto.X509Certificate(rootPem)
  const now = new Date()
  const anchored = [...chain, root]
  for (let index = 0; index + 1 < anchored.length; index++) {
    const [cert, signer] = [anchored[index], anchored[index + 1]]
    if (!cert.checkIssued(signer) || !cert.verify(signer.publicKey)) {
      throw new Error(`x5c certificate ${index} is not signed by the next one`)
    }
    if (new Date(cert.validFrom) > now || new Date(cert.validTo) < now) {
      throw new Error(`x5c certificate ${index} is not valid now`)
    }
  }
  const names = (chain[0].subjectAltName || '').split(', ')
  if (!names.includes(`URI:${iss}`)) throw new Error('x5c leaf does not name the iss')
  return { ...chain[0].publicKey.export({ format: 'jwk' }), kid: header.kid }
}

async function verify(credential, rootPem) {
  const [issuerJwt] = credential.split('~')
  const [headerPart, payloadPart] = issuerJwt.split('.')
  const header = decodePart(headerPart)
  const payload = decodePart(payloadPart)
  const key = rootPem ? x5cKey(header, payload.iss, rootPem) : await issuerKey(payload.iss, header.kid)
  let status = null
  let statusListTyp = null
  let statusListKey = null
  const sdjwt = new SDJwtVcInstance({
    hasher: digest,
    hashAlg: 'sha-256',
    verifier: await ES256.getVerifier(key),
    statusListFetcher: async (uri) => {
      const fetched = await fetch(uri, { headers: { Accept: 'application/statuslist+jwt' } })
      if (!fetched.ok) throw new Error(`status list: HTTP ${fetched.status}`)
      if (!(fetched.headers.get('content-type') || '').includes('application/statuslist+jwt')) {
        throw new Error('status list: not application/statuslist+jwt')
      }
      const token = await fetched.text()
      const statusHeader = decodePart(token.split('.')[0])
      statusListTyp = statusHeader.typ
      // The list is signed by the issuer's current key, found like the credential's.
      statusListKey = rootPem
        ? x5cKey(statusHeader, payload.iss, rootPem)
        : await issuerKey(payload.iss, statusHeader.kid)
      // Read again by the status list package itself, beside the SD-JWT VC library's check.
      const list = getListFromStatusListJWT(token)
      if (list.getBitsPerStatus() !== 1) throw new Error('status list is not one bit per entry')
      return token
    },
    statusVerifier: async (data, signature) =>
      (await ES256.getVerifier(statusListKey))(data, signature),
    statusValidator: async (value) => {
      status = value
    },
  })
  const verified = await sdjwt.verify(credential)
  const claims = await sdjwt.getClaims(credential)
  return {
    credential,
    header: verified.header,
    payload: verified.payload,
    claims,
    status,
    status_list_typ: statusListTyp,
    issuer_kid: key.kid,
    x5c: verified.header.x5c || null,
  }
}

async function main() {
  const chunks = []
  for await (const chunk of process.stdin) chunks.push(chunk)
  const job = JSON.parse(Buffer.concat(chunks).toString('utf8'))
  const actions = { receive, receive_authorized: receiveAuthorized, receive_batch: receiveBatch }
  const result = actions[job.action]
    ? await actions[job.action](job)
    : await verify(job.credential, job.root_pem)
  process.stdout.write(JSON.stringify(result))
}

main().catch((error) => {
  process.stdout.write(JSON.stringify({ error: String(error && (error.stack || error)) }))
  process.exit(1)
})
