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
