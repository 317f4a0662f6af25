// Annotation screen: countdown from the server's remaining seconds, reason list that follows the choice,
// rationale counter, and the draft save status. The server enforces everything; this only helps.
(function () {
  "use strict";

  function pad(n) { return (n < 10 ? "0" : "") + n; }

  function countdown(el) {
    var remaining = parseInt(el.getAttribute("data-remaining"), 10);
    if (isNaN(remaining)) return;
    var end = Date.now() + remaining * 1000;
    var value = el.querySelector("[data-countdown-value]");
    var note = el.querySelector("[data-countdown-note]");
    function tick() {
      var left = Math.round((end - Date.now()) / 1000);
      if (left <= 0) {
        el.classList.add("is-over");
        el.classList.remove("is-soon");
        value.textContent = "00:00";
        note.textContent = el.getAttribute("data-over-text");
        return;
      }
      if (left <= 60) el.classList.add("is-soon");
      value.textContent = pad(Math.floor(left / 60)) + ":" + pad(left % 60);
      setTimeout(tick, 500);
    }
    tick();
  }

  function reasons(form) {
    var block = form.querySelector("[data-reason-block]");
    var select = block && block.querySelector("select");
    if (!select) return;
    function sync() {
      var checked = form.querySelector("input[name=choice]:checked");
      var choice = checked ? checked.value : "";
      var needs = choice === "TIE" || choice === "INVALID";
      block.hidden = !needs;
      select.required = needs;
      Array.prototype.forEach.call(select.querySelectorAll("optgroup"), function (group) {
        var on = group.getAttribute("data-choice") === choice;
        group.hidden = !on;
        group.disabled = !on;
      });
      var current = select.options[select.selectedIndex];
      if (current && current.parentNode.tagName === "OPTGROUP" && current.parentNode.disabled) select.value = "";
    }
    form.addEventListener("change", function (e) { if (e.target.name === "choice") sync(); });
    sync();
  }

  function counter(form) {
    var area = form.querySelector("textarea[data-counter-max]");
    var out = form.querySelector("[data-counter]");
    if (!area || !out) return;
    var max = area.getAttribute("data-counter-max");
    function update() { out.textContent = area.value.trim().length + " / " + max; }
    area.addEventListener("input", update);
    update();
  }

  function saveStatus(form) {
    var retry = null;
    form.addEventListener("htmx:beforeRequest", function () {
      var status = document.getElementById("save-status");
      if (status) { status.textContent = status.getAttribute("data-saving"); status.classList.remove("is-error"); }
    });
    function failed() {
      var status = document.getElementById("save-status");
      if (status) { status.textContent = status.getAttribute("data-failed"); status.classList.add("is-error"); }
      clearTimeout(retry);
      retry = setTimeout(function () { if (window.htmx) window.htmx.trigger(form, "change"); }, 5000);
    }
    form.addEventListener("htmx:sendError", failed);
    form.addEventListener("htmx:responseError", failed);
  }

  document.addEventListener("DOMContentLoaded", function () {
    var timer = document.getElementById("countdown");
    if (timer) countdown(timer);
    var form = document.getElementById("ann-form");
    if (form) { reasons(form); counter(form); saveStatus(form); }
    var summary = document.getElementById("error-summary");
    if (summary) summary.focus();
  });
})();
