// Click a table header to sort its rows; click again to reverse. Cells are compared as
// numbers when they start with one (units such as "12.3 µs", "4 MiB", "1.5×" are scaled
// so mixed units sort correctly); text such as "not measured" or "never" sorts after
// every number in both directions, so gaps never hide the measured values.
(function () {
  "use strict";
  var UNITS = { "": 1, ns: 1e-9, "µs": 1e-6, us: 1e-6, ms: 1e-3, s: 1, B: 1,
                KiB: 1024, MiB: 1048576, GiB: 1073741824, "×": 1, "%": 1 };
  var NUMBER = /^([-+]?\d*\.?\d+(?:e[-+]?\d+)?)\s*(ns|µs|us|ms|s|B|KiB|MiB|GiB|×|%)?(?![\w])/;

  function key(cell) {
    var text = cell.textContent.trim();
    var match = text.replace(/,/g, "").match(NUMBER);
    if (match) return { num: parseFloat(match[1]) * UNITS[match[2] || ""] };
    return { text: text.toLowerCase() };
  }

  function compare(a, b, direction) {
    var aNum = "num" in a, bNum = "num" in b;
    if (aNum && bNum) return direction * (a.num - b.num);
    if (aNum !== bNum) return aNum ? -1 : 1;
    return direction * a.text.localeCompare(b.text);
  }

  function sortBy(table, header, column) {
    var direction = header.getAttribute("aria-sort") === "ascending" ? -1 : 1;
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows).map(function (row) {
      return { row: row, key: key(row.cells[column] || row) };
    });
    rows.sort(function (a, b) { return compare(a.key, b.key, direction); });
    rows.forEach(function (entry) { body.appendChild(entry.row); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      th.removeAttribute("aria-sort");
    });
    header.setAttribute("aria-sort", direction === 1 ? "ascending" : "descending");
  }

  function enable(root) {
    root.querySelectorAll("article table").forEach(function (table) {
      if (!table.tHead || !table.tBodies.length || table.dataset.sortable) return;
      table.dataset.sortable = "true";
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, column) {
        th.classList.add("atlas-sortable");
        th.title = "Sort by this column";
        th.addEventListener("click", function () { sortBy(table, th, column); });
      });
    });
  }

  // Material re-renders pages without a reload when instant navigation is on;
  // document$ fires for every page in both cases.
  if (typeof document$ !== "undefined") {
    document$.subscribe(function () { enable(document); });
  } else {
    document.addEventListener("DOMContentLoaded", function () { enable(document); });
  }
})();
