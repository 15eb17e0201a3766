/* memdesk navigation on a phone: the links collapse behind a Menu button (layout.css). Without this script
   they stay visible and wrap. */
(function () {
  "use strict";
  function start() {
    var nav = document.querySelector(".nav");
    var toggle = nav ? nav.querySelector("[data-nav-toggle]") : null;
    if (!toggle) return;
    nav.classList.add("nav-collapsible");
    toggle.addEventListener("click", function () {
      var open = nav.classList.toggle("nav-open");
      toggle.setAttribute("aria-expanded", open ? "true" : "false");
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
