// The memory list's search box (issue 19 item 8) and the timeline key picker's (item 7): a box `#q` whose
// results swap into `#results`, which carries the query it shows in `data-query`. As-you-type runs on `input`
// events (typing, paste, IME commit, autofill, clearing), set in the template. Here: a request whose query is the one already shown or on
// its way is not sent again, so Enter (the form's submit) after the as-you-type request costs nothing and Enter
// before it costs one request; and the box keeps what was typed across Back/Forward (htmx history snapshots
// keep attributes, not a typed value, and are taken after the next query was typed).
(function () {
  "use strict";
  var last = null; // the query string of the results shown or requested last

  function keyOf(detail) {
    var params = new URLSearchParams();
    var p = detail.parameters || {};
    var names = Object.keys(p).sort();
    names.forEach(function (name) { [].concat(p[name]).forEach(function (v) { params.append(name, v); }); });
    return detail.path + "?" + params.toString();
  }

  document.addEventListener("htmx:configRequest", function (evt) {
    var target = evt.detail.target;
    if (!target || target.id !== "results" || evt.detail.verb !== "get") return;
    var key = keyOf(evt.detail);
    if (key === last) { evt.preventDefault(); return; }
    last = key;
  });

  document.addEventListener("htmx:responseError", function () { last = null; });
  document.addEventListener("htmx:sendError", function () { last = null; });

  // the box shows the query of the results on screen: saved with the snapshot, put back on restore
  function shownQuery() {
    var results = document.getElementById("results");
    return results ? results.getAttribute("data-query") || "" : null;
  }
  document.addEventListener("htmx:beforeHistorySave", function () {
    var box = document.getElementById("q"), shown = shownQuery();
    if (box && shown !== null) box.setAttribute("value", shown);
  });
  document.addEventListener("htmx:historyRestore", function () {
    last = null;
    var box = document.getElementById("q"), shown = shownQuery();
    if (box && shown !== null) box.value = shown;
  });
})();
