// On a phone a wide table scrolls sideways, and the column a reader came for can be off
// the screen. A page's first table is where it puts its answer, so that table (and, when
// it sits in a content tab, the first table of each of that tab set's tabs) is stacked on
// a narrow screen: a block per row, each cell under its column's name. This script gives
// each cell its column's name and marks the table; atlas.css stacks it. A mark, not a
// class: the theme styles only tables without a class.
(function () {
  "use strict";

  function firstTables(article) {
    var first = article.querySelector("table");
    if (!first) return [];
    var tab = first.closest(".tabbed-block");
    if (!tab) return [first];
    return Array.prototype.map.call(tab.parentElement.children, function (block) {
      return block.querySelector("table");
    }).filter(Boolean);
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

  // A page's script (the guide's chooser) may draw its first table after the page loads.
  function enable(root) {
    root.querySelectorAll("article").forEach(function (article) {
      firstTables(article).forEach(mark);
      if (!watched || watched.has(article)) return;
      watched.add(article);
      new MutationObserver(function () { firstTables(article).forEach(mark); })
        .observe(article, { childList: true, subtree: true });
    });
  }

  if (typeof document$ !== "undefined") {
    document$.subscribe(function () { enable(document); });
  } else {
    document.addEventListener("DOMContentLoaded", function () { enable(document); });
  }
})();
