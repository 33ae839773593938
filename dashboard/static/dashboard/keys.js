// Keyboard navigation for the dashboard; every page also works without it (plain links,
// forms and the browser's access keys). "/" focuses the search box, j/k move through the
// items of a list, Enter opens the focused item, g then h/m/p/g/s goes to a page.
(function () {
  "use strict";
  var pages = { h: "/dashboard/", m: "/dashboard/memories/", p: "/dashboard/project/", g: "/dashboard/graph/", s: "/dashboard/settings/" };
  var pendingG = false;
  var current = -1;
  function typing(target) {
    var tag = target && target.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || (target && target.isContentEditable);
  }
  function move(step) {
    var items = document.querySelectorAll("[data-item]");
    if (!items.length) { return; }
    if (current >= 0 && items[current]) { items[current].removeAttribute("data-focused"); }
    current = Math.max(0, Math.min(items.length - 1, current + step));
    var item = items[current];
    item.setAttribute("data-focused", "");
    var link = item.querySelector("a");
    if (link) { link.focus(); }
  }
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) { return; }
    if (pendingG) {
      pendingG = false;
      if (pages[event.key]) { window.location.href = pages[event.key]; event.preventDefault(); }
      return;
    }
    if (event.key === "/") {
      var box = document.querySelector("[data-search]");
      if (box) { box.focus(); event.preventDefault(); }
    } else if (event.key === "j") { move(1); event.preventDefault(); }
    else if (event.key === "k") { move(-1); event.preventDefault(); }
    else if (event.key === "g") { pendingG = true; }
  });
  // A search swapped in by htmx starts the j/k walk afresh.
  document.addEventListener("htmx:afterSwap", function () { current = -1; });
})();
