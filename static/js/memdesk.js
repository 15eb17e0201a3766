/* memdesk: toasts (dismiss, and report failed HTMX requests). Text only: never innerHTML. */
(function () {
  "use strict";

  function toast(text, level) {
    var box = document.getElementById("toasts");
    if (!box) return;
    var item = document.createElement("div");
    item.className = "toast toast-" + (level || "info");
    item.setAttribute("role", "status");
    var span = document.createElement("span");
    span.textContent = text;
    var close = document.createElement("button");
    close.type = "button";
    close.className = "toast-close";
    close.setAttribute("aria-label", "Dismiss");
    close.textContent = "×";
    item.appendChild(span);
    item.appendChild(close);
    box.appendChild(item);
  }
  window.memdeskToast = toast;

  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest(".toast-close");
    if (button) button.closest(".toast").remove();
  });

  // The server announces what happened with an HX-Trigger event: {"memdesk:toast": {"text", "level"}}.
  document.addEventListener("memdesk:toast", function (event) {
    var detail = event.detail || {};
    if (detail.text) toast(String(detail.text), detail.level || "info");
  });

  // <button data-copy="#input-id">: copy the input's value (clipboard API, else the selection).
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-copy]");
    if (!button) return;
    var field = document.querySelector(button.getAttribute("data-copy"));
    if (!field) return;
    field.focus();
    field.select();
    function done(ok) {
      button.textContent = ok ? "Copied" : "Press Ctrl+C";
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(field.value).then(function () { done(true); }, function () { done(false); });
    } else {
      var ok = false;
      try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
      done(ok);
    }
  });
  document.addEventListener("focusin", function (event) {
    if (event.target.matches && event.target.matches("[data-select-on-focus]")) event.target.select();
  });

  // Inside [data-swap-errors] (decision forms), a refused request (400, 409, 422) carries its explanation:
  // swap it in like a success instead of only toasting the status.
  document.addEventListener("htmx:beforeSwap", function (event) {
    var detail = event.detail || {};
    var status = detail.xhr ? detail.xhr.status : 0;
    var elt = detail.requestConfig && detail.requestConfig.elt;
    if ((status === 400 || status === 409 || status === 422) && elt && elt.closest && elt.closest("[data-swap-errors]")) {
      detail.shouldSwap = true;
      detail.isError = false;
    }
  });

  document.addEventListener("htmx:responseError", function (event) {
    var status = event.detail.xhr ? event.detail.xhr.status : 0;
    var text = status === 404 ? "Not found (it may have been removed, or it is not yours to see)."
      : status === 403 ? "Not allowed. Reload the page and try again."
      : "The server could not answer (" + status + "). Try again.";
    toast(text, "error");
  });
  document.addEventListener("htmx:sendError", function () {
    toast("The server is unreachable. Check your connection and try again.", "error");
  });
})();
