/* memdesk graph page: draws #graph-data with vis-network (vendored, static/vendor/vis-network/) in #graph-canvas.
   Clicking a node loads its panel (HTMX fragment); double-clicking focuses its neighbourhood. The data arrives as
   JSON (json_script) and vis-network draws labels as canvas text, so stored markup is never HTML here. */
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

  function draw() {
    var canvas = document.getElementById("graph-canvas");
    var data = readData();
    if (network) { network.destroy(); network = null; window.memdeskGraph = null; }
    if (!canvas || !data || typeof window.vis === "undefined") return;
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
      physics: {
        solver: "forceAtlas2Based",
        forceAtlas2Based: { gravitationalConstant: -60, springLength: 110 },
        stabilization: { iterations: big ? 120 : 250 },
      },
      interaction: { hover: true, tooltipDelay: 150, navigationButtons: false, keyboard: false },
    });
    window.memdeskGraph = network;
    network.once("stabilizationIterationsDone", function () {
      network.setOptions({ physics: false });
      canvas.setAttribute("data-rendered", "true");
    });
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
