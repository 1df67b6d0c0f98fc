// The theme asks for search/search_index.json on every page load, before anyone searches:
// on this site that index outweighs the rest of the home page. This script runs before the
// theme's bundle (report/mkdocs_search.py puts it there) and holds that one request until
// the reader opens search: focuses the search box (a click, or the "/", "s", "f" keys),
// or opens the search overlay on a phone. A page reached from a search result (?h=...)
// needs the index to highlight the words, and gets it at once.
(function () {
  "use strict";
  var INDEX = /\/search\/search_index\.json$/;
  var open = XMLHttpRequest.prototype.open;
  var send = XMLHttpRequest.prototype.send;
  var held = [];
  var released = /[?&]h=/.test(location.search);

  XMLHttpRequest.prototype.open = function (method, url) {
    this.atlasSearchIndex = INDEX.test(String(url).split(/[?#]/)[0]);
    return open.apply(this, arguments);
  };
  XMLHttpRequest.prototype.send = function () {
    if (this.atlasSearchIndex && !released) {
      held.push(this);
      return undefined;
    }
    return send.apply(this, arguments);
  };

  // The theme asks twice (search, and highlighting): the first goes out now, the others
  // when it is done, so that they are answered from the browser's cache.
  function release() {
    if (released) return;
    released = true;
    var first = held.shift();
    if (!first) return;
    var rest = held.splice(0);
    first.addEventListener("loadend", function () {
      rest.forEach(function (request) {
        try { send.call(request); } catch (aborted) { /* the theme gave up on it */ }
      });
    });
    send.call(first);
  }

  document.addEventListener("focusin", function (event) {
    if (event.target.classList && event.target.classList.contains("md-search__input")) release();
  });
  document.addEventListener("change", function (event) {
    if (event.target.id === "__search" && event.target.checked) release();
  });
})();
