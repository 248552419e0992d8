// A minimal organization backend for Verity, in Node (no framework; npm standardwebhooks).
//
// 1. GET /verify?customer_id=... opens an individual of the verification for that customer and
//    redirects the person's browser to the individual's page_url, where Verity asks for the
//    credential (a QR code, a wallet link, the browser's Digital Credentials API).
// 2. POST /webhooks/verity receives Verity's signed events; the signature is checked with the
//    Standard Webhooks library on the raw body before anything in it is believed.
// 3. On an outcome event the backend takes the decision from the authenticated lookup, never
//    from the event alone.
// 4. GET /customers/<customer_id> shows what the backend now knows of that customer.
//
// Settings (environment): VERITY_URL, VERITY_APIKEY, VERITY_VERIFICATION_ID,
// VERITY_WEBHOOK_SECRET (whsec_...), HOST and PORT (where this backend listens).
import { createServer } from "node:http";
import { Webhook } from "standardwebhooks";

const VERITY_URL = (process.env.VERITY_URL ?? "http://127.0.0.1:8000").replace(/\/$/, "");
const APIKEY = process.env.VERITY_APIKEY;
const VERIFICATION_ID = process.env.VERITY_VERIFICATION_ID;
const webhook = new Webhook(process.env.VERITY_WEBHOOK_SECRET);
const OUTCOMES = ["individual.verified", "individual.failed", "individual.revoked"];
const customers = new Map(); // what this backend knows; a real one keeps it in its database

async function verify(url, response) {
  // Open an individual (safe to retry: one per customer and verification), send the person.
  const customerId = url.searchParams.get("customer_id");
  if (!customerId) return send(response, 400, { error: "customer_id is required" });
  // With the key: the verification takes no other open ("refused").
  const opened = await fetch(`${VERITY_URL}/verifications/individuals`, {
    method: "POST",
    headers: { "Content-Type": "application/json", apikey: APIKEY },
    body: JSON.stringify({ customer_id: customerId, verification_id: VERIFICATION_ID }),
  });
  if (!opened.ok) throw new Error(`Verity answered ${opened.status}: ${await opened.text()}`);
  response.writeHead(303, { Location: (await opened.json()).page_url }).end();
}

async function receive(request, response) {
  // Check the signature on the raw body, then read the decision from the lookup.
  const chunks = [];
  for await (const chunk of request) chunks.push(chunk);
  let event;
  try {
    event = webhook.verify(Buffer.concat(chunks).toString("utf8"), request.headers);
  } catch {
    return send(response, 400, { error: "bad signature" });
  }
  const data = event.data;
  if (OUTCOMES.includes(event.type) && data.verification_id === VERIFICATION_ID) {
    const customerId = data.customer_id;
    const lookup = await fetch(
      `${VERITY_URL}/verifications/${VERIFICATION_ID}/individuals/${encodeURIComponent(customerId)}`,
      { headers: { apikey: APIKEY } },
    );
    if (!lookup.ok) throw new Error(`Verity answered ${lookup.status}: ${await lookup.text()}`);
    const decision = await lookup.json();
    customers.set(customerId, {
      webhook: { id: request.headers["webhook-id"], type: event.type, signature: "verified" },
      status: decision.status,
      validation_error: decision.validation_error,
      opened_by: decision.opened_by, // who opened it first: trust it only if "backend"
      claims: decision.claims,
    });
  }
  response.writeHead(204).end(); // any 2xx: delivered; anything else is retried
}

function send(response, status, body) {
  response.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body));
}

const server = createServer(async (request, response) => {
  const url = new URL(request.url, "http://backend.invalid");
  try {
    if (request.method === "GET" && url.pathname === "/verify") return await verify(url, response);
    if (request.method === "POST" && url.pathname === "/webhooks/verity") {
      return await receive(request, response);
    }
    const known = url.pathname.match(/^\/customers\/([^/]+)$/);
    if (request.method === "GET" && known) {
      const customer = customers.get(decodeURIComponent(known[1]));
      return customer ? send(response, 200, customer) : send(response, 404, { status: "UNKNOWN" });
    }
    send(response, 404, { error: "not found" });
  } catch (error) {
    console.error(error);
    send(response, 502, { error: String(error.message ?? error) });
  }
});

const host = process.env.HOST ?? "127.0.0.1";
const port = Number(process.env.PORT ?? 3000);
server.listen(port, host, () => console.log(`Listening on http://${host}:${port}`));
