// posharness report: sort a table by a clicked header; show a number's provenance.
// No framework and nothing fetched, so the report works from file://.
(function () {
  "use strict";

  function sortKey(row, index, numeric) {
    var cell = row.cells[index];
    var raw = cell ? cell.getAttribute("data-v") : null;
    if (raw === null || raw === "") return null;
    if (!numeric) return raw.toLowerCase();
    var value = parseFloat(raw);
    return isNaN(value) ? null : value;
  }

  function sortBy(th) {
    var table = th.closest("table");
    var index = Number(th.getAttribute("data-col"));
    var numeric = th.getAttribute("data-type") === "num";
    var current = th.getAttribute("aria-sort");
    // Numbers first sort largest on top, text A to Z; a second click reverses.
    var descending = current ? current === "ascending" : numeric;
    table.querySelectorAll("th[aria-sort]").forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", descending ? "descending" : "ascending");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows).map(function (row, position) {
      return { row: row, key: sortKey(row, index, numeric), position: position };
    });
    rows.sort(function (a, b) {
      if (a.key === null || b.key === null) {  // missing values stay at the bottom
        return a.key === b.key ? a.position - b.position : a.key === null ? 1 : -1;
      }
      var order = a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
      return (descending ? -order : order) || a.position - b.position;
    });
    rows.forEach(function (item) { body.appendChild(item.row); });
  }

  function showProvenance(link) {
    var panel = document.getElementById("provenance");
    var source = document.getElementById(link.getAttribute("data-prov"));
    if (!panel || !source) return false;
    var body = source.querySelector(".prov-body");
    var copy = body.cloneNode(true);
    var metric = link.getAttribute("data-metric");
    copy.querySelectorAll("tr[data-metric]").forEach(function (tr) {
      if (tr.getAttribute("data-metric") === metric) tr.classList.add("current");
    });
    panel.querySelector(".panel-body").replaceChildren(copy);
    panel.querySelector(".panel-metric").textContent =
      source.querySelector("summary").textContent + " · " + metric.split("/").slice(1).join("/");
    document.querySelectorAll("a.value.active").forEach(function (a) { a.classList.remove("active"); });
    link.classList.add("active");
    panel.hidden = false;
    return true;
  }

  function hideProvenance() {
    var panel = document.getElementById("provenance");
    if (panel) panel.hidden = true;
    document.querySelectorAll("a.value.active").forEach(function (a) { a.classList.remove("active"); });
  }

  document.addEventListener("click", function (event) {
    var th = event.target.closest("table.sortable th[data-col]");
    if (th) { sortBy(th); return; }
    var link = event.target.closest("[data-prov]");
    if (link && showProvenance(link)) { event.preventDefault(); return; }
    if (event.target.closest("[data-close]")) hideProvenance();
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape") hideProvenance();
  });
})();
