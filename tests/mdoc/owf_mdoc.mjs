// The OpenWallet Foundation's mdoc library (@owf/mdoc) as an independent issuer and wallet:
// reads one JSON job on stdin, signs an mdoc with the given document signer, and answers on
// stdout with the DeviceResponse a wallet would put in an OpenID4VP vp_token (base64url), its
// device signature made over the SessionTranscript the library itself builds.
import crypto from 'node:crypto'
import {
  CoseKey,
  DateOnly,
  DeviceKey,
  DeviceRequest,
  DocRequest,
  Holder,
  IssuerSigned,
  Issuer,
  ItemsRequest,
  SessionTranscript,
  SignatureAlgorithm,
} from '@owf/mdoc'

const HASHES = { 'P-256': 'sha256', 'P-384': 'sha384', 'P-521': 'sha512' }
const CURVES = { 1: 'P-256', 2: 'P-384', 3: 'P-521' }

// @owf/mdoc 0.6.0 maps JWK curve names to COSE as 'P-256', 'p-384' and 'p-521': spell them so.
function coseKey(jwk) {
  return CoseKey.fromJwk({ ...jwk, crv: jwk.crv === 'P-256' ? jwk.crv : jwk.crv.toLowerCase() })
}

// Only what the library calls to issue and to sign a device response: node's own crypto.
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
      verify: () => {
        throw new Error('not a verifier')
      },
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

async function main() {
  const job = JSON.parse(await new Promise((resolve) => {
    let text = ''
    process.stdin.on('data', (chunk) => { text += chunk })
    process.stdin.on('end', () => resolve(text))
  }))
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
