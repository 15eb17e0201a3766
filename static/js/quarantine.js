/* memdesk quarantine desk: live TTL countdowns and keyboard shortcuts (j/k move, a approve, r reject, ? help).
   Text only: never innerHTML. Works on cards swapped in by HTMX: everything is looked up when needed. */
(function () {
  "use strict";

  var WARN_MS = 2 * 3600 * 1000;
  var skew = 0; // the server's clock minus this browser's, so the countdown agrees with the server

  function readSkew() {
    var desk = document.getElementById("desk");
    var server = desk ? Date.parse(desk.getAttribute("data-server-now") || "") : NaN;
    if (!isNaN(server)) skew = server - Date.now();
  }

  function pad(n) { return (n < 10 ? "0" : "") + n; }

  // Same wording as the server's ``countdown`` filter.
  function format(ms) {
    if (ms <= 0) return "expired — rejected automatically";
    var s = Math.floor(ms / 1000);
    var h = Math.floor(s / 3600);
    var m = Math.floor((s % 3600) / 60);
    return h ? h + " h " + pad(m) + " min left" : m + " min " + pad(s % 60) + " s left";
  }

  function tick() {
    var now = Date.now() + skew;
    var timers = document.querySelectorAll(".batch-pending [data-expires]");
    for (var i = 0; i < timers.length; i++) {
      var el = timers[i];
      var left = Date.parse(el.getAttribute("data-expires")) - now;
      if (isNaN(left)) continue;
      var text = format(left);
      if (el.textContent !== text) el.textContent = text;
      el.classList.toggle("countdown-warn", left > 0 && left < WARN_MS);
      el.classList.toggle("countdown-expired", left <= 0);
      var card = el.closest(".batch-card");
      if (!card) continue;
      card.classList.toggle("batch-warn", left > 0 && left < WARN_MS);
      if (left <= 0 && !card.classList.contains("batch-expired")) {
        // the server refuses decisions now; the TTL sweep rejects the batch
        card.classList.add("batch-expired");
        var fields = card.querySelectorAll(".decide button, .decide select, .decide input");
        for (var j = 0; j < fields.length; j++) fields[j].disabled = true;
      }
    }
  }

  // --- keyboard --------------------------------------------------------------------------------------------

  var selectedId = null;

  function cards() { return Array.prototype.slice.call(document.querySelectorAll("#desk .batch-card")); }

  function selected() {
    var active = document.activeElement;
    var card = active && active.closest ? active.closest(".batch-card") : null;
    if (card) return card;
    return selectedId ? document.getElementById(selectedId) : null;
  }

  function select(card) {
    if (!card) return;
    var list = cards();
    for (var i = 0; i < list.length; i++) {
      list[i].classList.toggle("is-selected", list[i] === card);
      if (list[i] === card) list[i].setAttribute("aria-current", "true");
      else list[i].removeAttribute("aria-current");
    }
    selectedId = card.id;
    card.focus({ preventScroll: true });
    card.scrollIntoView({ block: "nearest" });
  }

  function move(step) {
    var list = cards();
    if (!list.length) return null;
    var i = list.indexOf(selected());
    var next = i < 0 ? list[step > 0 ? 0 : list.length - 1] : list[Math.min(list.length - 1, Math.max(0, i + step))];
    select(next);
    return next;
  }

  function openDecision(kind) {
    var card = selected() || move(1);
    if (!card) return;
    var details = card.querySelector("details[data-decision='" + kind + "']");
    if (!details || card.classList.contains("batch-expired")) {
      if (window.memdeskToast) window.memdeskToast("This batch cannot be decided any more.", "info");
      return;
    }
    var all = card.querySelectorAll("details[data-decision]");
    for (var i = 0; i < all.length; i++) all[i].open = all[i] === details;
    var field = details.querySelector("select[name=reason]");
    if (field) field.focus();
  }

  function toggleHelp() {
    var help = document.getElementById("keys-help");
    if (!help) return;
    if (help.open) help.close();
    else if (help.showModal) help.showModal();
    else help.setAttribute("open", "");
  }

  function typing(el) {
    return el && (el.isContentEditable || /^(INPUT|SELECT|TEXTAREA)$/.test(el.tagName));
  }

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (!document.getElementById("desk")) return;
    var help = document.getElementById("keys-help");
    if (help && help.open) return; // the dialog handles Esc itself
    if (event.key === "Escape") {
      var card = selected();
      var open = card ? card.querySelectorAll("details[open]") : [];
      if (!open.length) return;
      for (var i = 0; i < open.length; i++) open[i].open = false;
      select(card);
      event.preventDefault();
      return;
    }
    if (typing(event.target)) return;
    switch (event.key) {
      case "j": move(1); break;
      case "k": move(-1); break;
      case "a": openDecision("approve"); break;
      case "r": openDecision("reject"); break;
      case "?": toggleHelp(); break;
      default: return;
    }
    event.preventDefault();
  });

  document.addEventListener("click", function (event) {
    if (event.target.closest && event.target.closest("[data-keys-help]")) toggleHelp();
  });

  // After a decision the card comes back decided: move on to the next pending batch. After a refusal it comes
  // back with the error: keep it selected, with the focus on the field to fix.
  var deciding = null;
  document.addEventListener("htmx:beforeRequest", function (event) {
    var form = event.detail.elt && event.detail.elt.closest ? event.detail.elt.closest(".decide-form") : null;
    var card = form ? form.closest(".batch-card") : null;
    deciding = card ? card.id : null;
  });
  document.addEventListener("htmx:afterSettle", function () {
    readSkew();
    tick();
    if (!deciding) return;
    var card = document.getElementById(deciding);
    deciding = null;
    if (!card) return;
    if (card.getAttribute("data-status") === "pending") {
      select(card);
      var bad = card.querySelector("details[open] .field-error");
      var field = bad ? bad.parentNode.querySelector("select, input") : null;
      if (field) field.focus();
      return;
    }
    var list = cards();
    var after = list.slice(list.indexOf(card) + 1).concat(list.slice(0, list.indexOf(card)));
    for (var i = 0; i < after.length; i++) {
      if (after[i].getAttribute("data-status") === "pending" && !after[i].classList.contains("batch-expired")) {
        select(after[i]);
        return;
      }
    }
    select(card);
  });

  function start() {
    readSkew();
    tick();
    window.setInterval(tick, 1000);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
