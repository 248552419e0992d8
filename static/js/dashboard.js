// The dashboard's only script beyond htmx: copy buttons for secrets shown once.
// A file, not inline script, so the Content Security Policy can forbid inline code.
"use strict";

document.addEventListener("click", async (event) => {
  const button = event.target.closest("[data-copy]");
  if (!button) return;
  const source = document.getElementById(button.dataset.copy);
  if (!source || !navigator.clipboard) return;
  await navigator.clipboard.writeText(source.textContent.trim());
  const label = button.textContent;
  button.textContent = "Copied";
  setTimeout(() => {
    button.textContent = label;
  }, 2000);
});

// A CSV upload's results page while its rows are issued in the background: poll the
// upload's progress, move the bar and the counts, and reload the page once it is done (the
// results, codes included, are rendered by the server). Without script the page reloads
// itself (a <meta http-equiv="refresh"> inside <noscript>).
function followUpload(section) {
  const bar = section.querySelector("[data-testid=upload-bar]");
  const show = (name, text) => {
    const node = section.querySelector(`[data-testid=${name}]`);
    if (node) node.textContent = text;
  };
  const timeLeft = (seconds) => {
    if (seconds === null || seconds === undefined) return "estimating…";
    return seconds < 60 ? `${seconds} s` : `${Math.round(seconds / 60)} min`;
  };
  const poll = async () => {
    try {
      const response = await fetch(section.dataset.progressUrl, { credentials: "same-origin" });
      if (response.status === 404) return window.location.reload();
      if (response.ok) {
        const progress = await response.json();
        if (progress.status === "FINISHED") return window.location.reload();
        bar.max = progress.rows;
        bar.value = progress.rows_done;
        bar.textContent = `${Math.floor((progress.rows_done * 100) / Math.max(progress.rows, 1))}%`;
        show("rows-done", String(progress.rows_done));
        show("rows-failed", String(progress.rows_failed));
        show("time-left", timeLeft(progress.seconds_left));
      }
    } catch (error) {
      // The next poll tries again; the upload itself goes on.
    }
    setTimeout(poll, 1000);
  };
  setTimeout(poll, 1000);
}

document.addEventListener("DOMContentLoaded", () => {
  const section = document.querySelector("[data-testid=upload-running][data-progress-url]");
  if (section) followUpload(section);
});
