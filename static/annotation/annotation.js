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

  // A submission waits for a draft save that is still on its way (leaving the field fires one), and no
  // draft is sent once the submission has started: the server never sees the two race.
  function orderedSubmit(form) {
    var inflight = 0;
    var submitting = false;
    var waiting = null;
    form.addEventListener("htmx:beforeRequest", function (e) {
      if (submitting) { e.preventDefault(); return; }
      inflight += 1;
    });
    form.addEventListener("htmx:afterRequest", function () {
      inflight = Math.max(0, inflight - 1);
      if (waiting && inflight === 0) {
        var submitter = waiting;
        waiting = null;
        if (form.requestSubmit) form.requestSubmit(submitter); else form.submit();
      }
    });
    form.addEventListener("submit", function (e) {
      if (inflight > 0) {
        e.preventDefault();
        waiting = e.submitter || form.querySelector("[data-submit]");
        return;
      }
      submitting = true;
    });
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
    // Anything but the status fragment (say, the login page after the session expired) is not a save.
    form.addEventListener("htmx:beforeSwap", function (e) {
      var isStatus = /id="save-status"/.test(e.detail.serverResponse);
      if (e.detail.xhr.status === 200 && !isStatus) {
        e.detail.shouldSwap = false;
        failed();
      } else if (e.detail.xhr.status === 422 && isStatus) {
        // A refused value (the fragment says which): show it, and do not retry what would be refused again.
        clearTimeout(retry);
        e.detail.shouldSwap = true;
        e.detail.isError = false;
      }
    });
    form.addEventListener("htmx:sendError", failed);
    form.addEventListener("htmx:responseError", failed);
  }

  document.addEventListener("DOMContentLoaded", function () {
    var timer = document.getElementById("countdown");
    if (timer) countdown(timer);
    var form = document.getElementById("ann-form");
    if (form) { orderedSubmit(form); reasons(form); counter(form); saveStatus(form); }
    var summary = document.getElementById("error-summary");
    if (summary) summary.focus();
  });
})();
