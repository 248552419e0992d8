// Rewrites each <time class="local-time"> (written by the server in UTC, and labelled so) in
// the person's own time zone and language, with the zone named. A file, not inline: the CSP
// allows scripts from 'self' only.
(function () {
  "use strict";
  function localize(root) {
    var language = document.documentElement.lang || undefined;
    root.querySelectorAll("time.local-time[datetime]").forEach(function (node) {
      var when = new Date(node.getAttribute("datetime"));
      if (isNaN(when.getTime())) return;
      try {
        // Components, not dateStyle/timeStyle: those refuse timeZoneName (a TypeError), and
        // the zone must be named.
        node.textContent = new Intl.DateTimeFormat(language, {
          year: "numeric",
          month: "long",
          day: "numeric",
          hour: "numeric",
          minute: "2-digit",
          timeZoneName: "short",
        }).format(when);
      } catch (e) {
        // An old browser without these options keeps the server's UTC text.
      }
    });
  }
  document.addEventListener("DOMContentLoaded", function () { localize(document); });
  // Regions htmx swaps in (the offer's status) carry times too.
  document.addEventListener("htmx:afterSettle", function (event) { localize(event.target); });
})();
