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

  // Tabs. A backend with no results has a tab that says only "Not measured": it is hidden,
  // and a tab choice carried from another page (the theme's linked tabs) that lands on one
  // is undone here, so a page never opens on a tab that hides its answer. The input is
  // checked directly, not clicked: a click would carry this choice to the next page.
  // (It belongs in a script of its own once mkdocs.yml lists one.)
  var EMPTY_TAB = /^Not measured: there are no .* from an? \S+ machine yet\.$/;

  function keepAnswersInView(root) {
    root.querySelectorAll(".tabbed-set").forEach(function (set) {
      var inputs = Array.prototype.filter.call(set.children, function (e) { return e.tagName === "INPUT"; });
      var labels = set.querySelector(":scope > .tabbed-labels");
      var content = set.querySelector(":scope > .tabbed-content");
      if (!labels || !content || inputs.length !== content.children.length) return;
      var empty = Array.prototype.map.call(content.children, function (block) {
        return EMPTY_TAB.test(block.textContent.trim());
      });
      if (empty.every(Boolean)) return; // nothing measured at all: the tabs say so
      empty.forEach(function (isEmpty, i) {
        if (isEmpty && labels.children[i]) labels.children[i].hidden = true;
      });
      var checked = inputs.findIndex(function (input) { return input.checked; });
      if (checked < 0 || empty[checked]) inputs[empty.indexOf(false)].checked = true;
    });
  }

  function start() {
    enable(document);
    // After the theme has applied the tab choice it carries between pages.
    setTimeout(function () { keepAnswersInView(document); }, 0);
  }

  if (typeof document$ !== "undefined") {
    document$.subscribe(start);
  } else {
    document.addEventListener("DOMContentLoaded", start);
  }
})();
