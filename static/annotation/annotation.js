// Annotation screen: countdown from the server's remaining seconds, reason list that follows the choice,
// rationale counter, the draft save status, errors that clear once their field is answered, and keyboard shortcuts.
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
      if (e.defaultPrevented) return;  // held back (signed out): not a submission, the autosave goes on
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
    var signedOut = false;  // the last save met the sign-in page or a refused token: Submit would lose the answers
    form.addEventListener("htmx:beforeRequest", function () {
      var status = document.getElementById("save-status");
      if (status && !signedOut) { status.textContent = status.getAttribute("data-saving"); status.classList.remove("is-error"); }
    });
    function show(attribute, seconds) {
      var status = document.getElementById("save-status");
      if (status) { status.textContent = status.getAttribute(attribute); status.classList.add("is-error"); }
      clearTimeout(retry);
      retry = setTimeout(function () { if (window.htmx) window.htmx.trigger(form, "change"); }, seconds * 1000);
    }
    function failed() {
      if (!signedOut) show("data-failed", 5);
    }
    // Signed out (the session ended, or the person signed out in another tab) or signed in again elsewhere (the
    // page's token is refused): saying "connection problem" sent people to check their network, and the Submit
    // then led to the sign-in page and lost the answers. The page says so, keeps trying (a save gets through once
    // they sign in again in another tab) and holds the Submit back meanwhile.
    function signedOutNow(attribute) {
      signedOut = true;
      show(attribute, 10);
    }
    document.addEventListener("submit", function (e) {  // capturing: before orderedSubmit sees the Submit
      if (!signedOut || e.target !== form) return;
      e.preventDefault();
      var status = document.getElementById("save-status");
      if (status) status.focus();
    }, true);
    // Anything but the status fragment (say, the login page after the session expired) is not a save.
    // htmx fires beforeSwap on the swap target (#save-status, outside the form), so listen on the document.
    document.addEventListener("htmx:beforeSwap", function (e) {
      if (!e.detail.requestConfig || e.detail.requestConfig.elt !== form) return;
      var isStatus = /id="save-status"/.test(e.detail.serverResponse);
      var xhr = e.detail.xhr;
      var loggedOut = xhr.status === 403 || (xhr.status === 200 && !isStatus && /\/accounts\/login\//.test(xhr.responseURL || ""));
      // A 404: the item is not found for whoever this browser is logged in as now: someone else logged in, in another
      // tab (a shared lab machine). Their Submit would land on "Page not found" and lose the answers.
      if (loggedOut || xhr.status === 404) {
        e.detail.shouldSwap = false;
        e.detail.isError = false;
        signedOutNow(loggedOut ? "data-signed-out" : "data-other-account");
        return;
      }
      if (isStatus) signedOut = false;
      if (xhr.status === 200 && !isStatus) {
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

  // Keyboard shortcuts, as annotators know them from Label Studio or Prodigy: a digit answers the marked
  // question (its n-th option) and marks the next one, J / K move the mark, A / B / T / I pick the winner and
  // Ctrl+Enter submits. They never fire while the focus is in a text field or a list (Esc leaves it), so
  // typing the rationale types. Answering clicks the option, so drafts, errors and the reason list follow.
  var CHOICE_KEYS = { a: "A", b: "B", t: "TIE", i: "INVALID" };
  // S and F open the skip and flag panels with the focus in their text (nothing is sent by one key); G the guideline.
  var PANEL_KEYS = { s: "skip", f: "flag", g: "guide" };

  function openPanel(id) {
    if (id === "guide") return openGuide();
    var panel = document.getElementById(id);
    if (!panel) return false;
    panel.open = true;
    var text = panel.querySelector("textarea");
    if (text) text.focus();
    return true;
  }

  function openGuide() {
    var dialog = document.getElementById("guide-dialog");
    if (!dialog || !dialog.showModal) return false;
    if (!dialog.open) dialog.showModal();
    var close = dialog.querySelector("[data-guide-close]");
    if (close) close.focus();
    return true;
  }

  // The guideline in place: its links open the dialog instead of a new tab, so the work screen and the draft stay.
  function guide() {
    var dialog = document.getElementById("guide-dialog");
    if (!dialog || !dialog.showModal) return;  // without <dialog>, the links open the guideline in a new tab
    Array.prototype.forEach.call(document.querySelectorAll("[data-guide-open]"), function (link) {
      link.addEventListener("click", function (e) { e.preventDefault(); openGuide(); });
    });
    var close = dialog.querySelector("[data-guide-close]");
    if (close) close.addEventListener("click", function () { dialog.close(); });
  }

  function isTyping(el) {
    if (!el || !el.tagName) return false;
    var tag = el.tagName;
    if (tag === "TEXTAREA" || tag === "SELECT" || el.isContentEditable) return true;
    return tag === "INPUT" && el.type !== "radio" && el.type !== "checkbox" && el.type !== "submit" && el.type !== "button";
  }

  function shortcuts(form) {
    var submit = form.querySelector("[data-submit]");
    if (!submit) return;  // a submitted item is read-only
    var names = [];
    Array.prototype.forEach.call(form.querySelectorAll("input[type=radio]"), function (r) {
      if (names.indexOf(r.name) < 0) names.push(r.name);
    });
    var current = -1;
    var used = false;  // the mark is shown once the shortcuts are in use, not to people who click
    function options(i) { return form.querySelectorAll("input[type=radio][name=\"" + names[i] + "\"]"); }
    function firstOpen() {
      for (var i = 0; i < names.length; i++) {
        if (!form.querySelector("input[name=\"" + names[i] + "\"]:checked")) return i;
      }
      return 0;
    }
    function mark(i, focus) {
      var old = document.querySelector("[data-kbd-current]");
      if (old) old.removeAttribute("data-kbd-current");
      current = i;
      var box = document.getElementById("field-" + names[i]);
      if (box && used) box.setAttribute("data-kbd-current", "");
      if (focus) {
        var opts = options(i);
        var target = form.querySelector("input[name=\"" + names[i] + "\"]:checked") || opts[0];
        if (target) target.focus();
      }
    }
    function answered(name, value) {
      // After the winner, TIE and INVALID need a reason; after the last question comes the rationale.
      var reason = form.querySelector("select[name=reason]");
      if (name === "choice" && (value === "TIE" || value === "INVALID") && reason) { reason.focus(); return; }
      var i = names.indexOf(name);
      if (i + 1 < names.length) { mark(i + 1, true); return; }
      var area = form.querySelector("textarea[name=rationale]");
      if (area) area.focus();
    }
    function pick(input) {
      if (!input.checked) input.click();
      answered(input.name, input.value);
    }
    form.addEventListener("focusin", function (e) {
      if (e.target.type === "radio") { var i = names.indexOf(e.target.name); if (i >= 0 && i !== current) mark(i, false); }
    });
    document.addEventListener("keydown", function (e) {
      if (document.querySelector("dialog[open]")) return;  // the guideline is open: keys are for it
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        // In the skip or flag panel, Ctrl+Enter sends that panel, not the answers.
        var panel = e.target.closest && e.target.closest("[data-own-submit]");
        var button = panel ? panel.querySelector("button[type=submit]") : submit;
        if (form.requestSubmit) form.requestSubmit(button); else button.click();
        return;
      }
      if (e.key === "Enter" && e.target.type === "radio" && form.contains(e.target)) {
        // Enter on an answer would submit the form through its first button ("Submit anyway" on the "that was
        // very fast" page): it picks the answer and goes on, as 1-4 do. Ctrl+Enter (above) submits.
        e.preventDefault();
        pick(e.target);
        return;
      }
      if (e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return;
      if (isTyping(e.target)) {
        if (e.key !== "Escape") return;
        e.target.blur();
        if (e.target.name === "reason") mark(names.indexOf("choice") + 1, true);  // on to the confidence
        return;
      }
      var key = (e.key || "").toLowerCase();
      if (PANEL_KEYS[key] && openPanel(PANEL_KEYS[key])) { e.preventDefault(); return; }
      if (!names.length || !(/^[1-9]$/.test(key) || CHOICE_KEYS[key] || key === "j" || key === "k")) return;
      if (!used) { used = true; mark(current < 0 ? firstOpen() : current, false); }
      if (/^[1-9]$/.test(key)) {
        var opt = options(current)[parseInt(key, 10) - 1];
        if (!opt) return;
        e.preventDefault();
        pick(opt);
      } else if (CHOICE_KEYS[key]) {
        var choice = form.querySelector("input[name=choice][value=\"" + CHOICE_KEYS[key] + "\"]");
        if (!choice) return;
        e.preventDefault();
        pick(choice);
      } else if (key === "j" || key === "k") {
        e.preventDefault();
        mark(Math.max(0, Math.min(names.length - 1, current + (key === "j" ? 1 : -1))), true);
      }
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var timer = document.getElementById("countdown");
    if (timer) countdown(timer);
    var form = document.getElementById("ann-form");
    if (form) { orderedSubmit(form); reasons(form); counter(form); saveStatus(form); liveErrors(form); shortcuts(form); }
    guide();
    var summary = document.getElementById("error-summary") || document.getElementById("stale-summary") || document.getElementById("fast-confirm");
    if (summary) summary.focus();
  });
})();
