// A wallet built to draft 15 of OpenID4VCI, npm @sphereon/oid4vci-client 0.20, takes a
// credential unaided: it finds the issuer metadata at <issuer>/.well-known/openid-credential-issuer
// and sends its key proof as `proof` (singular). The credential is then verified like the
// other wallets' (wallet_vci.mjs `verify`), by @sd-jwt/sd-jwt-vc.
//
// Job on stdin (JSON): {"offer_url": "...", "tx_code": "123456"?}
// Prints {"credential", "holder_jwk", "holder_private_jwk", "version"} on stdout; on failure {"error"} and exit 1.

import crypto from 'node:crypto'
import { OpenID4VCIClientV1_0_15 } from '@sphereon/oid4vci-client'

const b64url = (value) => Buffer.from(value).toString('base64url')

const REDIRECT_URI = 'https://wallet.example.test/callback'
const CLIENT_ID = 'sphereon-wallet-under-test'

async function approveInBrowser(authorizationRequestUrl) {
  const page = await fetch(authorizationRequestUrl)
  if (!page.ok) throw new Error(`authorization page: HTTP ${page.status} ${await page.text()}`)
  const cookie = (page.headers.get('set-cookie') || '').split(';')[0]
  const html = await page.text()
  const form = new URLSearchParams()
  for (const [, name, value] of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    form.set(name, value.replaceAll('&#34;', '"').replaceAll('&amp;', '&'))
  }
  form.set('decision', 'continue')
  const action = new URL(authorizationRequestUrl)
  action.search = ''
  const answer = await fetch(action, { method: 'POST', body: form, headers: { cookie }, redirect: 'manual' })
  if (answer.status !== 303) throw new Error(`authorization page POST: HTTP ${answer.status}`)
  return answer.headers.get('location')
}

async function receive(job) {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const publicJwk = publicKey.export({ format: 'jwk' })
  // The offer names both grants; this library then takes the authorization code flow
  // (pushed request with PKCE, as the issuer requires), so the person approves on the
  // issuer's page, done here with fetch as a browser would.
  const client = await OpenID4VCIClientV1_0_15.fromURI({
    uri: job.offer_url,
    retrieveServerMetadata: true,
    resolveOfferUri: true,
    clientId: CLIENT_ID,
    createAuthorizationRequestURL: false,
  })
  const [offered] = client.getCredentialOfferConfigurationIds()
  // No scope given: the library asks for its default, "openid", beside the offer's
  // issuer_state, as a wallet left to itself does.
  await client.createAuthorizationRequestUrl({
    authorizationRequest: { redirectUri: REDIRECT_URI, clientId: CLIENT_ID },
  })
  const redirect = await approveInBrowser(client.authorizationURL)
  const code = new URL(redirect).searchParams.get('code')
  await client.acquireAccessToken({ code, redirectUri: REDIRECT_URI })
  const response = await client.acquireCredentials({
    credentialConfigurationId: offered,
    format: 'dc+sd-jwt',
    alg: 'ES256',
    jwk: publicJwk,
    proofCallbacks: {
      // The library hands over the header and payload; the wallet signs them with its key.
      signCallback: async (jwt) => {
        const header = { ...jwt.header, alg: 'ES256', jwk: publicJwk }
        delete header.kid
        const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(jwt.payload))}`
        const signature = crypto.sign('sha256', Buffer.from(input), {
          key: privateKey,
          dsaEncoding: 'ieee-p1363',
        })
        return `${input}.${b64url(signature)}`
      },
    },
  })
  const credential = response.credential ?? response.credentials?.[0]?.credential
  if (typeof credential !== 'string') throw new Error(`no credential in ${JSON.stringify(response)}`)
  // The private key too, so the test can present the credential as this wallet's holder.
  return {
    credential,
    holder_jwk: publicJwk,
    holder_private_jwk: privateKey.export({ format: 'jwk' }),
    version: client.version(),
  }
}

async function main() {
  const chunks = []
  for await (const chunk of process.stdin) chunks.push(chunk)
  const result = await receive(JSON.parse(Buffer.concat(chunks).toString('utf8')))
  process.stdout.write(JSON.stringify(result))
}

main().catch((error) => {
  process.stdout.write(JSON.stringify({ error: String(error && (error.stack || error)) }))
  process.exit(1)
})
