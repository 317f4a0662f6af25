// A run page's live verdict list (jobs/verdicts.py): new verdicts come on top of the list as htmx swaps them in.
// A new verdict can change what older ones of its group read (Lit2Test: the second order of a pair makes the pair
// order-stable or order-sensitive). After each swap of the list's poller, every element of a group
// (data-group) takes the group's state (the attribute named by data-state-attribute, and its [data-state-badge])
// from the group's newest element on the page (highest data-seq): drawn last, it knows the most.
(function () {
  "use strict";
  function sync() {
    var items = document.querySelectorAll("[data-group][data-seq]");
    var newest = {};
    items.forEach(function (el) {
      var key = el.getAttribute("data-group");
      var seq = parseInt(el.getAttribute("data-seq"), 10);
      if (!newest[key] || seq > newest[key].seq) newest[key] = { seq: seq, el: el };
    });
    items.forEach(function (el) {
      var source = newest[el.getAttribute("data-group")].el;
      var attribute = el.getAttribute("data-state-attribute") || "data-state";
      var state = source.getAttribute(attribute);
      if (source === el || el.getAttribute(attribute) === state) return;
      el.setAttribute(attribute, state);
      var from = source.querySelector("[data-state-badge]");
      var to = el.querySelector("[data-state-badge]");
      if (from && to) {
        to.className = from.className;
        to.textContent = from.textContent;
      }
    });
  }
  document.addEventListener("htmx:afterSettle", function (e) {
    if (e.target && e.target.id === "verdict-feed") sync();
  });
})();
