// The independent wallet of the org-iso-mdoc tests (ISO/IEC 18013-7 Annex C): reads one JSON
// job on stdin. @auth0/mdl issues an mdoc with the given document signer and answers the
// service's DeviceRequest with a DeviceResponse signed over the dcapi SessionTranscript this
// script builds itself from the request; @hpke/core seals it to the request's recipient key.
// A job with "device_response_hex" only seals that DeviceResponse (made by another library).
import crypto from 'node:crypto'
import { Document, DeviceResponse } from '@auth0/mdl'
import { Aes128Gcm, CipherSuite, DhkemP256HkdfSha256, HkdfSha256 } from '@hpke/core'
import { Decoder, Encoder, Tag } from 'cbor-x'

const cbor = new Encoder({ tagUint8Array: false, useRecords: false, mapsAsObjects: false, variableMapSize: true })
const decoder = new Decoder({ mapsAsObjects: false })
const decode = (bytes) => decoder.decode(bytes)
const b64url = (bytes) => Buffer.from(bytes).toString('base64url')
const fromB64url = (text) => new Uint8Array(Buffer.from(text, 'base64url'))

// Annex C: SessionTranscript = [null, null, ["dcapi", sha256(cbor([encryptionInfoB64, origin]))]]
function sessionTranscript(encryptionInfoB64, origin) {
  const hash = crypto.createHash('sha256').update(cbor.encode([encryptionInfoB64, origin])).digest()
  return cbor.encode([null, null, ['dcapi', new Uint8Array(hash)]])
}

function itemsRequested(deviceRequestB64) {
  const request = decode(fromB64url(deviceRequestB64))
  const docRequest = request.get('docRequests')[0]
  const itemsTag = docRequest.get('itemsRequest')
  return { version: request.get('version'), items: decode(itemsTag.value), readerAuth: docRequest.get('readerAuth') }
}

async function seal(deviceResponse, encryptionInfoB64, transcript, recipientOverride) {
  const info = decode(fromB64url(encryptionInfoB64))
  const coseKey = info[1].get('recipientPublicKey')
  let point = Buffer.concat([Buffer.from([4]), coseKey.get(-2), coseKey.get(-3)])
  if (recipientOverride) point = Buffer.from(recipientOverride, 'hex')
  const suite = new CipherSuite({ kem: new DhkemP256HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes128Gcm() })
  const recipientPublicKey = await suite.kem.deserializePublicKey(new Uint8Array(point).buffer)
  const sender = await suite.createSenderContext({ recipientPublicKey, info: new Uint8Array(transcript).buffer })
  const cipherText = new Uint8Array(await sender.seal(new Uint8Array(deviceResponse).buffer))
  const enc = new Uint8Array(sender.enc)
  const answer = cbor.encode(['dcapi', new Map([['enc', enc], ['cipherText', cipherText]])])
  return { response: b64url(answer) }
}

async function main() {
  const job = JSON.parse(await new Promise((resolve) => {
    let text = ''
    process.stdin.on('data', (chunk) => { text += chunk })
    process.stdin.on('end', () => resolve(text))
  }))
  const data = job.request
  const transcript = sessionTranscript(data.encryptionInfo, job.origin)
  if (job.device_response_hex) {
    const sealed = await seal(Buffer.from(job.device_response_hex, 'hex'), data.encryptionInfo, transcript, job.recipient_hex)
    process.stdout.write(JSON.stringify({ ...sealed, transcript_hex: Buffer.from(transcript).toString('hex') }))
    return
  }
  const { version, items } = itemsRequested(data.deviceRequest)
  const doctype = job.doctype ?? items.get('docType')
  const issuerKey = crypto.createPrivateKey(job.issuer_key_pem).export({ format: 'jwk' })
  const deviceKey = crypto.createPrivateKey(job.device_key_pem).export({ format: 'jwk' })
  const { d, ...devicePublic } = deviceKey
  const document = new Document(doctype)
  for (const [namespace, values] of Object.entries(job.namespaces)) {
    document.addIssuerNameSpace(namespace, values)
  }
  const issued = await document
    .useDigestAlgorithm('SHA-256')
    .addValidityInfo({ signed: new Date(Date.now() - 60000), validFrom: new Date(Date.now() - 60000), validUntil: new Date(Date.now() + 30 * 86400000) })
    .addDeviceKeyInfo({ deviceKey: devicePublic })
    .sign({ issuerPrivateKey: issuerKey, issuerCertificate: job.issuer_certificate_pem, alg: 'ES256' })
  // Answer exactly what the DeviceRequest asks for (plus any extra the job names).
  const fields = []
  for (const [namespace, elements] of items.get('nameSpaces')) {
    for (const [element, retain] of elements) {
      fields.push({ path: [`$['${namespace}']['${element}']`], intent_to_retain: retain })
    }
  }
  for (const [namespace, element] of job.extra ?? []) {
    fields.push({ path: [`$['${namespace}']['${element}']`], intent_to_retain: false })
  }
  const { MDoc } = await import('@auth0/mdl')
  const mdoc = new MDoc([issued])
  const response = await DeviceResponse.from(mdoc)
    .usingPresentationDefinition({
      id: 'annex-c',
      input_descriptors: [{ id: doctype, format: { mso_mdoc: { alg: ['ES256'] } }, constraints: { limit_disclosure: 'required', fields } }],
    })
    .usingSessionTranscriptBytes(cbor.encode(new Tag(transcript, 24)))
    .authenticateWithSignature(deviceKey, 'ES256')
    .sign()
  const sealed = await seal(response.encode(), data.encryptionInfo, transcript, job.recipient_hex)
  process.stdout.write(JSON.stringify({
    ...sealed,
    request_version: version,
    requested: Object.fromEntries([...items.get('nameSpaces')].map(([ns, els]) => [ns, Object.fromEntries(els)])),
    transcript_hex: Buffer.from(transcript).toString('hex'),
  }))
}

main().catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`)
  process.exit(1)
})
