// A stand-in for the Socious Wallet: the Hyperledger Identus SDK 7.0.0's own Agent, unmodified,
// started against the mediator DID given as the first argument (or HOLDER_MEDIATOR_DID), with an
// in-memory Pluto store. Driven by the tests over line-delimited JSON:
//
//   stdin  {"id":1,"cmd":"prism_did"}                  -> {"id":1,"ok":true,"did":...}
//          {"id":2,"cmd":"peer_did"}                   -> {"id":2,"ok":true,"did":...}
//          {"id":3,"cmd":"store_credential","jwt":...} -> {"id":3,"ok":true,"credential":{...}}
//          {"id":4,"cmd":"accept","url":...}           -> {"id":4,"ok":true,"invitation":{...}}
//          {"id":5,"cmd":"pick","type":...}            -> present the credential of that type
//          {"id":6,"cmd":"is_revoked","type":...}      -> {"id":6,"ok":true,"revoked":bool}: the
//                                                      SDK's own isCredentialRevoked on the
//                                                      stored credential of that type
//          {"id":7,"cmd":"stop"}                       -> {"id":7,"ok":true}, then exit
//          (a failed command answers {"id":n,"ok":false,"error":...})
//   stdout {"event":"ready",...} once mediation is granted, then events as they happen:
//          connected, message, request, presented, requested_credential, received, dropped,
//          error.
//
// Everything the SDK or this script logs goes to stderr, so stdout carries only these lines.
// What happens on a message is what the wallet does (socious-wallet src/services/agent.tsx
// handleMessages): a request-presentation is answered with createPresentationForRequestProof
// and sendMessage, choosing the credential the way the wallet does. One addition the wallet
// lacks: a trust ping asking for a response gets one, so the tests can see the SDK send.
import SDK from "@hyperledger/identus-sdk";
import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import { createInterface } from "node:readline";

const out = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");
const describeError = (error) => `${error?.name ?? "Error"}: ${error?.message ?? error}`;
for (const level of ["log", "info", "debug", "warn", "trace"]) {
  console[level] = (...args) => process.stderr.write(args.map(String).join(" ") + "\n");
}
// In a browser (where the wallet runs) an unhandled rejection is only logged; Node would exit.
process.on("unhandledRejection", (error) => out({ event: "error", during: "background", message: describeError(error) }));

const argv = process.argv.slice(2);
const mediatorDID = argv.find((a) => !a.startsWith("--")) ?? process.env.HOLDER_MEDIATOR_DID;
const pollArg = argv.find((a) => a.startsWith("--poll-ms="));
const pollMs = Number(pollArg?.split("=")[1] ?? process.env.HOLDER_POLL_MS ?? 5000);
if (!mediatorDID) {
  out({ event: "error", during: "start", message: "no mediator DID given" });
  process.exit(2);
}

// Pluto.Store in memory: rows by table; a selector is Mango-like (fields AND'ed, $and/$or/$nor,
// a few operators), which is all the SDK's repositories send.
function matches(row, selector = {}) {
  return Object.entries(selector).every(([key, want]) => {
    if (key === "$and") return want.every((s) => matches(row, s));
    if (key === "$or") return want.some((s) => matches(row, s));
    if (key === "$nor") return !want.some((s) => matches(row, s));
    const have = row[key];
    if (want !== null && typeof want === "object" && !Array.isArray(want)) {
      return Object.entries(want).every(([op, value]) => {
        if (op === "$eq") return have === value;
        if (op === "$ne") return have !== value;
        if (op === "$in") return value.includes(have);
        if (op === "$nin") return !value.includes(have);
        if (op === "$exists") return (have !== undefined) === value;
        throw new Error(`query operator ${op} not supported by the test store`);
      });
    }
    return have === want;
  });
}

class MemoryStore {
  tables = new Map();
  rows(table) {
    if (!this.tables.has(table)) this.tables.set(table, []);
    return this.tables.get(table);
  }
  async query(table, query) {
    const found = this.rows(table).filter((row) => matches(row, query?.selector));
    const skip = query?.skip ?? 0;
    return found.slice(skip, query?.limit === undefined ? undefined : skip + query.limit).map((r) => ({ ...r }));
  }
  async insert(table, model) {
    model.uuid ??= randomUUID();
    this.rows(table).push({ ...model });
  }
  async update(table, model) {
    const rows = this.rows(table);
    const index = rows.findIndex((row) => row.uuid === model.uuid);
    if (index === -1) throw new Error(`no ${table} row ${model.uuid}`);
    rows[index] = { ...model };
  }
  async delete(table, uuid) {
    this.tables.set(table, this.rows(table).filter((row) => row.uuid !== uuid));
  }
}

const apollo = new SDK.Apollo();
const pluto = new SDK.Pluto(new MemoryStore(), apollo);
const agent = SDK.Agent.initialize({ mediatorDID: SDK.Domain.DID.fromString(mediatorDID), pluto });
const credentialSummary = (c) => ({ issuer: c.issuer, subject: c.subject, claims: c.claims });
const messageSummary = (m) => ({
  id: m.id,
  piuri: m.piuri,
  from: m.from?.toString() ?? null,
  to: m.to?.toString() ?? null,
  thid: m.thid ?? null,
  body: m.body,
});

// The wallet's choice: it reads the challenge from attachments[0].data.data.options.challenge
// (SDK 6's shape; SDK 7 gives data.json, so this throws and the type stays 'verification').
function walletChallengeType(request) {
  const data = request.attachments[0]?.data;
  try {
    const challenge = JSON.parse(data.data.options.challenge);
    const type = challenge.type || "verification";
    return { type: type.toLowerCase() === "kyc" ? "verification" : type, parsed: true };
  } catch {
    return { type: "verification", parsed: false };
  }
}

async function answerRequest(message) {
  const request = SDK.RequestPresentation.fromMessage(message);
  const challenge = walletChallengeType(request);
  const credentials = await pluto.getAllCredentials();
  // Wallet: the 'verification' (KYC) credential, or for other types the one the person picks;
  // the person here picks the first whose claims' type matches, unless a test chose one
  // (the "pick" command: the credential whose claims hold that type) as a person would.
  const wanted = picked ?? challenge.type;
  const credential = credentials.find((c) => c.claims[0]?.type === wanted);
  out({
    event: "request",
    ...messageSummary(message),
    challenge_type: challenge.type,
    wallet_parsed_challenge: challenge.parsed,
    credential: credential ? credentialSummary(credential) : null,
  });
  if (!credential) {
    out({ event: "error", during: "request", thid: message.thid ?? message.id, message: "No credential selected" });
    return;
  }
  const presentation = await agent.createPresentationForRequestProof(request, credential);
  const sent = presentation.makeMessage();
  await agent.sendMessage(sent);
  out({ event: "presented", id: sent.id, thid: sent.thid ?? null, to: sent.to?.toString() ?? null });
}

// The wallet's offer handling (agent.tsx): the cloud agent's flat preview is moved under body,
// then the SDK makes the request-credential (a new did:prism signs it) and sends it.
async function answerOffer(message) {
  const preview = message.body?.credential_preview;
  if (preview && preview.attributes && !preview.body) {
    message.body.credential_preview = { ...preview, body: { attributes: preview.attributes } };
  }
  const offer = SDK.OfferCredential.fromMessage(message);
  // As for "prism_did": a new did:prism the SDK could not resolve later (it would fail to
  // present the credential) is made again; so is one it cannot resolve while it signs the
  // request (prepareRequestCredentialWithIssuer then throws "Failed resolving did").
  let request;
  let failed;
  for (let attempt = 0; attempt < 20 && !request; attempt++) {
    let prepared;
    try {
      prepared = await agent.prepareRequestCredentialWithIssuer(offer);
    } catch (error) {
      failed = error;
      out({ event: "unreadable_did", did: null, message: describeError(error) });
      // The SDK derives the request's key from the highest key index among the did:prism DIDs
      // it stored (PrismKeyPathIndexTask), and this one failed before it was stored: asked
      // again, it would derive the same unreadable key. A DID made and stored here moves the
      // index on, so the next attempt gets a new key.
      await agent.runTask(new SDK.CreatePrismDID({ authenticationKeyCurve: SDK.Domain.Curve.SECP256K1 }));
      continue;
    }
    const jwt = Buffer.from(prepared.attachments[0].data.base64, "base64").toString("utf8");
    const iss = JSON.parse(Buffer.from(jwt.split(".")[1], "base64url").toString("utf8")).iss;
    try {
      await agent.castor.resolveDID(iss);
      request = prepared;
    } catch {
      out({ event: "unreadable_did", did: iss });
    }
  }
  if (!request) throw failed ?? new Error("the SDK made 20 did:prism DIDs it cannot resolve");
  const sent = request.makeMessage();
  await agent.sendMessage(sent);
  out({ event: "requested_credential", id: sent.id, thid: sent.thid ?? null });
}

// The wallet's rule on an issued credential (agent.tsx): without a KYC credential (claims type
// 'verification') it keeps only that one; with one, it drops any other of that type.
async function takeIssued(message) {
  const issued = SDK.IssueCredential.fromMessage(message);
  const credentials = await pluto.getAllCredentials();
  const kyc = credentials.find((c) => c.claims[0]?.type === "verification");
  const data = issued.attachments[0].data;
  const jwt = Buffer.from(data.base64, "base64").toString("utf8");
  const decoded = JSON.parse(Buffer.from(jwt.split(".")[1], "base64url").toString("utf8"));
  const type = decoded.vc?.credentialSubject?.type;
  if (kyc ? type === "verification" : type !== "verification") {
    out({ event: "dropped", thid: message.thid ?? null, type: type ?? null });
    return;
  }
  const credential = await agent.processIssuedCredentialMessage(issued);
  out({ event: "received", thid: message.thid ?? null, credential: credentialSummary(credential) });
}

async function answerPing(message) {
  const pong = new SDK.Domain.Message({}, undefined, "https://didcomm.org/trust-ping/2.0/ping-response", message.to, message.from, [], message.id);
  await agent.sendMessage(pong);
}

agent.addListener(SDK.ListenerKey.MESSAGE, async (messages) => {
  for (const message of messages) {
    out({ event: "message", ...messageSummary(message) });
    try {
      if (message.piuri === SDK.RequestPresentation.type) await answerRequest(message);
      if (message.piuri === SDK.OfferCredential.type) await answerOffer(message);
      if (message.piuri === SDK.IssueCredential.type) await takeIssued(message);
      if (message.piuri === "https://didcomm.org/trust-ping/2.0/ping" && message.body?.response_requested) {
        await answerPing(message);
      }
    } catch (error) {
      out({ event: "error", during: message.piuri, thid: message.thid ?? message.id, message: describeError(error) });
    }
  }
});
agent.addListener(SDK.ListenerKey.CONNECTION, (pair) => {
  out({ event: "connected", host: pair.host.toString(), receiver: pair.receiver.toString(), name: pair.name });
});

let picked = null;

// The SDK's CommonJS build checks revocation; its ES module build cannot under Node: it does
// `import * as jsonld from "jsonld"`, and Node gives a CommonJS package imported so only a
// `default` export, so canonicalizing fails ("re.canonize is not a function") on every list,
// the cloud agent's included. A bundler (the wallet's) joins the two as the CommonJS build
// does. So the check runs the same code from the CommonJS build, in an agent of its own that
// is never started (the check needs no mediation).
let revocation = null;
function revocationAgent() {
  if (!revocation) {
    const CJS = createRequire(import.meta.url)("@hyperledger/identus-sdk");
    const store = new CJS.Pluto(new MemoryStore(), new CJS.Apollo());
    const verifier = CJS.Agent.initialize({ mediatorDID: CJS.Domain.DID.fromString(mediatorDID), pluto: store });
    revocation = { SDK: CJS, agent: verifier };
  }
  return revocation;
}

const commands = {
  async pick({ type }) {
    picked = type ?? null;
    return { picked };
  },
  async prism_did() {
    // As the SDK does for a credential offer (plugins/internal/oea/jwt/CredentialOffer.ts):
    // secp256k1 master-0 and authentication-0, keys kept in Pluto.
    // SDK 7.0.0 makes keys it cannot read back: a secp256k1 coordinate that begins with a zero
    // byte (about one key in 128) fails its own resolution, and the presentation with it. The
    // wallet would be stuck with such a DID; the tests take the next one, so they never flake.
    for (let attempt = 0; attempt < 20; attempt++) {
      const did = await agent.runTask(new SDK.CreatePrismDID({ authenticationKeyCurve: SDK.Domain.Curve.SECP256K1 }));
      try {
        await agent.castor.resolveDID(did.toString());
        return { did: did.toString(), attempts: attempt + 1 };
      } catch {
        out({ event: "unreadable_did", did: did.toString() });
      }
    }
    throw new Error("the SDK made 20 did:prism DIDs it cannot resolve");
  },
  async peer_did() {
    const did = await agent.createNewPeerDID([], true);
    return { did: did.toString() };
  },
  async store_credential({ jwt }) {
    const credential = SDK.JWTCredential.fromJWS(jwt);
    await pluto.storeCredential(credential);
    return { credential: credentialSummary(credential) };
  },
  async is_revoked({ type }) {
    // What every verifier built on the SDK runs on a presented credential (PresentationVerify
    // verifyJWTClaims): fetches its StatusList2021 list, checks the list's proof, reads the bit.
    const credentials = await pluto.getAllCredentials();
    const credential = credentials.find((c) => c.claims[0]?.type === type);
    if (!credential) throw new Error(`no stored credential of type ${type}`);
    const verifier = revocationAgent();
    return { revoked: await verifier.agent.isCredentialRevoked(verifier.SDK.JWTCredential.fromJWS(credential.id)) };
  },
  async accept({ url }) {
    const invitation = await agent.parseOOBInvitation(new URL(url));
    await agent.acceptInvitation(invitation);
    return { invitation: { id: invitation.id, from: invitation.from } };
  },
  async stop() {
    await agent.stop();
    return {};
  },
};

try {
  await agent.start();
  if (pollMs !== 5000) {
    // The SDK's own setting (Agent.startFetchingMessages(period)); the wallet keeps 5 s.
    agent.stopFetchingMessages();
    await agent.startFetchingMessages(pollMs);
  }
  const mediator = agent.connections.mediator?.asMediator();
  if (agent.connections.mediator?.state !== SDK.Connection.State.GRANTED) {
    throw new Error("mediation was not granted");
  }
  out({ event: "ready", mediator: mediatorDID, host: mediator.hostDID.toString(), routing: mediator.routingDID.toString(), poll_ms: pollMs });
} catch (error) {
  out({ event: "error", during: "start", message: describeError(error) });
  process.exit(1);
}

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  let request;
  try {
    request = JSON.parse(line);
  } catch {
    out({ event: "error", during: "command", message: `not JSON: ${line}` });
    continue;
  }
  const command = commands[request.cmd];
  try {
    if (!command) throw new Error(`unknown command ${request.cmd}`);
    out({ id: request.id, ok: true, ...(await command(request)) });
  } catch (error) {
    out({ id: request.id, ok: false, error: describeError(error) });
  }
  if (request.cmd === "stop") break;
}
await agent.stop().catch(() => {});
process.exit(0);
