/* memdesk discovery inbox (review/discoveries.py): the keyboard (j/k move, e evidence path, g open in graph,
   p pin or unpin, z snooze, d dismiss, ? help) and each card's evidence path, drawn with the vendored
   vis-network when its <details> opens. The path arrives as JSON (json_script); vis-network draws labels as
   canvas text, so stored markup never becomes HTML. Works on cards swapped in by HTMX. */
(function () {
  "use strict";

  var selectedId = null;

  function inbox() { return document.getElementById("inbox"); }
  function cards() { return Array.prototype.slice.call(document.querySelectorAll("#inbox .discovery-card")); }

  function selected() {
    var active = document.activeElement;
    var card = active && active.closest ? active.closest(".discovery-card") : null;
    if (card) return card;
    return selectedId ? document.getElementById(selectedId) : null;
  }

  function select(card) {
    if (!card) return;
    cards().forEach(function (c) {
      c.classList.toggle("is-selected", c === card);
      if (c === card) c.setAttribute("aria-current", "true");
      else c.removeAttribute("aria-current");
    });
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

  function current() { return selected() || move(1); }

  function submit(form) {
    if (!form) return false;
    if (form.requestSubmit) form.requestSubmit();
    else form.submit();
    return true;
  }

  function act(names) {
    var card = current();
    if (!card) return;
    for (var i = 0; i < names.length; i++) {
      var button = card.querySelector("button[data-action='" + names[i] + "']");
      if (button && submit(button.form)) return;
    }
    if (window.memdeskToast) window.memdeskToast("That cannot be done to this discovery.", "info");
  }

  function snooze() {
    var card = current();
    var field = card ? card.querySelector(".snooze-form input[name=until]") : null;
    if (field) field.focus();
    else if (window.memdeskToast) window.memdeskToast("This discovery cannot be snoozed.", "info");
  }

  function toggleEvidence() {
    var card = current();
    var details = card ? card.querySelector("details.evidence-path") : null;
    if (details) details.open = !details.open;
  }

  function openGraph() {
    var card = current();
    var link = card ? card.querySelector("a.open-in-graph") : null;
    if (link) window.location.href = link.href;
  }

  // --- the evidence path -------------------------------------------------------------------------------------

  function drawPath(details) {
    var id = details.getAttribute("data-path-for");
    var box = document.getElementById("path-canvas-" + id);
    var data = document.getElementById("path-data-" + id);
    if (!box || !data || box.getAttribute("data-rendered") === "true" || typeof window.vis === "undefined") return;
    var path;
    try { path = JSON.parse(data.textContent); } catch (e) { return; }
    var nodes = new window.vis.DataSet(path.nodes.map(function (n) {
      var pair = n.role === "pair";
      return {
        id: n.id, label: n.label, title: n.label + (pair ? " (the pair)" : " (shared neighbour)"),
        shape: "dot", size: pair ? 18 : 11,
        color: pair ? { background: "#d6c4f2", border: "#5a2a8a" } : { background: "#8fb0ff", border: "#2456c7" },
        borderWidth: pair ? 3 : 1,
      };
    }));
    var edges = path.edges.map(function (e, k) {
      return { id: "f" + k, from: e.from, to: e.to, label: e.label, title: e.label, arrows: "to", color: "#5d6675" };
    });
    var pair = path.nodes.filter(function (n) { return n.role === "pair"; });
    if (pair.length === 2) {
      edges.push({ id: "pair", from: pair[0].id, to: pair[1].id, dashes: true, color: "#7b3fb5", width: 2,
                   label: "discovered", title: "no fact links them" });
    }
    var network = new window.vis.Network(box, { nodes: nodes, edges: new window.vis.DataSet(edges) }, {
      physics: { solver: "forceAtlas2Based", stabilization: { iterations: 150 } },
      edges: { font: { size: 11, color: "#5d6675", strokeWidth: 3, align: "middle" }, smooth: { type: "continuous" } },
      nodes: { font: { face: "system-ui, sans-serif", color: "#1d2330" } },
      interaction: { hover: true, keyboard: false },
    });
    network.once("stabilizationIterationsDone", function () {
      network.setOptions({ physics: false });
      box.setAttribute("data-rendered", "true");
    });
  }

  document.addEventListener("toggle", function (event) {
    var details = event.target;
    if (details && details.matches && details.matches("details.evidence-path") && details.open) drawPath(details);
  }, true);

  // --- keys ---------------------------------------------------------------------------------------------------

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
    if (!inbox()) return;
    var help = document.getElementById("keys-help");
    if (help && help.open) return;
    if (typing(event.target)) return;
    switch (event.key) {
      case "j": move(1); break;
      case "k": move(-1); break;
      case "e": toggleEvidence(); break;
      case "g": openGraph(); break;
      case "p": act(["pin", "unpin"]); break;
      case "d": act(["dismiss"]); break;
      case "z": snooze(); break;
      case "?": toggleHelp(); break;
      default: return;
    }
    event.preventDefault();
  });

  document.addEventListener("click", function (event) {
    if (event.target.closest && event.target.closest("[data-keys-help]")) toggleHelp();
  });

  // After an action the card comes back: move on to the next open one (or keep it selected after an error).
  var acting = null;
  document.addEventListener("htmx:beforeRequest", function (event) {
    var elt = event.detail.elt;
    var card = elt && elt.closest ? elt.closest(".discovery-card") : null;
    acting = card ? card.id : null;
  });
  document.addEventListener("htmx:afterSettle", function () {
    if (!acting) return;
    var card = document.getElementById(acting);
    acting = null;
    if (!card) return;
    if (card.querySelector(".queue-error")) { select(card); return; }
    var list = cards();
    var at = list.indexOf(card);
    var after = list.slice(at + 1).concat(list.slice(0, at));
    for (var i = 0; i < after.length; i++) {
      if (after[i].getAttribute("data-status") === "open") { select(after[i]); return; }
    }
    select(card);
  });
})();
