// A test wallet built on @sd-jwt/sd-jwt-vc: it issues an SD-JWT VC and presents it with a
// key binding JWT, so the verifier is checked against credentials it did not produce itself.
//
// Reads one JSON job on stdin:
//   issuer_jwk, holder_jwk     private JWKs (EC P-256/384/521 or OKP Ed25519)
//   issuer_alg, holder_alg     "ES256" (default), "ES384", "ES512" or "EdDSA"
//   iss, vct, iat, exp, status credential claims the issuer always shows
//   claims, frame              further claims and their @sd-jwt disclosure frame
//   present                    @sd-jwt presentation frame: which disclosures to reveal
//   aud, nonce, kb_iat         key binding JWT claims
//   kb_extra                   further key binding JWT claims (transaction_data_hashes, ...)
// Prints {"issued": "<SD-JWT>", "presentation": "<SD-JWT+KB>"} on stdout.
import { createHash, createPrivateKey, randomBytes, sign } from 'node:crypto';
import { ES256, ES384, ES512 } from '@sd-jwt/crypto-nodejs';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';

const ECDSA = { ES256, ES384, ES512 };
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth'];

async function signerFor(jwk, alg) {
  if (alg in ECDSA) {
    return ECDSA[alg].getSigner(jwk);
  }
  if (alg === 'EdDSA') {
    const key = createPrivateKey({ key: jwk, format: 'jwk' });
    return async (data) => sign(null, Buffer.from(data), key).toString('base64url');
  }
  throw new Error(`unsupported alg ${alg}`);
}

function publicJwk(jwk) {
  return Object.fromEntries(Object.entries(jwk).filter(([name]) => !PRIVATE_MEMBERS.includes(name)));
}

async function readJob() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

async function main() {
  const job = await readJob();
  const issuerAlg = job.issuer_alg ?? 'ES256';
  const holderAlg = job.holder_alg ?? 'ES256';
  const wallet = new SDJwtVcInstance({
    signer: await signerFor(job.issuer_jwk, issuerAlg),
    signAlg: issuerAlg,
    kbSigner: await signerFor(job.holder_jwk, holderAlg),
    kbSignAlg: holderAlg,
    hasher: (data) => createHash('sha256').update(data).digest(),
    hashAlg: 'sha-256',
    saltGenerator: () => randomBytes(16).toString('base64url'),
  });
  const payload = {
    ...job.claims,
    iss: job.iss,
    vct: job.vct,
    iat: job.iat,
    cnf: { jwk: publicJwk(job.holder_jwk) },
  };
  if (job.exp !== undefined) payload.exp = job.exp;
  if (job.status !== undefined) payload.status = job.status;
  const issued = await wallet.issue(payload, job.frame ?? {});
  const presentation = await wallet.present(issued, job.present ?? {}, {
    kb: { payload: { ...(job.kb_extra ?? {}), aud: job.aud, nonce: job.nonce, iat: job.kb_iat } },
  });
  process.stdout.write(JSON.stringify({ issued, presentation }));
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
