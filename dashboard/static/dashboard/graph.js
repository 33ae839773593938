// Zoom and pan for the graph page, by changing the SVG's viewBox: the wheel zooms around the
// pointer, a drag pans, and with the focus in the graph (a node, the buttons, or the drawing
// after a click) + and - zoom, the arrow keys pan and 0 resets. Without this script the page
// shows the whole graph fitted to its canvas and every node is still a link, so nothing here
// is needed to use it; the buttons are hidden until it runs.
(function () {
  "use strict";
  var STEP = 1.25; // one zoom step, wheel notch or key press
  var PAN = 0.1; // an arrow key pans by this share of the view
  var MIN_WIDTH_SHARE = 1 / 20; // zoomed in at most 20 times
  var DRAG_PX = 4; // a pointer that moved less than this clicked, not dragged

  function setUp(root) {
    var svg = root.querySelector("svg.graph");
    if (!svg) { return; }
    var start = svg.getAttribute("viewBox").split(/\s+/).map(Number);
    var view = start.slice();
    function show() { svg.setAttribute("viewBox", view.join(" ")); }
    // Zoom by `factor` (> 1 zooms in) keeping the point (cx, cy), in viewBox units, in place.
    function zoom(factor, cx, cy) {
      var width = Math.max(start[2] * MIN_WIDTH_SHARE, Math.min(start[2] * 4, view[2] / factor));
      var applied = view[2] / width;
      if (cx === undefined) { cx = view[0] + view[2] / 2; cy = view[1] + view[3] / 2; }
      view = [cx - (cx - view[0]) / applied, cy - (cy - view[1]) / applied, width, view[3] / applied];
      show();
    }
    function pan(dx, dy) { view[0] += dx; view[1] += dy; show(); }
    function reset() { view = start.slice(); show(); }
    // The viewBox point under a pointer event.
    function at(event) {
      var box = svg.getBoundingClientRect();
      return [view[0] + (event.clientX - box.left) / box.width * view[2],
              view[1] + (event.clientY - box.top) / box.height * view[3]];
    }

    var tools = root.querySelector("[data-graph-tools]");
    if (tools) {
      tools.hidden = false;
      tools.addEventListener("click", function (event) {
        var which = event.target.getAttribute && event.target.getAttribute("data-zoom");
        if (which === "in") { zoom(STEP); } else if (which === "out") { zoom(1 / STEP); } else if (which === "reset") { reset(); }
      });
    }
    svg.addEventListener("wheel", function (event) {
      event.preventDefault(); // the page would scroll instead
      var p = at(event);
      zoom(event.deltaY < 0 ? STEP : 1 / STEP, p[0], p[1]);
    }, { passive: false });

    var drag = null;
    var dragged = false;
    svg.addEventListener("pointerdown", function (event) {
      if (event.button !== 0) { return; }
      drag = { x: event.clientX, y: event.clientY, view: view.slice() };
      dragged = false;
    });
    svg.addEventListener("pointermove", function (event) {
      if (!drag) { return; }
      var dx = event.clientX - drag.x, dy = event.clientY - drag.y;
      if (!dragged && Math.abs(dx) + Math.abs(dy) < DRAG_PX) { return; }
      if (!dragged) { svg.setPointerCapture(event.pointerId); svg.classList.add("panning"); }
      dragged = true;
      var box = svg.getBoundingClientRect();
      view[0] = drag.view[0] - dx / box.width * view[2];
      view[1] = drag.view[1] - dy / box.height * view[3];
      show();
    });
    function endDrag() { drag = null; svg.classList.remove("panning"); }
    svg.addEventListener("pointerup", endDrag);
    svg.addEventListener("pointercancel", endDrag);
    // A drag that ends on a node must not open it (capture: before htmx sees the click).
    svg.addEventListener("click", function (event) {
      if (dragged) { event.preventDefault(); event.stopPropagation(); dragged = false; }
    }, true);
    svg.addEventListener("mousedown", function () { svg.focus({ preventScroll: true }); });

    root.addEventListener("keydown", function (event) {
      if (event.ctrlKey || event.metaKey || event.altKey) { return; }
      var k = event.key;
      if (k === "+" || k === "=") { zoom(STEP); }
      else if (k === "-" || k === "_") { zoom(1 / STEP); }
      else if (k === "0") { reset(); }
      else if (k === "ArrowLeft") { pan(-view[2] * PAN, 0); }
      else if (k === "ArrowRight") { pan(view[2] * PAN, 0); }
      else if (k === "ArrowUp") { pan(0, -view[3] * PAN); }
      else if (k === "ArrowDown") { pan(0, view[3] * PAN); }
      else { return; }
      event.preventDefault();
    });
  }

  document.querySelectorAll("[data-graph]").forEach(setUp);
})();
