/* memdesk queues (review/queue.py): live time-limit, claim and undo countdowns; the compact list (one line
   per item, the selected one open, as a pane beside the list on a wide screen); keyboard shortcuts (j/k move,
   a approve (at once when it supersedes nothing), r reject, e edit then approve (on a batch: pick its facts),
   1-9 pick a reason in an open picker, s skip, c claim/release, u undo, ? help); the undo toast; the bulk
   panel.
   The list is #desk[data-queue]: its cards are .queue-card (id "<kind>-<id>", data-status, data-held,
   data-stale, ...); the desk names its items (data-noun), says when one is flagged (data-warn-secs), what an
   expired countdown reads (data-expired-text) and whether the end of the time limit decides the item
   (data-expiry-decides="false": it only turns overdue).
   Text only: never innerHTML. Works on cards swapped in by HTMX: everything is looked up when needed. */
(function () {
  "use strict";

  var skew = 0; // the server's clock minus this browser's, so the countdown agrees with the server

  var skewFrom = null; // the server time the skew was read from: only a freshly rendered desk gives a new one

  function desk() { return document.querySelector("#desk[data-queue]"); }

  function deskSetting(name, fallback) {
    var d = desk();
    var value = d ? d.getAttribute(name) : null;
    return value === null || value === "" ? fallback : value;
  }

  function noun() { return deskSetting("data-noun", "item"); }

  function readSkew() {
    var d = desk();
    var stamp = d ? d.getAttribute("data-server-now") || "" : "";
    if (stamp === skewFrom) return; // a card swap leaves the desk's (older) time: keep the skew
    var server = Date.parse(stamp);
    if (!isNaN(server)) {
      skew = server - Date.now();
      skewFrom = stamp;
    }
  }

  function pad(n) { return (n < 10 ? "0" : "") + n; }

  // Same wording as the server's ``countdown`` filter.
  function format(ms) {
    if (ms <= 0) return deskSetting("data-expired-text", "expired");
    var s = Math.floor(ms / 1000);
    var h = Math.floor(s / 3600);
    var m = Math.floor((s % 3600) / 60);
    if (h >= 48) return Math.floor(h / 24) + " d " + (h % 24) + " h left";
    return h ? h + " h " + pad(m) + " min left" : m + " min " + pad(s % 60) + " s left";
  }

  function short(ms) {
    var s = Math.max(0, Math.ceil(ms / 1000));
    var m = Math.floor(s / 60);
    return m ? m + " min " + pad(s % 60) + " s left" : s + " s left";
  }

  function tickClaimsAndUndo(now) {
    var claims = document.querySelectorAll("#desk [data-claim-until]");
    for (var i = 0; i < claims.length; i++) {
      var badge = claims[i];
      var left = Date.parse(badge.getAttribute("data-claim-until")) - now;
      var label = badge.querySelector(".claim-left");
      if (left <= 0) {
        // claims end by themselves; the server compares the same times
        badge.classList.add("claim-expired");
        if (label) label.textContent = "claim expired";
        var card = badge.closest(".queue-card");
        if (card) card.removeAttribute("data-held");
      } else if (label) {
        var text = short(left);
        if (label.textContent !== text) label.textContent = text;
      }
    }
    var undos = document.querySelectorAll("[data-undo-until]");
    for (var j = 0; j < undos.length; j++) {
      var el = undos[j];
      var until = Date.parse(el.getAttribute("data-undo-until"));
      if (until - now > 0) continue;
      el.removeAttribute("data-undo-until");
      if (el.classList.contains("undo-form")) el.remove();
      else if (el.classList.contains("toast-undo")) el.remove();
    }
    var counters = document.querySelectorAll(".toast-undo [data-undo-left]");
    for (var k = 0; k < counters.length; k++) {
      var c = counters[k];
      c.textContent = "(" + Math.max(0, Math.floor((Number(c.getAttribute("data-undo-left")) - now) / 1000)) + " s)";
    }
  }

  function tick() {
    var now = Date.now() + skew;
    var warnMs = Number(deskSetting("data-warn-secs", "0")) * 1000;
    var decides = deskSetting("data-expiry-decides", "true") !== "false";
    tickClaimsAndUndo(now);
    var timers = document.querySelectorAll(".queue-pending [data-expires]");
    for (var i = 0; i < timers.length; i++) {
      var el = timers[i];
      var left = Date.parse(el.getAttribute("data-expires")) - now;
      if (isNaN(left)) continue;
      var text = format(left);
      if (el.textContent !== text) el.textContent = text;
      el.classList.toggle("countdown-warn", left > 0 && left < warnMs);
      el.classList.toggle("countdown-expired", left <= 0);
      var card = el.closest(".queue-card");
      if (!card) continue;
      card.classList.toggle("queue-warn", left > 0 && left < warnMs);
      if (left <= 0 && decides && !card.classList.contains("queue-expired")) {
        // the server refuses decisions now; the system decides the item when its time is up
        card.classList.add("queue-expired");
        var fields = card.querySelectorAll(".decide button, .decide select, .decide input");
        for (var j = 0; j < fields.length; j++) fields[j].disabled = true;
      }
    }
  }

  // --- keyboard --------------------------------------------------------------------------------------------

  var selectedId = null;

  function cards() { return Array.prototype.slice.call(document.querySelectorAll("#desk .queue-card")); }

  function selected() {
    var active = document.activeElement;
    var card = active && active.closest ? active.closest(".queue-card") : null;
    if (card) return card;
    return selectedId ? document.getElementById(selectedId) : null;
  }

  function select(card) {
    if (!card) return;
    var list = cards();
    for (var i = 0; i < list.length; i++) {
      list[i].classList.toggle("is-selected", list[i] === card);
      list[i].classList.toggle("is-open", list[i] === card); // the compact list opens one item at a time
      if (list[i] === card) list[i].setAttribute("aria-current", "true");
      else list[i].removeAttribute("aria-current");
    }
    selectedId = card.id;
    loadBody(card);
    placePane();
    card.focus({ preventScroll: true });
    card.scrollIntoView({ block: "nearest" });
  }

  // The compact list renders only its open item's body; another's is loaded when that item is opened (its
  // placeholder links to the item alone, the way without JavaScript). Keys pressed meanwhile wait for it and
  // are replayed in order, so a fast reviewer's a/r/e/c and reason digits act on the item they meant.
  var loading = null; // the id of the card whose body is on its way
  var waiting = []; // keys pressed while it loads

  function lazyBody(card) {
    return card ? card.querySelector(":scope > .queue-body[data-lazy-url]") : null;
  }

  // the card's body is there (true), or is being loaded and ``key`` will be replayed once it is (false)
  function ready(card, key) {
    if (!lazyBody(card)) return true;
    waiting.push(key);
    loadBody(card);
    return false;
  }

  function loadBody(card) {
    var body = lazyBody(card);
    if (!body || loading === card.id) return;
    var id = card.id;
    loading = id;
    fetch(body.getAttribute("data-lazy-url"), { headers: { "HX-Request": "true" }, credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) throw new Error(String(response.status));
        return response.text();
      })
      .then(function (html) {
        var old = document.getElementById(id);
        if (!old || !lazyBody(old)) return;
        var tpl = document.createElement("template");
        tpl.innerHTML = html.trim();
        var fresh = tpl.content.querySelector(".queue-card");
        if (!fresh) return;
        old.replaceWith(fresh);
        if (window.htmx) window.htmx.process(fresh);
        if (selectedId === id) select(fresh);
        tick();
      })
      .catch(function () {
        waiting = [];
        if (window.memdeskToast) window.memdeskToast("Could not load this " + noun() + ": open its link instead.", "error");
      })
      .then(function () {
        if (loading === id) loading = null;
        replay();
      });
  }

  function replay() {
    while (!loading && waiting.length) {
      var key = waiting.shift();
      onKey({
        key: key, target: document.activeElement || document.body, defaultPrevented: false,
        ctrlKey: false, metaKey: false, altKey: false, preventDefault: function () {}
      });
    }
  }

  // On a wide screen the open item's detail is a pane beside the list, level with its line (CSS puts it
  // there when the desk is wide enough; on a narrow one it opens under its line and this does nothing).
  function placePane() {
    var d = desk();
    var box = d ? d.querySelector(".queue-items") : null;
    var card = box ? box.querySelector(".queue-card.is-open") : null;
    var body = card ? card.querySelector(".queue-body") : null;
    if (!box) return;
    if (!body || window.getComputedStyle(body).position !== "absolute") {
      box.style.minHeight = "";
      return;
    }
    var top = Math.max(0, card.offsetTop);
    body.style.top = top + "px";
    box.style.minHeight = top + body.offsetHeight + "px";
  }
  window.addEventListener("resize", placePane);

  // The ticked facts of a batch that would supersede a current fact (an approval of those needs a reason).
  function quickApprove(card) {
    var form = card.querySelector("form.decide-form[id^='approve-form-']");
    if (!form) return null;
    var boxes = card.querySelectorAll(".fact-pick");
    if (!boxes.length) return form.hasAttribute("data-quick") ? form : null;
    for (var i = 0; i < boxes.length; i++) {
      var row = boxes[i].closest(".fact-row");
      if (boxes[i].checked && row && row.getAttribute("data-effect") === "supersede") return null;
    }
    return form;
  }

  function move(step) {
    var list = cards();
    if (!list.length) return null;
    var i = list.indexOf(selected());
    var next = i < 0 ? list[step > 0 ? 0 : list.length - 1] : list[Math.min(list.length - 1, Math.max(0, i + step))];
    select(next);
    return next;
  }

  function decidable(card) {
    return card.getAttribute("data-status") === "pending" && !card.classList.contains("queue-expired") &&
      !card.hasAttribute("data-stale");
  }

  function openDecision(kind) {
    var card = selected() || move(1);
    if (!card || !ready(card, { approve: "a", reject: "r", edit: "e" }[kind])) return;
    if (kind === "edit" && decidable(card)) {
      // a batch: "edit" is choosing which of its facts to approve (Space ticks, Enter approves)
      var box = card.querySelector(".fact-pick");
      if (box && !card.querySelector(".decide details[data-decision='edit']")) {
        box.focus();
        return;
      }
    }
    if (kind === "approve" && decidable(card)) {
      var quick = quickApprove(card); // nothing current is superseded: one key approves, no reason asked
      if (quick && submit(quick)) return;
    }
    var details = card.querySelector(".decide details[data-decision='" + kind + "']");
    if (!details || !decidable(card)) {
      var holder = card.getAttribute("data-claimed-by");
      var text = decidable(card) && card.hasAttribute("data-held") && holder
        ? "Claimed by " + holder + ": wait for the claim to end, or ask them."
        : decidable(card) && kind === "edit" ? "This " + noun() + " cannot be edited."
        : decidable(card) ? "Only reviewers decide here."
        : "This " + noun() + " cannot be decided any more.";
      if (window.memdeskToast) window.memdeskToast(text, "info");
      return;
    }
    var all = card.querySelectorAll("details[data-decision]");
    for (var i = 0; i < all.length; i++) all[i].open = all[i] === details;
    // the edit form starts at the verdict; the others at their reason picker
    var field = details.querySelector(kind === "edit" ? "select[name=verdict]" : "select[name=reason]");
    if (field) field.focus();
  }

  function pendingCards() {
    return cards().filter(decidable);
  }

  // 1-9 in an open reason picker: pick that reason and decide; "other" asks for the note first
  function pickReason(select, digit) {
    var option = select.options[digit]; // options[0] is the "Pick a reason…" prompt
    if (!option || !option.value) return false;
    select.value = option.value;
    select.dispatchEvent(new Event("change", { bubbles: true }));
    var form = select.form;
    var note = form ? form.querySelector("input[name=note]") : null;
    if (option.value === "other") {
      if (note) note.focus();
      return true;
    }
    submit(form);
    return true;
  }

  function reasonPicker(target) {
    if (target && target.matches && target.matches(".queue-card details[open] select[name=reason]")) return target;
    if (typing(target)) return null;
    var card = selected();
    var open = card ? card.querySelectorAll("details[open] select[name=reason]") : [];
    return open.length === 1 ? open[0] : null;
  }

  // s: skip to the next pending item (wrapping around), leaving this one as it is
  function skip() {
    var list = cards();
    var current = selected();
    var i = list.indexOf(current);
    var after = list.slice(i + 1).concat(list.slice(0, i + 1));
    for (var k = 0; k < after.length; k++) {
      if (after[k] !== current && pendingCards().indexOf(after[k]) >= 0) {
        select(after[k]);
        return;
      }
    }
    if (window.memdeskToast) window.memdeskToast("No other pending " + noun() + " to skip to.", "info");
  }

  function submit(form) {
    if (!form) return false;
    if (form.requestSubmit) form.requestSubmit();
    else form.submit();
    return true;
  }

  // c: claim the selected item, or release one's own claim
  function claim() {
    var card = selected() || move(1);
    if (!card || !ready(card, "c")) return;
    if (!submit(card.querySelector(".claim-form")) && window.memdeskToast) {
      window.memdeskToast(
        card.getAttribute("data-held") ? "Another reviewer holds this " + noun() + "." : "This " + noun() + " cannot be claimed.",
        "info"
      );
    }
  }

  // u: undo the last decision while its window is open
  var lastUndo = null;

  function undo() {
    var now = Date.now() + skew;
    if (!lastUndo || Date.parse(lastUndo.until) <= now) {
      lastUndo = null;
      // after a reload: the selected card's undo, else the only one still offered on the page
      var card = selected();
      var forms = document.querySelectorAll("#desk .undo-form");
      var form = (card && card.querySelector(".undo-form")) || (forms.length === 1 ? forms[0] : null);
      if (submit(form)) return;
      if (window.memdeskToast) window.memdeskToast("Nothing to undo: the undo window has passed.", "info");
      return;
    }
    var target = lastUndo;
    lastUndo = null;
    var card = document.getElementById(target.card);
    if (submit(card ? card.querySelector(".undo-form") : null)) return;
    if (!window.htmx) return;
    if (card) {
      window.htmx.ajax("POST", target.url, { target: "#" + target.card, swap: "outerHTML" });
      return;
    }
    // the card left the page (the list moved on): undo it, then show the list again with it back
    window.htmx.ajax("POST", target.url, { source: document.body, swap: "none" }).then(function () {
      window.htmx.trigger(document.body, "memdesk:desk-changed");
    });
  }

  // When the last pending item of a page is decided and more are pending, the list reloads (the decided ones
  // drop out of it) and its first pending item is selected: a reviewer goes on without touching the mouse.
  var reloadAfterClear = false;

  function reloadIfCleared() {
    var d = desk();
    if (!d || d.getAttribute("data-status") !== "pending" || pendingCards().length) return false;
    var left = document.getElementById("desk-pending-count");
    if (!left || Number(left.getAttribute("data-count") || "0") <= 0 || !window.htmx) return false;
    reloadAfterClear = true;
    window.htmx.trigger(document.body, "memdesk:desk-changed");
    return true;
  }

  // The server offers the undo after a decision: a toast with an Undo button for the window's length.
  document.addEventListener("memdesk:undo", function (event) {
    var d = event.detail || {};
    if (!d.url || !d.until || !d.card) return;
    lastUndo = { card: d.card, url: d.url, until: d.until };
    var box = document.getElementById("toasts");
    if (!box) return;
    var old = box.querySelectorAll(".toast-undo");
    for (var i = 0; i < old.length; i++) old[i].remove();
    var item = document.createElement("div");
    item.className = "toast toast-info toast-undo";
    item.setAttribute("role", "status");
    item.setAttribute("data-undo-until", d.until);
    item.setAttribute("data-card", String(d.card));
    var span = document.createElement("span");
    span.textContent = String(d.text || "Undo the decision") + " ";
    var left = document.createElement("span");
    left.className = "undo-left";
    left.setAttribute("data-undo-left", String(Date.parse(d.until)));
    span.appendChild(left);
    var button = document.createElement("button");
    button.type = "button";
    button.className = "toast-undo-button";
    button.textContent = "Undo";
    button.addEventListener("click", function () {
      lastUndo = { card: d.card, url: d.url, until: d.until };
      item.remove();
      undo();
    });
    var close = document.createElement("button");
    close.type = "button";
    close.className = "toast-close";
    close.setAttribute("aria-label", "Dismiss");
    close.textContent = "×";
    item.appendChild(span);
    item.appendChild(button);
    item.appendChild(close);
    box.appendChild(item);
    tick();
  });

  function toggleHelp() {
    var help = document.getElementById("keys-help");
    if (!help) return;
    if (help.open) help.close();
    else if (help.showModal) help.showModal();
    else help.setAttribute("open", "");
  }

  function typing(el) {
    if (el && el.tagName === "INPUT" && /^(checkbox|radio)$/.test(el.type)) return false;
    return el && (el.isContentEditable || /^(INPUT|SELECT|TEXTAREA)$/.test(el.tagName));
  }

  document.addEventListener("keydown", function (event) {
    if (loading && !event.defaultPrevented && !event.ctrlKey && !event.metaKey && !event.altKey && desk() &&
        !typing(event.target) && (event.key.length === 1 || event.key === "Enter" || event.key === "Escape")) {
      waiting.push(event.key); // the selected item's body is on its way: act once it is in
      event.preventDefault();
      return;
    }
    onKey(event);
  });

  function onKey(event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (!desk()) return;
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
    if (/^[1-9]$/.test(event.key)) {
      var picker = reasonPicker(event.target);
      if (picker && pickReason(picker, Number(event.key))) event.preventDefault();
      return;
    }
    if (event.key === "Enter" && event.target.classList && event.target.classList.contains("fact-pick")) {
      // Enter on a fact's box approves the ticked facts (asking for a reason if one would supersede)
      event.preventDefault();
      openDecision("approve");
      return;
    }
    if (typing(event.target)) return;
    switch (event.key) {
      case "j": move(1); break;
      case "k": move(-1); break;
      case "a": openDecision("approve"); break;
      case "r": openDecision("reject"); break;
      case "e": openDecision("edit"); break;
      case "s": skip(); break;
      case "c": claim(); break;
      case "u": undo(); break;
      case "?": toggleHelp(); break;
      default: return;
    }
    event.preventDefault();
  }

  document.addEventListener("click", function (event) {
    if (!event.target.closest) return;
    // a line of the compact list opens its item (the link goes to the item alone without JavaScript)
    var line = event.target.closest("#desk .queue-line");
    if (line && !event.target.closest("button, form, a:not(.queue-open)")) {
      var item = line.closest(".queue-card");
      if (item) {
        event.preventDefault();
        select(item);
      }
    }
    if (event.target.closest("[data-keys-help]")) toggleHelp();
    var close = event.target.closest("[data-close-bulk]");
    var panel = document.getElementById("bulk-panel");
    if (close && panel && panel.contains(close)) {
      event.preventDefault(); // a link back to the desk without JavaScript; here it just closes the panel
      panel.textContent = "";
    }
  });

  // After a decision the card comes back decided: move on to the next pending item. After a refusal it comes
  // back with the error: keep it selected, with the focus on the field to fix.
  var deciding = null;
  document.addEventListener("htmx:beforeRequest", function (event) {
    var elt = event.detail.elt;
    var form = elt && elt.closest ? elt.closest(".decide-form, .undo-form, .claim-form") : null;
    var card = form ? form.closest(".queue-card") : null;
    deciding = card ? card.id : null;
  });
  document.addEventListener("htmx:afterSettle", function (event) {
    readSkew();
    tick();
    placePane();
    if (reloadAfterClear && event.target && event.target.id === "desk") {
      reloadAfterClear = false;
      var first = pendingCards()[0];
      if (first) select(first);
      return;
    }
    if (!deciding) return;
    var card = document.getElementById(deciding);
    deciding = null;
    if (!card) return;
    if (card.getAttribute("data-status") === "pending") {
      var toasts = document.querySelectorAll(".toast-undo[data-card='" + card.id + "']");
      for (var t = 0; t < toasts.length; t++) toasts[t].remove(); // undone: nothing left to undo
      select(card);
      var bad = card.querySelector("details[open] .field-error");
      var field = bad ? bad.parentNode.querySelector("select, input") : null;
      if (field) field.focus();
      return;
    }
    var list = cards();
    var after = list.slice(list.indexOf(card) + 1).concat(list.slice(0, list.indexOf(card)));
    for (var i = 0; i < after.length; i++) {
      if (decidable(after[i])) {
        select(after[i]);
        return;
      }
    }
    if (reloadIfCleared()) return;
    select(card);
  });

  function start() {
    readSkew();
    tick();
    placePane();
    window.setInterval(tick, 1000);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
