// Issuer and holder of W3C VC-JWT credentials for the verifier's tests, built on libraries the
// verifier shares no code with: the Decentralized Identity Foundation's did-jwt-vc (VCDM 1.1 JWT
// credentials and presentations) and did-jwt (JWS signing; VCDM 2.0 vc+jwt / vp+jwt payloads),
// Digital Bazaar's vc-bitstring-status-list (W3C Bitstring Status List credentials), and jose
// for what the others refuse to make (unsigned and HMAC tokens).
//
// Reads {"jobs": [...]} on stdin, prints {"results": [...]} (one per job, in order); on failure
// {"error": "..."} and exit code 1. With --lines it stays up for a test session instead: one
// such request per line in, one answer per line out (an error answers that line only). Jobs:
//   {"kind": "key", "type": "P-256" | "Ed25519"}
//       -> {"jwk" (private), "alg", "did_jwk", "did_key"}
//   {"kind": "vc", "model": "1.1" | "2.0", "signer": {key, "did", "kid"?, "header"?},
//    "credential": {...}}
//       -> {"jwt"}: 1.1 through did-jwt-vc (it maps issuer, issuanceDate, expirationDate,
//          credentialSubject.id and id to JWT claims); 2.0 as the payload itself, typ vc+jwt.
//   {"kind": "vp", "model": ..., "signer": {...}, "credential": "<jwt>", "nonce", "aud",
//    "verifiableCredential"?: [...raw entries instead of the credential]}
//       -> {"jwt"}: 1.1 through did-jwt-vc (nonce from challenge, aud from domain); 2.0 with
//          the credential enveloped in a data:application/vc+jwt URL, typ vp+jwt.
//   {"kind": "jose", "alg": "none" | "HS256", "header": {...}, "payload": {...}} -> {"jwt"}
//   {"kind": "status_list", "model", "id", "purpose", "length", "set": [index...]}
//       -> {"credential"}: an unsigned BitstringStatusListCredential.

import crypto from 'node:crypto'
import readline from 'node:readline'
import { createCredential, createList, VC_BSL_VC_V1_CONTEXT } from '@digitalbazaar/vc-bitstring-status-list'
import { bytesToMultibase, createJWT, EdDSASigner, ES256Signer } from 'did-jwt'
import { createVerifiableCredentialJwt, createVerifiablePresentationJwt } from 'did-jwt-vc'
import { SignJWT, UnsecuredJWT } from 'jose'

const V1 = 'https://www.w3.org/2018/credentials/v1'
const V2 = 'https://www.w3.org/ns/credentials/v2'

async function readJob() {
  const chunks = []
  for await (const chunk of process.stdin) chunks.push(chunk)
  return JSON.parse(Buffer.concat(chunks).toString('utf8'))
}

const fromB64url = (text) => new Uint8Array(Buffer.from(text, 'base64url'))

function makeKey({ type }) {
  const { privateKey } =
    type === 'Ed25519'
      ? crypto.generateKeyPairSync('ed25519')
      : crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const jwk = privateKey.export({ format: 'jwk' })
  const { d, ...publicJwk } = jwk
  const didJwk = 'did:jwk:' + Buffer.from(JSON.stringify(publicJwk)).toString('base64url')
  let didKey
  if (type === 'Ed25519') {
    didKey = 'did:key:' + bytesToMultibase(fromB64url(jwk.x), 'base58btc', 'ed25519-pub')
  } else {
    // A did:key P-256 key is the compressed SEC1 point: 02/03 by the parity of y, then x.
    const y = fromB64url(jwk.y)
    const compressed = new Uint8Array([y[y.length - 1] % 2 ? 3 : 2, ...fromB64url(jwk.x)])
    didKey = 'did:key:' + bytesToMultibase(compressed, 'base58btc', 'p256-pub')
  }
  return { jwk, alg: type === 'Ed25519' ? 'EdDSA' : 'ES256', did_jwk: didJwk, did_key: didKey }
}

function signerOf({ jwk, alg, did }) {
  const signer = alg === 'EdDSA' ? EdDSASigner(fromB64url(jwk.d)) : ES256Signer(fromB64url(jwk.d))
  return { did, signer, alg }
}

function headerOf(signer, typ) {
  const header = { ...signer.header, alg: signer.alg }
  if (typ) header.typ = typ
  if (signer.kid) header.kid = signer.kid
  return header
}

async function makeCredential({ model, signer, credential }) {
  const issuer = signerOf(signer)
  if (model === '1.1') {
    return { jwt: await createVerifiableCredentialJwt(credential, issuer, { header: headerOf(signer) }) }
  }
  const jwt = await createJWT(credential, { issuer: issuer.did, signer: issuer.signer }, headerOf(signer, 'vc+jwt'))
  return { jwt }
}

async function makePresentation({ model, signer, credential, nonce, aud, verifiableCredential }) {
  const holder = signerOf(signer)
  if (model === '1.1') {
    const vp = {
      '@context': [V1],
      type: ['VerifiablePresentation'],
      verifiableCredential: verifiableCredential ?? [credential],
    }
    const options = { challenge: nonce, domain: aud, header: headerOf(signer) }
    return { jwt: await createVerifiablePresentationJwt({ vp }, holder, options) }
  }
  const payload = {
    '@context': [V2],
    type: 'VerifiablePresentation',
    holder: holder.did,
    verifiableCredential: verifiableCredential ?? [
      { '@context': V2, type: 'EnvelopedVerifiableCredential', id: `data:application/vc+jwt,${credential}` },
    ],
    nonce,
    aud,
  }
  const jwt = await createJWT(payload, { issuer: holder.did, signer: holder.signer }, headerOf(signer, 'vp+jwt'))
  return { jwt }
}

async function makeJose({ alg, header, payload }) {
  if (alg === 'none') return { jwt: new UnsecuredJWT(payload).encode() }
  const secret = crypto.randomBytes(32)
  return { jwt: await new SignJWT(payload).setProtectedHeader({ ...header, alg }).sign(secret) }
}

async function makeStatusList({ model, id, purpose, length, set }) {
  const list = await createList({ length })
  for (const index of set) list.setStatus(index, true)
  const context = model === '1.1' ? [...VC_BSL_VC_V1_CONTEXT] : undefined
  return { credential: await createCredential({ id, list, statusPurpose: purpose, context }) }
}

const KINDS = {
  key: makeKey,
  vc: makeCredential,
  vp: makePresentation,
  jose: makeJose,
  status_list: makeStatusList,
}

async function answer({ jobs }) {
  const results = []
  for (const job of jobs) results.push(await KINDS[job.kind](job))
  return { results }
}

const failure = (error) => ({ error: String(error?.stack ?? error) })

if (process.argv.includes('--lines')) {
  for await (const line of readline.createInterface({ input: process.stdin })) {
    const reply = await Promise.resolve(line).then((text) => answer(JSON.parse(text))).catch(failure)
    process.stdout.write(JSON.stringify(reply) + '\n')
  }
} else {
  try {
    process.stdout.write(JSON.stringify(await answer(await readJob())))
  } catch (error) {
    process.stdout.write(JSON.stringify(failure(error)))
    process.exit(1)
  }
}
