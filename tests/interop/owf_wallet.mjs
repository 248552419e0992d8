// The wallet of the interop matrix: the OpenWallet Foundation's OpenID4VP client
// (@openid4vc/openid4vp, the library Credo and the wallets built on it use) answers a request of
// the verifier under test, holding an SD-JWT VC made with @sd-jwt/sd-jwt-vc. Nothing of the
// verifier is imported: everything goes over HTTP, the way a phone or a browser reaches it.
//
// Reads one JSON job on stdin:
//   {"kind": "link", "link": "openid4vp://...", "trust_anchor": "<PEM>"?, "credential": {...}}
//     follows the link (by value, or fetching request_uri with GET or POST as the link says),
//     checks a signed request against trust_anchor, presents, and posts the response
//     (direct_post or direct_post.jwt, as the request asks). With "wallet_post": {"metadata":
//     {...}, "nonce": "..."} a POST to request_uri carries them (see walletOptions).
//   {"kind": "dc_api", "request_url": "...", "response_url": "...", "origin": "http://...",
//    "trust_anchor": "<PEM>"?, "credential": {...}}
//     what the person's page and the browser do with the Digital Credentials API: fetch the
//     page's request, hand its data to the wallet with the page's origin, post the
//     DigitalCredential back from that origin ({"protocol", "data"}: data.vp_token for dc_api,
//     data.response, a JWE made with jose, for dc_api.jwt). "tamper": "ciphertext" changes the
//     JWE; "replay": true posts the same answer twice.
//   credential: {"vct", "claims", "frame"} what the issuer signs and which claims are
//     selectively disclosable (an @sd-jwt disclosure frame).
//   "transaction_data": "confirm" | "omit" | "wrong" (link only): how the key binding answers
//     the request's transaction data, as the client parsed it: the hash of each entry's string
//     as received (OpenID4VP 1.0 Appendix B.3.3), no transaction_data_hashes, or a hash of
//     something else. Without it a request that carries transaction data is answered "omit".
// Prints JSON on stdout: {"request": {...what the wallet resolved...}, "status": <HTTP status of
// the response post>, "body": <its JSON body>}; on failure {"error": "..."} and exit code 1.

import crypto from 'node:crypto'
import dns from 'node:dns'
import { setGlobalConfig } from '@openid4vc/oauth2'
import { Openid4vpClient } from '@openid4vc/openid4vp'
import { ES256 } from '@sd-jwt/crypto-nodejs'
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc'
import { CompactEncrypt, compactVerify, importJWK } from 'jose'

// The verifier under test listens on loopback over http, under the name localhost (the DNS name
// its certificate carries); the server binds IPv4 only.
setGlobalConfig({ allowInsecureUrls: true })
dns.setDefaultResultOrder('ipv4first')

const SIGNING_ALGS = { ES256: 'sha256', ES384: 'sha384', ES512: 'sha512' }
// What this wallet can do for direct_post.jwt (OpenID4VP 1.0, Encrypted Responses); the client
// picks from these.
const JARM_SERVER_METADATA = {
  authorization_signing_alg_values_supported: ['ES256'],
  authorization_encryption_alg_values_supported: ['ECDH-ES'],
  authorization_encryption_enc_values_supported: ['A128GCM', 'A256GCM'],
}

const b64url = (bytes) => Buffer.from(bytes).toString('base64url')

async function readJob() {
  const chunks = []
  for await (const chunk of process.stdin) chunks.push(chunk)
  return JSON.parse(Buffer.concat(chunks).toString('utf8'))
}

// Never follow a redirect (OpenID4VP 1.0, HTTP Redirects: the wallet SHOULD treat one as an error).
const noRedirectFetch = (input, init) => fetch(input, { ...init, redirect: 'error' })

// ---------------------------------------------------------------- signed requests (x5c)

function certificateOf(base64Der) {
  return new crypto.X509Certificate(Buffer.from(base64Der, 'base64'))
}

// The x5c chain must lead to the trust anchor, each certificate valid now and issued by the next.
function checkChain(x5c, anchorPem) {
  if (!anchorPem) throw new Error('a signed request, but this wallet was given no trust anchor')
  const anchor = new crypto.X509Certificate(anchorPem)
  const chain = x5c.map(certificateOf)
  const now = Date.now()
  for (const cert of chain) {
    if (now < Date.parse(cert.validFrom) || now > Date.parse(cert.validTo)) {
      throw new Error(`certificate ${cert.subject} is not valid now`)
    }
  }
  for (let i = 0; i + 1 < chain.length; i++) {
    if (!chain[i].checkIssued(chain[i + 1]) || !chain[i].verify(chain[i + 1].publicKey)) {
      throw new Error(`x5c[${i}] is not issued by x5c[${i + 1}]`)
    }
  }
  const last = chain[chain.length - 1]
  const anchored =
    last.fingerprint256 === anchor.fingerprint256 ||
    (last.checkIssued(anchor) && last.verify(anchor.publicKey))
  if (!anchored) throw new Error('the x5c chain does not lead to the trust anchor')
  return chain[0]
}

function sanNames(cert, kind) {
  return (cert.subjectAltName ?? '')
    .split(', ')
    .filter((entry) => entry.startsWith(`${kind}:`))
    .map((entry) => entry.slice(kind.length + 1))
}

function callbacks(job) {
  return {
    fetch: noRedirectFetch,
    hash: (data, alg) => crypto.createHash(alg.replace('-', '').toLowerCase()).update(data).digest(),
    getX509CertificateMetadata: (certificate) => {
      const cert = certificateOf(certificate)
      return { sanDnsNames: sanNames(cert, 'DNS'), sanUriNames: sanNames(cert, 'URI') }
    },
    verifyJwt: async (signer, { compact }) => {
      if (signer.method !== 'x5c') throw new Error(`unexpected signer method ${signer.method}`)
      if (!(signer.alg in SIGNING_ALGS)) throw new Error(`unexpected alg ${signer.alg}`)
      const leaf = checkChain(signer.x5c, job.trust_anchor)
      await compactVerify(compact, leaf.publicKey, { algorithms: [signer.alg] })
      return { verified: true, signerJwk: leaf.publicKey.export({ format: 'jwk' }) }
    },
    decryptJwe: async () => {
      throw new Error('this wallet publishes no key: an encrypted request cannot be for it')
    },
    signJwt: async () => {
      throw new Error('no signed responses: the requests ask for none')
    },
    encryptJwe: async (encryptor, data) => {
      if (encryptor.method !== 'jwk') throw new Error(`unexpected encryptor ${encryptor.method}`)
      const { publicJwk, alg, enc, apu, apv } = encryptor
      const header = { alg, enc }
      if (publicJwk.kid) header.kid = publicJwk.kid
      const parameters = {}
      if (apu) parameters.apu = Buffer.from(apu, 'base64url')
      if (apv) parameters.apv = Buffer.from(apv, 'base64url')
      const jwe = await new CompactEncrypt(new TextEncoder().encode(data))
        .setProtectedHeader(header)
        .setKeyManagementParameters(parameters)
        .encrypt(await importJWK(publicJwk, alg))
      return { jwe, encryptionJwk: publicJwk }
    },
  }
}

// ---------------------------------------------------------------- the credential

function keyPair() {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' })
  return { privateJwk: privateKey.export({ format: 'jwk' }), publicJwk: publicKey.export({ format: 'jwk' }) }
}

// The claims a DCQL credential query asks for, as an @sd-jwt presentation frame.
function presentationFrame(credentialQuery) {
  const frame = {}
  for (const { path } of credentialQuery.claims ?? []) {
    let node = frame
    path.forEach((name, index) => {
      if (index === path.length - 1) node[name] = true
      else node = node[name] = node[name] === true ? {} : (node[name] ?? {})
    })
  }
  return frame
}

// OpenID4VP 1.0 Appendix B.3.3: the key binding's transaction_data_hashes, each the sha-256 of
// one transaction_data string exactly as received (no base64url decoding before hashing).
function transactionDataClaims(how, transactionData) {
  if (!transactionData || how === undefined || how === 'omit') return {}
  const strings = transactionData.map(({ encoded }) => (how === 'wrong' ? `${encoded}x` : encoded))
  return {
    transaction_data_hashes: strings.map((text) => b64url(crypto.createHash('sha256').update(text).digest())),
    transaction_data_hashes_alg: 'sha-256',
  }
}

async function presentation(job, credentialQuery, audience, nonce, kbClaims = {}) {
  const issuer = keyPair()
  const holder = keyPair()
  const sdjwt = new SDJwtVcInstance({
    signer: await ES256.getSigner(issuer.privateJwk),
    signAlg: 'ES256',
    kbSigner: await ES256.getSigner(holder.privateJwk),
    kbSignAlg: 'ES256',
    hasher: (data) => crypto.createHash('sha256').update(data).digest(),
    hashAlg: 'sha-256',
    saltGenerator: () => crypto.randomBytes(16).toString('base64url'),
  })
  const now = Math.floor(Date.now() / 1000)
  const { vct, claims, frame } = job.credential
  const issued = await sdjwt.issue(
    {
      ...claims,
      iss: `did:jwk:${b64url(JSON.stringify(issuer.publicJwk))}`,
      vct,
      iat: now - 60,
      exp: now + 3600,
      cnf: { jwk: holder.publicJwk },
    },
    frame,
  )
  return sdjwt.present(issued, presentationFrame(credentialQuery), {
    kb: { payload: { ...kbClaims, aud: audience, nonce, iat: now } },
  })
}

// The one credential query this wallet can answer: an SD-JWT VC of the type it holds.
function credentialQueryOf(request, vct) {
  const query = (request.dcql_query?.credentials ?? []).find(
    (candidate) => candidate.format === 'dc+sd-jwt' && (candidate.meta?.vct_values ?? []).includes(vct),
  )
  if (!query) throw new Error(`no DCQL credential query for a dc+sd-jwt of type ${vct}`)
  return query
}

// ---------------------------------------------------------------- the two ways in

function summary(resolved, parsed) {
  const request = resolved.authorizationRequestPayload
  return {
    provided: parsed.provided,
    type: parsed.type,
    send_by: resolved.jar?.sendBy ?? 'value',
    signed: Boolean(resolved.jar),
    request_object_typ: resolved.jar?.jwt.header.typ,
    client_id: request.client_id,
    client_prefix: resolved.client.prefix,
    effective_client_id: resolved.client.effective,
    response_mode: request.response_mode,
    wallet_nonce: request.wallet_nonce,
    encrypted_response_enc_values_supported:
      request.client_metadata?.encrypted_response_enc_values_supported,
    verifier_info: request.verifier_info,
    client_name: request.client_metadata?.client_name,
    version: resolved.version,
    transaction_data: resolved.transactionData?.map(({ transactionData }) => transactionData),
  }
}

// With request_uri_method=post the client form-encodes the members of `wallet.metadata` as the
// body, and checks the Request Object's wallet_nonce against `wallet.expectedNonce`. Without
// `wallet_post` it is resolved as Credo resolves a request (no metadata: an empty form). With it,
// `wallet.metadata` holds the two parameters OpenID4VP 1.0 (Request URI Method post) defines,
// wallet_metadata and wallet_nonce: given the wallet's metadata itself, the client would send
// each of its members as a form field of its own, and no wallet_nonce.
function walletOptions(walletPost) {
  if (!walletPost) return undefined
  return {
    metadata: { wallet_metadata: walletPost.metadata, wallet_nonce: walletPost.nonce },
    expectedNonce: walletPost.nonce,
  }
}

async function answerLink(job) {
  const client = new Openid4vpClient({ callbacks: callbacks(job) })
  const parsed = client.parseOpenid4vpAuthorizationRequest({ authorizationRequest: job.link })
  const resolved = await client.resolveOpenId4vpAuthorizationRequest({
    authorizationRequestPayload: parsed.params,
    wallet: walletOptions(job.wallet_post),
  })
  const request = resolved.authorizationRequestPayload
  const credentialQuery = credentialQueryOf(request, job.credential.vct)
  // OpenID4VP 1.0, SD-JWT VC presentations: the key binding's aud is the client identifier,
  // prefix included.
  const vpToken = {
    [credentialQuery.id]: [
      await presentation(
        job,
        credentialQuery,
        request.client_id,
        request.nonce,
        transactionDataClaims(job.transaction_data, resolved.transactionData),
      ),
    ],
  }
  const encrypted = request.response_mode === 'direct_post.jwt'
  const response = await client.createOpenid4vpAuthorizationResponse({
    authorizationRequestPayload: request,
    authorizationResponsePayload: { vp_token: vpToken },
    jarm: encrypted
      ? {
          encryption: { nonce: crypto.randomBytes(16).toString('base64url') },
          serverMetadata: JARM_SERVER_METADATA,
        }
      : undefined,
  })
  const submitted = await client.submitOpenid4vpAuthorizationResponse({
    authorizationRequestPayload: request,
    authorizationResponsePayload: response.authorizationResponsePayload,
    jarm: response.jarm ? { responseJwt: response.jarm.responseJwt } : undefined,
  })
  const jweHeader = response.jarm
    ? JSON.parse(Buffer.from(response.jarm.responseJwt.split('.')[0], 'base64url').toString())
    : undefined
  return {
    request: { ...summary(resolved, parsed), jwe_header: jweHeader },
    status: submitted.response.status,
    body: await bodyOf(submitted.response),
  }
}

async function answerDcApi(job) {
  // The page's script: fetch the `digital` member for navigator.credentials.get.
  const fetched = await noRedirectFetch(job.request_url, { headers: { Accept: 'application/json' } })
  if (!fetched.ok) throw new Error(`the page's request: HTTP ${fetched.status}`)
  const digital = await fetched.json()
  const offered = digital.requests ?? []
  const chosen = offered.find(({ protocol }) => job.protocols.includes(protocol))
  if (!chosen) throw new Error(`no request in a protocol of ${job.protocols}: ${JSON.stringify(offered)}`)
  // The browser hands the wallet the request's data and the page's origin.
  const client = new Openid4vpClient({ callbacks: callbacks(job) })
  const parsed = client.parseOpenid4vpAuthorizationRequest({ authorizationRequest: chosen.data })
  const resolved = await client.resolveOpenId4vpAuthorizationRequest({
    authorizationRequestPayload: parsed.params,
    origin: job.origin,
  })
  const request = resolved.authorizationRequestPayload
  const credentialQuery = credentialQueryOf(request, job.credential.vct)
  // OpenID4VP 1.0, DC API Response: over the API the audience is the origin prefixed with
  // `origin:`, "even for signed requests" (the client's effective client ID is the request's
  // client_id when one is signed in).
  const audience = `origin:${job.origin}`
  const vpToken = {
    [credentialQuery.id]: [await presentation(job, credentialQuery, audience, request.nonce)],
  }
  // dc_api.jwt: the client encrypts the response to the request's key (jose, through
  // encryptJwe), and the DigitalCredential's data is {"response": "<JWE>"}.
  const encrypted = request.response_mode === 'dc_api.jwt'
  const response = await client.createOpenid4vpAuthorizationResponse({
    authorizationRequestPayload: request,
    authorizationResponsePayload: { vp_token: vpToken },
    origin: job.origin,
    jarm: encrypted
      ? {
          encryption: { nonce: crypto.randomBytes(16).toString('base64url') },
          serverMetadata: JARM_SERVER_METADATA,
        }
      : undefined,
  })
  const data = encrypted
    ? { response: job.tamper ? tampered(response.jarm.responseJwt, job.tamper) : response.jarm.responseJwt }
    : { vp_token: response.authorizationResponsePayload.vp_token }
  // The page's script posts what the browser returned, from the page's origin.
  const body = JSON.stringify({ protocol: chosen.protocol, data })
  const post = () =>
    noRedirectFetch(job.response_url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', Origin: job.origin },
      body,
    })
  const posted = await post()
  const replayed = job.replay ? await post() : undefined
  const jweHeader = encrypted
    ? JSON.parse(Buffer.from(response.jarm.responseJwt.split('.')[0], 'base64url').toString())
    : undefined
  return {
    request: { ...summary(resolved, parsed), protocol: chosen.protocol, jwe_header: jweHeader },
    status: posted.status,
    body: await bodyOf(posted),
    replay: replayed ? { status: replayed.status, body: await bodyOf(replayed) } : undefined,
  }
}

// A changed response: "ciphertext" flips one character of the JWE's ciphertext.
function tampered(jwe, how) {
  const parts = jwe.split('.')
  if (how === 'ciphertext') {
    const text = parts[3]
    parts[3] = text.slice(0, 5) + (text[5] === 'A' ? 'B' : 'A') + text.slice(6)
    return parts.join('.')
  }
  throw new Error(`unknown tampering ${how}`)
}

async function bodyOf(response) {
  const text = await response.text()
  try {
    return JSON.parse(text)
  } catch {
    return { text }
  }
}

async function main() {
  const job = await readJob()
  const result = job.kind === 'dc_api' ? await answerDcApi(job) : await answerLink(job)
  process.stdout.write(JSON.stringify(result))
}

main().catch((error) => {
  const detail = error.errorResponse
    ? `${error.message}: ${JSON.stringify(error.errorResponse)}`
    : (error.stack ?? String(error))
  const cause = error.cause ? ` (cause: ${error.cause.message ?? error.cause})` : ''
  process.stdout.write(JSON.stringify({ error: `${detail}${cause}` }))
  process.exit(1)
})
