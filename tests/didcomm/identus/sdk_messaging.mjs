// Drives the Hyperledger Identus SDK 7.0.0 (what the Socious Wallet runs) for the DIDComm
// messaging interop tests, through its own DIDCommWrapper (the didcomm Rust/WASM library the
// wallet packs and unpacks with) and its own invitation parser.
//
// Over stdin/stdout, one JSON object per line: first
//   in  {"ours": <Verity did:peer:2>, "oob": [<url>, ...]}
//   out {"mediator", "holder": SDK-made DIDs, "packed": {...}: SDK messages to ours, "oob": [...]}
// then, until stdin closes, any number of
//   in  {"unpack": {<name>: <JWE string>, ...}}   (made by Verity for the SDK's DIDs)
//   out {<name>: {"message": {...}} or {"error": "..."}}
import readline from "node:readline";
import SDK from "@hyperledger/identus-sdk";

const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const next = async () => JSON.parse((await lines.next()).value);
const say = (value) => process.stdout.write(JSON.stringify(value) + "\n");
const error = (e) => ({ error: `${e?.constructor?.name ?? "Error"}: ${e?.message ?? e}` });

const apollo = new SDK.Apollo();
const castor = new SDK.Castor(apollo);
const held = [];
// The one Pluto call the SDK's secrets resolver makes: the peer DIDs with private keys.
const pluto = { getAllPeerDIDs: async () => held };
const didcomm = new SDK.DIDCommWrapper(apollo, castor, pluto);

async function makePeerDID(uri) {
  const x25519 = apollo.createPrivateKey({ type: SDK.Domain.KeyTypes.Curve25519, curve: SDK.Domain.Curve.X25519 });
  const ed25519 = apollo.createPrivateKey({ type: SDK.Domain.KeyTypes.EC, curve: SDK.Domain.Curve.ED25519 });
  const service = new SDK.Domain.DIDDocument.Service("#didcomm-1", ["DIDCommMessaging"], {
    uri,
    accept: ["didcomm/v2"],
    routingKeys: [],
  });
  const did = await castor.createPeerDID([x25519.publicKey(), ed25519.publicKey()], [service]);
  held.push(
    new SDK.PeerDID(did, [
      { keyCurve: { curve: SDK.Domain.Curve.X25519 }, value: x25519.raw },
      { keyCurve: { curve: SDK.Domain.Curve.ED25519 }, value: ed25519.raw },
    ]),
  );
  return did;
}

function plain(message) {
  return {
    id: message.id,
    type: message.piuri,
    from: message.from?.toString() ?? null,
    to: message.to?.toString() ?? null,
    thid: message.thid ?? null,
    body: message.body,
    attachments: message.attachments.map((a) => ({ id: a.id, media_type: a.mediaType ?? null, data: a.data })),
  };
}

const first = await next();
const ours = SDK.Domain.DID.fromString(first.ours);
const mediator = await makePeerDID("http://127.0.0.1:9/didcomm");
const holder = await makePeerDID(mediator.toString());

const presentation = new SDK.Domain.Message(
  { goal_code: "interop" },
  "0f8c8a8e-1111-4a5b-9c3d-000000000001",
  "https://didcomm.atalaprism.io/present-proof/3.0/presentation",
  holder,
  ours,
  [new SDK.Domain.AttachmentDescriptor({ base64: "ZXlKaGJHY2lPaUpGVXpJMU5rc2lmUQ" }, "application/json", "vp-1", undefined, "prism/jwt")],
  "thread-1",
);
const packed = {};
try {
  packed.authcrypt = await didcomm.packEncrypted(presentation, ours, holder);
} catch (e) {
  packed.authcrypt = error(e);
}
try {
  // No sender: what the SDK would send anonymously (its anoncrypt choice is XC20P).
  packed.anoncrypt = await didcomm.packEncrypted(presentation, ours);
} catch (e) {
  packed.anoncrypt = error(e);
}

const agent = SDK.Agent.initialize({ pluto, mediatorDID: mediator, apollo, castor });
const oob = [];
for (const url of first.oob) {
  try {
    const parsed = await agent.parseOOBInvitation(new URL(url));
    oob.push({ id: parsed.id, from: parsed.from, body: parsed.body, expires: parsed.expiration ?? null });
  } catch (e) {
    oob.push(error(e));
  }
}
say({ mediator: mediator.toString(), holder: holder.toString(), packed, oob });

for await (const line of lines) {
  const out = {};
  for (const [name, jwe] of Object.entries(JSON.parse(line).unpack)) {
    try {
      out[name] = { message: plain(await didcomm.unpack(jwe)) };
    } catch (e) {
      out[name] = error(e);
    }
  }
  say(out);
}
process.exit(0);
