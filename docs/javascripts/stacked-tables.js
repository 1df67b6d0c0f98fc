// On a phone a wide table scrolls sideways, and the column a reader came for can be off
// the screen. A page's first table is where it puts its answer, so that table (the first
// outside a collapsed block, the first of each <details>, and, in a content tab, the first
// of each of that tab set's tabs) is stacked on a narrow screen: a block per row, each cell under its column's name. This script gives
// each cell its column's name and marks the table; atlas.css stacks it. A mark, not a
// class: the theme styles only tables without a class.
(function () {
  "use strict";

  function first(tables) {
    return tables.length ? [tables[0]] : [];
  }

  // The first table outside a collapsed block, as the page opens; and the first table of
  // each <details>, the first one a reader meets on opening it.
  function firstTables(article) {
    var all = Array.prototype.slice.call(article.querySelectorAll("table"));
    var found = first(all.filter(function (table) { return !table.closest("details"); }));
    article.querySelectorAll("details").forEach(function (details) {
      found = found.concat(first(all.filter(function (table) {
        return table.closest("details") === details;
      })));
    });
    var tabbed = [];
    // Tabs nest (a dtype tab inside a backend tab): every enclosing tab set's tabs count.
    found.forEach(function (table) {
      for (var tab = table.closest(".tabbed-block"); tab;
           tab = tab.parentElement.closest(".tabbed-block")) {
        Array.prototype.forEach.call(tab.parentElement.children, function (block) {
          tabbed = tabbed.concat(first(block.querySelectorAll("table")));
        });
      }
    });
    return found.concat(tabbed);
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
