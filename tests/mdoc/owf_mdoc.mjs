// The OpenWallet Foundation's mdoc library (@owf/mdoc) as an independent issuer, wallet and
// reader: reads one JSON job on stdin, signs an mdoc with the given document signer, and answers on
// stdout with the DeviceResponse a wallet would put in an OpenID4VP vp_token (base64url), its
// device signature made over the SessionTranscript the library itself builds. With
// "verify": true it is the reader instead: the library's Verifier checks a DeviceResponse
// against the given IACA roots and the answer lists its verdict per check and what it read.
import crypto from 'node:crypto'
import {
  CoseKey,
  DateOnly,
  DeviceKey,
  DeviceRequest,
  DeviceResponse,
  DocRequest,
  Holder,
  IssuerSigned,
  Issuer,
  ItemsRequest,
  SessionTranscript,
  SignatureAlgorithm,
  Verifier,
} from '@owf/mdoc'

const HASHES = { 'P-256': 'sha256', 'P-384': 'sha384', 'P-521': 'sha512' }
const CURVES = { 1: 'P-256', 2: 'P-384', 3: 'P-521' }

// @owf/mdoc 0.6.0 maps JWK curve names to COSE as 'P-256', 'p-384' and 'p-521': spell them so.
function coseKey(jwk) {
  return CoseKey.fromJwk({ ...jwk, crv: jwk.crv === 'P-256' ? jwk.crv : jwk.crv.toLowerCase() })
}

// A COSE EC2 key (public part) as the key node's crypto verifies with.
function publicKeyOf(key) {
  const b64 = (bytes) => Buffer.from(bytes).toString('base64url')
  return crypto.createPublicKey({
    key: { kty: 'EC', crv: CURVES[key.curve], x: b64(key.x), y: b64(key.y) },
    format: 'jwk',
  })
}

function certificateOf(bytes) {
  return new crypto.X509Certificate(Buffer.from(bytes))
}

// Node renders a distinguished name one "TYPE=value" attribute a line.
function nameField(name, field) {
  return name.split('\n').filter((line) => line.startsWith(`${field}=`)).map((line) => line.slice(field.length + 1))
}

// The X.509 primitives the library asks of its host; which checks to make, and when, is the
// library's (IssuerAuth.verify): node's crypto only answers them.
const x509 = {
  getIssuerNameField: ({ certificate, field }) => nameField(certificateOf(certificate).issuer, field),
  getPublicKey: ({ certificate }) => {
    const jwk = certificateOf(certificate).publicKey.export({ format: 'jwk' })
    return coseKey(jwk)
  },
  // Each certificate of the x5chain is signed by the next; the last by a trusted root (or is
  // one); every one of them valid at `now`.
  verifyCertificateChain: ({ trustedCertificates, x5chain, now }) => {
    const chain = x5chain.map(certificateOf)
    const roots = trustedCertificates.map(certificateOf)
    const at = now ?? new Date()
    chain.forEach((certificate, index) => {
      const notBefore = new Date(certificate.validFrom)
      const notAfter = new Date(certificate.validTo)
      if (at < notBefore || at > notAfter) throw new Error(`${certificate.subject} is not valid now`)
      const next = chain[index + 1]
      if (next && !(certificate.checkIssued(next) && certificate.verify(next.publicKey))) {
        throw new Error(`${certificate.subject} is not signed by ${next.subject}`)
      }
    })
    const last = chain[chain.length - 1]
    const anchored = roots.some(
      (root) => root.raw.equals(last.raw) || (last.checkIssued(root) && last.verify(root.publicKey))
    )
    if (!anchored) throw new Error(`${last.issuer} is not a trusted certificate`)
  },
  getCertificateData: ({ certificate }) => {
    const parsed = certificateOf(certificate)
    return {
      issuerName: parsed.issuer,
      subjectName: parsed.subject,
      serialNumber: parsed.serialNumber,
      thumbprint: parsed.fingerprint256,
      notBefore: new Date(parsed.validFrom),
      notAfter: new Date(parsed.validTo),
      pem: parsed.toString(),
    }
  },
}

// Only what the library calls to issue, to sign a device response and to verify one: node's
// own crypto.
const context = {
  crypto: {
    random: (length) => crypto.getRandomValues(new Uint8Array(length)),
    digest: async ({ digestAlgorithm, bytes }) =>
      new Uint8Array(await crypto.subtle.digest(digestAlgorithm, bytes)),
    calculateEphemeralMacKey: () => {
      throw new Error('MAC device authentication is not used here')
    },
  },
  cose: {
    sign1: {
      sign: ({ toBeSigned, key }) => {
        const jwk = { ...key.jwk, crv: CURVES[key.curve] }
        const privateKey = crypto.createPrivateKey({ key: jwk, format: 'jwk' })
        return new Uint8Array(
          crypto.sign(HASHES[jwk.crv], toBeSigned, { key: privateKey, dsaEncoding: 'ieee-p1363' })
        )
      },
      verify: ({ sign1, key }) =>
        crypto.verify(HASHES[CURVES[key.curve]], sign1.toBeSigned, {
          key: publicKeyOf(key),
          dsaEncoding: 'ieee-p1363',
        }, sign1.signature),
    },
    mac0: {
      sign: () => {
        throw new Error('not used')
      },
      verify: () => {
        throw new Error('not used')
      },
    },
  },
  x509,
}

function privateJwk(pem) {
  return crypto.createPrivateKey(pem).export({ format: 'jwk' })
}

function publicJwk(pem) {
  const { d, ...rest } = privateJwk(pem)
  return rest
}

function der(pem) {
  return new Uint8Array(new crypto.X509Certificate(pem).raw)
}

// JSON cannot say "date" or "bytes": {"$date": "YYYY-MM-DD"} is a full-date (tag 1004),
// {"$datetime": "...Z"} a tdate, {"$hex": "..."} a byte string.
function element(value) {
  if (Array.isArray(value)) return value.map(element)
  if (value && typeof value === 'object') {
    if ('$date' in value) return new DateOnly(value.$date)
    if ('$datetime' in value) return new Date(value.$datetime)
    if ('$hex' in value) return new Uint8Array(Buffer.from(value.$hex, 'hex'))
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, element(v)]))
  }
  return value
}

async function sessionTranscript(job) {
  const thumbprint = job.jwk_thumbprint_hex
    ? new Uint8Array(Buffer.from(job.jwk_thumbprint_hex, 'hex'))
    : undefined
  if (job.session_transcript_hex) return new Uint8Array(Buffer.from(job.session_transcript_hex, 'hex'))
  if (job.origin) {
    return SessionTranscript.forOid4VpDcApi({ origin: job.origin, nonce: job.nonce, jwkThumbprint: thumbprint }, context)
  }
  return SessionTranscript.forOid4Vp(
    { clientId: job.client_id, nonce: job.nonce, jwkThumbprint: thumbprint, responseUri: job.response_uri },
    context
  )
}

async function issueHere(job) {
  const issuer = new Issuer(job.doctype, context)
  for (const [namespace, values] of Object.entries(job.namespaces)) {
    issuer.addIssuerNamespace(namespace, element(values))
  }
  const issuerSigned = await issuer.sign({
    signingKey: coseKey(privateJwk(job.issuer_key_pem)),
    certificates: job.issuer_chain_pems.map(der),
    algorithm: SignatureAlgorithm[job.alg],
    digestAlgorithm: job.digest_algorithm ?? 'SHA-256',
    deviceKeyInfo: { deviceKey: DeviceKey.fromJwk(publicJwk(job.device_key_pem)) },
    validityInfo: {
      signed: new Date(job.signed),
      validFrom: new Date(job.valid_from),
      validUntil: new Date(job.valid_until),
    },
  })
  // As issuance over OpenID4VCI hands it to the wallet.
  return IssuerSigned.fromEncodedForOid4Vci(issuerSigned.encodedForOid4Vci)
}

// JSON for what the library read: dates as their ISO text, byte strings as hex.
function plain(value) {
  if (value instanceof Uint8Array) return { $hex: Buffer.from(value).toString('hex') }
  if (value instanceof Date) return value.toISOString()
  if (value instanceof DateOnly) return value.toString()
  if (Array.isArray(value)) return value.map(plain)
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [k, plain(v)]))
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]))
  }
  return value
}

// The library's Verifier over a DeviceResponse: every check it reports is kept (the default
// callback would stop at the first failed one), so a refusal names all that failed.
async function verify(job) {
  const checks = []
  const deviceResponse = DeviceResponse.fromEncodedForOid4Vp(job.device_response)
  await Verifier.verifyDeviceResponse(
    {
      deviceResponse,
      sessionTranscript: new Uint8Array(Buffer.from(job.transcript_hex, 'hex')),
      trustedCertificates: job.trusted_pems.map(der),
      onCheck: (assessment) => checks.push(assessment),
    },
    context
  )
  const documents = (deviceResponse.documents ?? []).map((document) => ({
    doctype: document.docType,
    namespaces: Object.fromEntries(
      [...document.issuerSigned.issuerNamespaces.issuerNamespaces.keys()].map((ns) => [
        ns,
        plain(document.issuerSigned.getPrettyClaims(ns)),
      ])
    ),
  }))
  return {
    failed: checks.filter((c) => c.status === 'FAILED').map((c) => `${c.check}: ${c.reason ?? ''}`),
    passed: checks.filter((c) => c.status === 'PASSED').map((c) => c.check),
    documents,
  }
}

async function main() {
  const job = JSON.parse(await new Promise((resolve) => {
    let text = ''
    process.stdin.on('data', (chunk) => { text += chunk })
    process.stdin.on('end', () => resolve(text))
  }))
  if (job.verify) {
    process.stdout.write(JSON.stringify(await verify(job)))
    return
  }
  if (job.transcript_only) {
    const transcript = await sessionTranscript(job)
    process.stdout.write(JSON.stringify({ transcript_hex: Buffer.from(transcript.encode()).toString('hex') }))
    return
  }
  // A credential another issuer made (Verity's, over OpenID4VCI), or one signed here.
  const credential = job.issuer_signed
    ? IssuerSigned.fromEncodedForOid4Vci(job.issuer_signed)
    : await issueHere(job)
  const disclose = job.disclose ?? Object.fromEntries(
    Object.entries(job.namespaces).map(([ns, values]) => [ns, Object.keys(values)])
  )
  const deviceRequest = DeviceRequest.create({
    docRequests: [
      DocRequest.create({
        itemsRequest: ItemsRequest.create({
          docType: job.doctype,
          namespaces: Object.fromEntries(
            Object.entries(disclose).map(([ns, names]) => [ns, Object.fromEntries(names.map((n) => [n, false]))])
          ),
        }),
      }),
    ],
  })
  const deviceResponse = await Holder.createDeviceResponseForDeviceRequest(
    {
      deviceRequest,
      issuerSigned: [credential],
      sessionTranscript: await sessionTranscript(job),
      // The key's alg is what the library writes as the signature's protected alg header;
      // wallet_key_pem (a key the issuer did not certify) is for the negative tests.
      signature: {
        signingKey: CoseKey.fromJwk({ ...privateJwk(job.wallet_key_pem ?? job.device_key_pem), alg: 'ES256' }),
      },
    },
    context
  )
  process.stdout.write(JSON.stringify({ vp_token: deviceResponse.encodedForOid4Vp }))
}

main().catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`)
  process.exit(1)
})
