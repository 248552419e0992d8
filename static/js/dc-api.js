/*
 * The W3C Digital Credentials API button of the person's page (OpenID4VP 1.0 Appendix A).
 *
 * Shown only where the browser has the API. It fetches the unsigned request, lets the browser
 * ask a wallet, and posts the wallet's answer back; the page's polled status then shows the
 * outcome, and a link leads to the full result (it carries the response code for this browser).
 * A file of its own, not inline: the page's CSP allows scripts from 'self' only.
 */
(function () {
  "use strict";

  var PROTOCOL = "openid4vp-v1-unsigned";

  function supported() {
    var api = window.DigitalCredential;
    if (!api || !navigator.credentials || typeof navigator.credentials.get !== "function") {
      return false;
    }
    if (typeof api.userAgentAllowsProtocol === "function") {
      return api.userAgentAllowsProtocol(PROTOCOL);
    }
    return true;
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

  async function fetchJson(url, options) {
    var response = await fetch(url, Object.assign({ credentials: "same-origin" }, options));
    var body = await response.json();
    if (!response.ok) {
      throw new Error(body.error || "The request failed");
    }
    return body;
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
      var credential = await navigator.credentials.get({ mediation: "required", digital: digital });
      var answer = answerOf(credential);
      if (!answer || answer.error || !answer.vp_token) {
        throw new Error((answer && answer.error) || "Your wallet did not share a credential");
      }
      var outcome = await fetchJson(button.dataset.responseUrl, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify({ vp_token: answer.vp_token }),
      });
      say("Your wallet answered.", outcome.redirect_uri);
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
