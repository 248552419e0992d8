// did-jwt-vc as an independent reader and holder of a credential Verity issued.
//
// Reads one JSON job on stdin:
//   {"credential", "issuer", "jwks"} -> {"payload"}: verifyCredential checks the signature,
//     the dates and the VCDM 1.1 shape. The issuer is an HTTPS credential issuer, not a DID,
//     and did-jwt resolves only DIDs: the keys come from the issuer's jwt-vc-issuer metadata
//     as a `didAuthenticator`, the option did-jwt offers a verifier that resolved the issuer
//     itself (its `issuer` must parse as a DID URL: the key's did:jwk stands there).
//   {"present", "holder_jwk", "audience", "nonce"} -> {"vp"}: the presentation a wallet
//     makes with the holder key the credential is bound to, under the did:jwk the
//     credential's `sub` names.
//   {"status_list", "jwks", "index"} -> {"payload", "revoked"}: the BitstringStatusListCredential
//     checked by did-jwt-vc as above, its encodedList expanded by Digital Bazaar's
//     vc-bitstring-status-list and read at `index`.
import { decodeList } from '@digitalbazaar/vc-bitstring-status-list'
import { decodeJWT, ES256Signer } from 'did-jwt'
import { createVerifiablePresentationJwt, verifyCredential } from 'did-jwt-vc'

const job = JSON.parse(await new Promise((resolve) => {
  let text = ''
  process.stdin.on('data', (chunk) => { text += chunk })
  process.stdin.on('end', () => resolve(text))
}))

function authenticatorOf(jwks) {
  const methods = jwks.keys.map((jwk) => {
    const did = 'did:jwk:' + Buffer.from(JSON.stringify(jwk)).toString('base64url')
    return { id: `${did}#0`, type: 'JsonWebKey2020', controller: did, publicKeyJwk: jwk }
  })
  return { authenticators: methods, issuer: methods[0].controller, didResolutionResult: {} }
}

const refuseResolving = {
  resolve: async (did) => {
    throw new Error(`nothing is resolved here (${did})`)
  },
}

try {
  if (job.present) {
    const { d } = job.holder_jwk
    const did = decodeJWT(job.present).payload.sub
    const signer = ES256Signer(new Uint8Array(Buffer.from(d, 'base64url')))
    const vp = await createVerifiablePresentationJwt(
      {
        vp: {
          '@context': ['https://www.w3.org/2018/credentials/v1'],
          type: ['VerifiablePresentation'],
          verifiableCredential: [job.present],
        },
      },
      { did, signer, alg: 'ES256', kid: `${did}#0` },
      { challenge: job.nonce, domain: job.audience }
    )
    process.stdout.write(JSON.stringify({ vp }))
  } else if (job.status_list) {
    const verified = await verifyCredential(job.status_list, refuseResolving, {
      didAuthenticator: authenticatorOf(job.jwks),
    })
    const list = await decodeList({ encodedList: verified.payload.vc.credentialSubject.encodedList })
    process.stdout.write(JSON.stringify({ payload: verified.payload, revoked: list.getStatus(job.index) }))
  } else {
    const verified = await verifyCredential(job.credential, refuseResolving, {
      didAuthenticator: authenticatorOf(job.jwks),
    })
    if (verified.payload.iss !== job.issuer) throw new Error(`issued by ${verified.payload.iss}`)
    process.stdout.write(JSON.stringify({ payload: verified.payload }))
  }
} catch (error) {
  process.stderr.write(`${error?.stack ?? error}\n`)
  process.exit(1)
}
