// On a phone a wide table scrolls sideways, and the column a reader came for can be off
// the screen. So on a narrow screen every table a reader meets as the page opens (every one
// outside a collapsed block, in every content tab) and the first of each <details> is
// stacked: a block per row, each cell under its column's name. This script gives each cell
// its column's name and marks the table; atlas.css stacks it. A mark, not a class: the
// theme styles only tables without a class. The other tables of a <details> are secondary,
// and may scroll.
(function () {
  "use strict";

  function stacked(article) {
    var all = Array.prototype.slice.call(article.querySelectorAll("table"));
    var found = all.filter(function (table) { return !table.closest("details"); });
    article.querySelectorAll("details").forEach(function (details) {
      var inside = all.filter(function (table) { return table.closest("details") === details; });
      if (inside.length) found.push(inside[0]);
    });
    return found;
  }

  // Again for a table already marked: a script may have redrawn its rows.
  function mark(table) {
    if (!table.tHead) return;
    var names = Array.prototype.map.call(table.tHead.rows[0].cells, function (th) {
      return th.textContent.trim();
    });
    Array.prototype.forEach.call(table.tBodies, function (body) {
      Array.prototype.forEach.call(body.rows, function (row) {
        Array.prototype.forEach.call(row.cells, function (cell, column) {
          cell.setAttribute("data-label", names[column] || "");
        });
      });
    });
    table.setAttribute("data-atlas-stack", "");
  }

  var watched = typeof WeakSet !== "undefined" ? new WeakSet() : null;

  // A page's script (the guide's chooser, a sorted header) may redraw a table after the page loads.
  function enable(root) {
    root.querySelectorAll("article").forEach(function (article) {
      stacked(article).forEach(mark);
      if (!watched || watched.has(article)) return;
      watched.add(article);
      new MutationObserver(function () { stacked(article).forEach(mark); })
        .observe(article, { childList: true, subtree: true });
    });
  }

  function start() {
    enable(document);
  }

  if (typeof document$ !== "undefined") {
    document$.subscribe(start);
  } else {
    document.addEventListener("DOMContentLoaded", start);
  }
})();
