// @auth0/mdl as an independent mdoc reader: reads one JSON job on stdin (a base64url
// DeviceResponse, the SessionTranscript it was signed over, the IACA roots to trust) and
// answers with the issuer-signed elements of its one document, after the library checked the
// issuer signature and chain, the digests, the validity and the device signature.
import { Verifier } from '@auth0/mdl'

const job = JSON.parse(await new Promise((resolve) => {
  let text = ''
  process.stdin.on('data', (chunk) => { text += chunk })
  process.stdin.on('end', () => resolve(text))
}))
try {
  const verifier = new Verifier(job.trusted_pems)
  const mdoc = await verifier.verify(Buffer.from(job.device_response, 'base64url'), {
    encodedSessionTranscript: Buffer.from(job.transcript_hex, 'hex'),
  })
  const document = mdoc.documents[0]
  const namespaces = Object.fromEntries(
    document.issuerSignedNameSpaces.map((ns) => [ns, document.getIssuerNameSpace(ns)])
  )
  process.stdout.write(JSON.stringify({ doctype: document.docType, namespaces }))
} catch (error) {
  process.stderr.write(`${error?.stack ?? error}\n`)
  process.exit(1)
}
