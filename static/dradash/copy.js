// Copy buttons: <button type="button" data-copy="#element-id">Copy</button> copies the
// element's value (or text) to the clipboard and says so. No inline script (the CSP forbids it).
document.addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-copy]");
  if (!button) return;
  const source = document.querySelector(button.dataset.copy);
  if (!source) return;
  const text = "value" in source ? source.value : source.textContent;
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = "Copied";
  } catch {
    if ("select" in source) source.select(); // no clipboard (plain http): selected, for Ctrl+C
    button.textContent = "Selected: press Ctrl+C";
  }
});
