/* memdesk graph page: draws #graph-data with vis-network (vendored, static/vendor/vis-network/) in #graph-canvas.
   Clicking a node loads its panel (HTMX fragment); double-clicking focuses its neighbourhood. The data arrives as
   JSON (json_script) and vis-network draws labels as canvas text, so stored markup is never HTML here.

   A stable layout (issue 19 item 16): every entity's position is kept in localStorage, keyed by the agent and
   the entity's id, and reused on the next drawing; an entity seen for the first time starts at a place derived
   from its id (not at random), beside a neighbour already placed when it has one, and only the new entities
   move while the layout settles. So after a merge or a retraction (which redraws) the rest of the graph stays
   where the curator left it. Zoom in / out / fit buttons drive the view. */
(function () {
  "use strict";

  var network = null;

  function readData() {
    var el = document.getElementById("graph-data");
    if (!el) return null;
    try { return JSON.parse(el.textContent); } catch (e) { return null; }
  }

  function loadEntity(name) {
    var section = document.getElementById("graph");
    if (!section || !window.htmx) return;
    var url = section.getAttribute("data-entity-url") + "?name=" + encodeURIComponent(name);
    window.htmx.ajax("GET", url, { target: "#graph-side", swap: "innerHTML" });
  }

  function focusEntity(name) {
    var form = document.getElementById("graph-filters");
    var input = document.getElementById("g-entity");
    if (!form || !input) return;
    input.value = name;
    if (window.htmx) window.htmx.trigger(form, "submit");
    else form.submit();
  }

  var MAX_KEPT = 5000; // positions kept per agent (the oldest are dropped past this)

  function storeKey() {
    var section = document.getElementById("graph");
    return "memdesk-graph-positions:" + ((section && section.getAttribute("data-agent")) || "");
  }

  function loadPositions() {
    try { return JSON.parse(window.localStorage.getItem(storeKey()) || "{}") || {}; } catch (e) { return {}; }
  }

  function savePositions() {
    if (!network) return;
    var kept = loadPositions(), now = network.getPositions(), ids = Object.keys(now);
    ids.forEach(function (id) { delete kept[id]; kept[id] = { x: Math.round(now[id].x), y: Math.round(now[id].y) }; });
    var all = Object.keys(kept);
    if (all.length > MAX_KEPT) all.slice(0, all.length - MAX_KEPT).forEach(function (id) { delete kept[id]; });
    try { window.localStorage.setItem(storeKey(), JSON.stringify(kept)); } catch (e) { /* storage full or off */ }
  }

  // a place that depends only on the id: the same entity always starts at the same spot
  function seeded(id) {
    var h = 2166136261;
    for (var i = 0; i < id.length; i++) { h ^= id.charCodeAt(i); h = Math.imul(h, 16777619) >>> 0; }
    var angle = (h % 3600) / 3600 * 2 * Math.PI, radius = 150 + ((h >>> 12) % 450);
    return { x: Math.round(radius * Math.cos(angle)), y: Math.round(radius * Math.sin(angle)) };
  }

  function place(data) {
    var kept = loadPositions(), placed = {}, fresh = 0;
    data.nodes.forEach(function (n) { if (kept[n.id]) placed[n.id] = kept[n.id]; });
    data.nodes.forEach(function (n) {
      if (placed[n.id]) { n.x = placed[n.id].x; n.y = placed[n.id].y; n.fixed = true; return; }
      fresh += 1;
      var near = null;
      data.edges.forEach(function (e) {
        if (near) return;
        if (e.from === n.id && placed[e.to]) near = placed[e.to];
        else if (e.to === n.id && placed[e.from]) near = placed[e.from];
      });
      var p = seeded(String(n.id));
      if (near) p = { x: near.x + Math.round(p.x / 6), y: near.y + Math.round(p.y / 6) };
      n.x = p.x; n.y = p.y;
      placed[n.id] = p;
    });
    return fresh;
  }

  function tool(name) {
    if (!network) return;
    if (name === "fit") { network.fit({ animation: false }); return; }
    var scale = network.getScale() * (name === "zoom-in" ? 1.3 : 1 / 1.3);
    network.moveTo({ scale: Math.max(0.05, Math.min(scale, 8)), animation: false });
  }

  document.addEventListener("click", function (event) {
    var button = event.target && event.target.closest ? event.target.closest("[data-graph-tool]") : null;
    if (button) tool(button.getAttribute("data-graph-tool"));
  });

  function draw() {
    var canvas = document.getElementById("graph-canvas");
    var data = readData();
    if (network) { network.destroy(); network = null; window.memdeskGraph = null; }
    if (!canvas || !data || typeof window.vis === "undefined") return;
    var fresh = place(data);
    var nodes = new window.vis.DataSet(data.nodes);
    var edges = new window.vis.DataSet(data.edges.map(function (e) {
      return {
        id: e.id, from: e.from, to: e.to, label: e.label, title: e.title, dashes: e.dashes,
        width: e.quarantined || e.discovered ? 2 : 1 + 2 * e.trust,
        color: { color: e.color, highlight: e.color, hover: e.color },
      };
    }));
    var section = document.getElementById("graph") || canvas;
    // the focus entity, and the other end of a discovered pair ("open in graph" from the inbox)
    [section.getAttribute("data-entity"), section.getAttribute("data-pair")].forEach(function (focus) {
      var focused = focus ? nodes.get(focus) : null;
      if (!focused) return;
      var fill = (focused.color && focused.color.background) || "#8fb0ff";
      nodes.update({ id: focus, borderWidth: 4, color: { background: fill, border: "#1d2330" } });
    });
    var big = data.edges.length > 400;
    network = new window.vis.Network(canvas, { nodes: nodes, edges: edges }, {
      nodes: {
        shape: "dot",
        scaling: { min: 8, max: 42, label: { enabled: true, min: 12, max: 22 } },
        color: { background: "#8fb0ff", border: "#2456c7", highlight: { background: "#f0b14a", border: "#9a5b00" } },
        font: { face: "system-ui, sans-serif", color: "#1d2330" },
      },
      edges: {
        arrows: { to: { enabled: true, scaleFactor: 0.5 } },
        font: { size: 11, color: "#5d6675", strokeWidth: 3, align: "middle" },
        smooth: big ? false : { type: "continuous" },
      },
      layout: { randomSeed: 19, improvedLayout: false },
      physics: {
        enabled: fresh > 0, // nothing new: every entity is where it was, nothing to settle
        solver: "forceAtlas2Based",
        forceAtlas2Based: { gravitationalConstant: -60, springLength: 110 },
        stabilization: { iterations: big ? 120 : 250 },
      },
      interaction: { hover: true, tooltipDelay: 150, navigationButtons: false, keyboard: false },
    });
    window.memdeskGraph = network;
    function settled() {
      network.setOptions({ physics: false });
      nodes.update(nodes.getIds().map(function (id) { return { id: id, fixed: false }; }));
      savePositions();
      if (!fresh) network.fit({ animation: false });
      canvas.setAttribute("data-rendered", "true");
    }
    if (fresh) network.once("stabilizationIterationsDone", settled);
    else settled();
    network.on("dragEnd", function (params) { if (params.nodes && params.nodes.length) savePositions(); });
    network.on("click", function (params) {
      if (params.nodes && params.nodes.length) loadEntity(String(params.nodes[0]));
    });
    network.on("doubleClick", function (params) {
      if (params.nodes && params.nodes.length) focusEntity(String(params.nodes[0]));
    });
  }

  document.addEventListener("DOMContentLoaded", draw);
  document.addEventListener("htmx:afterSettle", function (event) {
    var target = event.detail && event.detail.elt;
    if (target && (target.id === "graph" || (target.querySelector && target.querySelector("#graph-data")))) draw();
  });

  // After a merge or a retract the server sends HX-Trigger memdesk:graph-changed: redraw with the same filters.
  document.addEventListener("memdesk:graph-changed", function () {
    if (!window.htmx || !document.getElementById("graph")) return;
    window.htmx.ajax("GET", window.location.pathname + window.location.search, { target: "#graph", swap: "outerHTML" });
  });
})();
