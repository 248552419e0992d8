// Drives the Hyperledger Identus SDK 7.0.0 (what the Socious Wallet runs) for the did:peer:2 and
// did:prism interop tests: makes DIDs with the SDK's own Castor and resolves the DIDs given on
// the command line (made by Verity) with it. Prints one JSON object.
import SDK from "@hyperledger/identus-sdk";

const [ourPeer, ourPrism] = process.argv.slice(2);
const apollo = new SDK.Apollo();
const castor = new SDK.Castor(apollo);
const hex = (bytes) => Buffer.from(bytes).toString("hex");

function secp256k1() {
  const seed = apollo.createRandomSeed().seed;
  return apollo.createPrivateKey({
    type: SDK.Domain.KeyTypes.EC,
    curve: SDK.Domain.Curve.SECP256K1,
    seed: Buffer.from(seed.value).toString("hex"),
  });
}

function describe(doc) {
  const ids = (methods) => methods.map((m) => m.id);
  return {
    id: doc.id.toString(),
    methods: doc.verificationMethods.map((m) => ({
      id: m.id,
      type: m.type,
      jwk: m.publicKeyJwk ?? null,
      multibase: m.publicKeyMultibase ?? null,
    })),
    authentication: ids(doc.authentication),
    keyAgreement: ids(doc.keyAgreement),
    assertionMethod: ids(doc.assertionMethod),
    services: doc.services.map((s) => ({ id: s.id, type: s.type, uri: s.serviceEndpoint.uri })),
  };
}

const x25519 = apollo.createPrivateKey({ type: SDK.Domain.KeyTypes.Curve25519, curve: SDK.Domain.Curve.X25519 });
const ed25519 = apollo.createPrivateKey({ type: SDK.Domain.KeyTypes.EC, curve: SDK.Domain.Curve.ED25519 });
const mediator = "did:peer:2.Ez6LSmediatorplaceholder";
const service = new SDK.Domain.DIDDocument.Service("#didcomm-1", ["DIDCommMessaging"], {
  uri: mediator,
  accept: ["didcomm/v2"],
  routingKeys: [],
});
const peer = await castor.createPeerDID([x25519.publicKey(), ed25519.publicKey()], [service]);

const master = secp256k1();
const auth = secp256k1();
const issuing = secp256k1();
const prism = await castor.createPrismDID(master.publicKey(), [], [auth.publicKey()], [issuing.publicKey()]);

const out = {
  peer: {
    did: peer.toString(),
    x25519: hex(x25519.publicKey().raw),
    ed25519: hex(ed25519.publicKey().raw),
    sdk: describe(await castor.resolveDID(peer.toString())),
  },
  prism: {
    did: prism.toString(),
    master: hex(master.publicKey().raw),
    authentication: hex(auth.publicKey().raw),
    issuing: hex(issuing.publicKey().raw),
  },
  ours: {},
};
for (const [name, did] of [["peer", ourPeer], ["prism", ourPrism]]) {
  try {
    out.ours[name] = describe(await castor.resolveDID(did));
  } catch (error) {
    out.ours[name] = { error: String(error?.message ?? error) };
  }
}
console.log(JSON.stringify(out));
