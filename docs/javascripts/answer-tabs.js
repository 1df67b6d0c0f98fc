// Content tabs never open on one that only says "Not measured" while another tab of the set
// holds an answer. The site's templates give no tab to a backend with nothing measured
// (report/templates/_macros.md.j2 backend_tabs); this guards any tab set that still holds
// such a tab: it is hidden, and a tab choice carried from another page (the theme's linked
// tabs) that lands on one is undone. The input is checked directly, not clicked: a click
// would carry this choice on to the next page.
(function () {
  "use strict";

  var EMPTY_TAB = /^Not measured\b[^\n]*$/; // one line, and nothing else in the tab

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
    // After the theme has applied the tab choice it carries between pages.
    setTimeout(function () { keepAnswersInView(document); }, 0);
  }

  if (typeof document$ !== "undefined") {
    document$.subscribe(start);
  } else {
    document.addEventListener("DOMContentLoaded", start);
  }
})();
