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

// A long CSV upload: while the form's request runs, say how many credentials are issued so
// far (each batch of rows is committed on its own, so the count grows as it goes). The page
// works without this: the results page follows the upload either way.
document.addEventListener("submit", async (event) => {
  const form = event.target.closest("form[data-progress-url]");
  if (!form || form.dataset.sending) return;
  event.preventDefault();
  form.dataset.sending = "1";
  const status = form.querySelector("[data-testid=upload-progress]");
  const count = async () => {
    const response = await fetch(form.dataset.progressUrl, { credentials: "same-origin" });
    return response.ok ? (await response.json()).credentials : null;
  };
  let before = null;
  try {
    before = await count();
  } catch (error) {
    before = null;
  }
  status.hidden = false;
  status.textContent = "Checking the file…";
  if (before !== null) {
    setInterval(async () => {
      try {
        const now = await count();
        if (now !== null && now > before) {
          status.textContent = `Issuing: ${now - before} credential${now - before === 1 ? "" : "s"} issued so far…`;
        }
      } catch (error) {
        // The next poll tries again; the upload itself goes on.
      }
    }, 1000);
  }
  form.submit();
});
