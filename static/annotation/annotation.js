// Annotation screen: countdown from the server's remaining seconds, reason list that follows the choice,
// rationale counter, the draft save status, and errors that clear once their field is answered.
// The server enforces everything; this only helps.
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
    // htmx fires beforeSwap on the swap target (#save-status, outside the form), so listen on the document.
    document.addEventListener("htmx:beforeSwap", function (e) {
      if (!e.detail.requestConfig || e.detail.requestConfig.elt !== form) return;
      var isStatus = /id="save-status"/.test(e.detail.serverResponse);
      if (e.detail.xhr.status === 200 && !isStatus) {
        e.detail.shouldSwap = false;
        failed();
      } else if ((e.detail.xhr.status === 422 || e.detail.xhr.status === 409) && isStatus) {
        // A refused value (422, the fragment says which) or a page older than the stored draft (409, another
        // window saved since): show why, and do not retry what would be refused again.
        clearTimeout(retry);
        e.detail.shouldSwap = true;
        e.detail.isError = false;
      }
    });
    form.addEventListener("htmx:sendError", failed);
    form.addEventListener("htmx:responseError", failed);
  }

  // A field's error message goes as soon as the field is answered well enough (the same rules as the
  // server's completeness check); the error summary loses its line, and goes when it has none left.
  function liveErrors(form) {
    var summary = document.querySelector("[data-error-summary]");
    var area = form.querySelector("textarea[name=rationale]");
    function valid(name) {
      if (name === "rationale") {
        var n = area ? area.value.trim().length : 0;
        return n >= area.minLength && n <= area.maxLength;
      }
      if (name === "reason") {
        var checked = form.querySelector("input[name=choice]:checked");
        var needs = checked && (checked.value === "TIE" || checked.value === "INVALID");
        var select = form.querySelector("select[name=reason]");
        return !needs || (select && select.value !== "");
      }
      return !!form.querySelector("input[name=\"" + name + "\"]:checked");
    }
    function unlink(el, id) {
      var ids = (el.getAttribute("aria-describedby") || "").split(/\s+/).filter(function (t) { return t && t !== id; });
      if (ids.length) el.setAttribute("aria-describedby", ids.join(" ")); else el.removeAttribute("aria-describedby");
    }
    function clear(name) {
      var box = document.getElementById("field-" + name);
      if (!box || !box.classList.contains("has-error") || !valid(name)) return;
      box.classList.remove("has-error");
      var id = "err-" + name;
      var message = document.getElementById(id);
      if (message) message.parentNode.removeChild(message);
      Array.prototype.forEach.call([box].concat(Array.prototype.slice.call(box.querySelectorAll("[aria-describedby]"))), function (el) {
        if (el.hasAttribute("aria-describedby")) unlink(el, id);
      });
      if (summary) {
        var line = summary.querySelector("[data-error-for=\"" + name + "\"]");
        if (line) line.parentNode.removeChild(line);
        if (!summary.querySelector("[data-error-for]")) summary.hidden = true;
      }
    }
    form.addEventListener("change", function (e) {
      if (!e.target.name) return;
      clear(e.target.name);
      if (e.target.name === "choice") clear("reason");
    });
    form.addEventListener("input", function (e) { if (e.target.name === "rationale") clear("rationale"); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var timer = document.getElementById("countdown");
    if (timer) countdown(timer);
    var form = document.getElementById("ann-form");
    if (form) { orderedSubmit(form); reasons(form); counter(form); saveStatus(form); liveErrors(form); }
    var summary = document.getElementById("error-summary");
    if (summary) summary.focus();
  });
})();
