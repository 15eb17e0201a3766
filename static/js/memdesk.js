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
