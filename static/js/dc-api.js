/*
 * The W3C Digital Credentials API button of the person's page (OpenID4VP 1.0 Appendix A,
 * ISO/IEC 18013-7 Annex C).
 *
 * Shown only where the browser has the API. It fetches the requests (one per protocol the
 * verification can use), keeps those the browser allows, lets the browser ask a wallet with
 * all of them in one call, and posts the DigitalCredential the wallet answered with back; the page's polled status then shows the
 * outcome (a zero-knowledge proof's once it is checked, a few seconds later), and a link leads to the full result (it carries the response code for this browser).
 * A file of its own, not inline: the page's CSP allows scripts from 'self' only.
 */
(function () {
  "use strict";

  // Every protocol the service speaks over the API; the request lists those the verification
  // can use (org-iso-mdoc, ISO/IEC 18013-7 Annex C, for mdoc: what Safari and Apple Wallet answer).
  var PROTOCOLS = ["openid4vp-v1-unsigned", "openid4vp-v1-signed", "org-iso-mdoc"];

  function allowed(protocol) {
    var api = window.DigitalCredential;
    if (api && typeof api.userAgentAllowsProtocol === "function") {
      return api.userAgentAllowsProtocol(protocol);
    }
    return true;
  }

  function supported() {
    var api = window.DigitalCredential;
    if (!api || !navigator.credentials || typeof navigator.credentials.get !== "function") {
      return false;
    }
    return PROTOCOLS.some(allowed);
  }

  function reveal() {
    if (!supported()) {
      return;
    }
    document.querySelectorAll("#dc-api").forEach(function (button) {
      button.hidden = false;
    });
  }

  function say(text, link) {
    var message = document.getElementById("dc-api-message");
    if (!message) {
      return;
    }
    message.textContent = text;
    if (link) {
      var anchor = document.createElement("a");
      anchor.href = link;
      anchor.textContent = "See your result";
      message.append(" ", anchor);
    }
  }

  // A zero-knowledge answer arriving while the service checks as many as it can is refused
  // with 429 and Retry-After, nothing consumed: the same answer is sent again after the wait.
  var BUSY_RETRIES = 5;

  function pause(seconds) {
    return new Promise(function (resolve) {
      setTimeout(resolve, Math.min(Math.max(seconds, 1), 30) * 1000);
    });
  }

  async function fetchJson(url, options) {
    for (var tries = 0; ; tries++) {
      var response = await fetch(url, Object.assign({ credentials: "same-origin" }, options));
      if (response.status === 429 && tries < BUSY_RETRIES && options && options.method === "POST") {
        await pause(parseInt(response.headers.get("Retry-After"), 10) || 2);
        continue;
      }
      var body = await response.json();
      if (!response.ok) {
        throw new Error(body.error || "The request failed");
      }
      return body;
    }
  }

  function answerOf(credential) {
    var data = credential && credential.data;
    return typeof data === "string" ? JSON.parse(data) : data;
  }

  async function present(button) {
    button.disabled = true;
    button.setAttribute("aria-busy", "true");
    say("Waiting for your wallet…");
    try {
      var digital = await fetchJson(button.dataset.requestUrl, { headers: { Accept: "application/json" } });
      // One call offers every protocol the browser allows; the wallet answers in one of them.
      var requests = digital.requests.filter(function (request) {
        return allowed(request.protocol);
      });
      if (!requests.length) {
        throw new Error("This browser allows none of the protocols offered");
      }
      var credential = await navigator.credentials.get({
        mediation: "required",
        digital: { requests: requests },
      });
      var answer = answerOf(credential);
      if (!answer || answer.error || !(answer.vp_token || answer.response)) {
        throw new Error((answer && answer.error) || "Your wallet did not share a credential");
      }
      // The DigitalCredential as the browser returned it: its protocol and its data.
      var outcome = await fetchJson(button.dataset.responseUrl, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify(
          credential.protocol
            ? { protocol: credential.protocol, data: answer }
            : { vp_token: answer.vp_token, response: answer.response }
        ),
      });
      // A zero-knowledge proof is checked after the answer (202): the polled status shows it.
      say(outcome.checking ? button.dataset.checking : "Your wallet answered.", outcome.redirect_uri);
    } catch (error) {
      // The error's own text speaks the protocol (vp_token, nonce...): the person gets plain words.
      say("Sharing through this browser did not work. You can use the other options below.");
      button.disabled = false;
    } finally {
      button.removeAttribute("aria-busy");
    }
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("#dc-api");
    if (button) {
      present(button);
    }
  });
  document.addEventListener("DOMContentLoaded", reveal);
  // The wallet section is replaced when its link changes: show the button again.
  document.addEventListener("htmx:oobAfterSwap", reveal);
})();
