// Wide tables on narrow windows, without making the page scroll sideways (static/css/app.css).
// A table wider than its column gets the class is-wide and scrolls sideways in its own box; it loses the class once the
// window is wide enough again (on a phone every table scrolls in its own box, script or not). A box that scrolls must
// be reachable by keyboard (Safari does not focus one by itself, and axe-core asks for it): each such box (these
// tables, the .table-scroll boxes, a long prompt) that holds nothing focusable gets tabindex=0 while it overflows.
// Boxes a template already made focusable are left alone.
(function () {
  "use strict";
  var BOXES = "main table, main .table-scroll, main pre";
  var FOCUSABLE = "a[href], button, input, select, textarea, summary, [tabindex]";

  function scrollable(overflow) { return overflow === "auto" || overflow === "scroll"; }

  function room(el) {
    var parent = el.parentElement;
    var style = getComputedStyle(parent);
    return parent.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  }

  function widen(table) {
    if (table.closest(".table-scroll")) return;
    if (table.classList.contains("is-wide")) {
      // As a box it holds the table at its own width: it is still wide if that width overflows the box.
      if (table.scrollWidth <= table.clientWidth + 1) table.classList.remove("is-wide");
    } else if (table.offsetWidth > room(table) + 1) {
      table.classList.add("is-wide");
    }
  }

  function focusable(box) {
    var ours = box.hasAttribute("data-scroll-box");
    if (box.hasAttribute("tabindex") && !ours) return;
    var style = getComputedStyle(box);
    var scrolls = (scrollable(style.overflowX) && box.scrollWidth > box.clientWidth + 1) ||
      (scrollable(style.overflowY) && box.scrollHeight > box.clientHeight + 1);
    if (scrolls && !ours && !box.querySelector(FOCUSABLE)) {
      box.setAttribute("tabindex", "0");
      box.setAttribute("data-scroll-box", "");
    } else if (!scrolls && ours) {
      box.removeAttribute("tabindex");
      box.removeAttribute("data-scroll-box");
    }
  }

  function mark() {
    Array.prototype.forEach.call(document.querySelectorAll("main table"), widen);
    Array.prototype.forEach.call(document.querySelectorAll(BOXES), focusable);
    document.documentElement.setAttribute("data-boxes-width", String(window.innerWidth));  // done, for this width
  }

  var pending = null;
  function later() {
    clearTimeout(pending);
    pending = setTimeout(mark, 100);
  }
  document.addEventListener("DOMContentLoaded", mark);
  window.addEventListener("resize", later);
  document.addEventListener("htmx:afterSettle", later);
  document.addEventListener("toggle", later, true);  // a table in a <details> has no width until it opens
})();
