// Behaviour shared by every page, kept out of the HTML: the Content-Security-Policy allows no inline script
// or event handler. A <select data-autosubmit> submits its form when its value changes (the language
// switch, the leaderboard's run picker); each keeps a <noscript> button for browsers without JavaScript.
(function () {
  "use strict";
  document.addEventListener("change", function (e) {
    var el = e.target;
    if (el && el.matches && el.matches("select[data-autosubmit]") && el.form) el.form.submit();
  });
})();

// A <form data-confirm="question"> that cannot be undone (cancelling a run) asks first, in a modal <dialog>.
// Confirming submits a copy of the form, with confirm=yes, from the dialog itself: htmx polling may replace
// the original form while the dialog is open. data-confirm-yes / data-confirm-no label the two buttons.
// Without JavaScript the server asks instead: a POST without confirm=yes answers with a confirmation page.
(function () {
  "use strict";
  function button(type, id, label) {
    var b = document.createElement("button");
    b.type = type;
    b.id = id;
    b.textContent = label;
    return b;
  }
  function ask(form) {
    var old = document.getElementById("confirm-dialog");
    if (old) old.remove();
    var dialog = document.createElement("dialog");
    dialog.id = "confirm-dialog";
    dialog.className = "confirm";
    dialog.setAttribute("aria-labelledby", "confirm-question");
    var question = document.createElement("p");
    question.id = "confirm-question";
    question.textContent = form.getAttribute("data-confirm");
    var copy = document.createElement("form");
    copy.method = "post";
    copy.action = form.action;
    copy.className = "controls";
    form.querySelectorAll("input[type=hidden]").forEach(function (input) {
      if (input.name !== "confirm") copy.appendChild(input.cloneNode());
    });
    var confirmed = document.createElement("input");
    confirmed.type = "hidden";
    confirmed.name = "confirm";
    confirmed.value = "yes";
    copy.appendChild(confirmed);
    var yes = button("submit", "confirm-yes", form.getAttribute("data-confirm-yes") || "Yes");
    yes.className = "danger";
    var no = button("button", "confirm-no", form.getAttribute("data-confirm-no") || "No");
    no.addEventListener("click", function () { dialog.close(); });
    dialog.addEventListener("close", function () { dialog.remove(); });
    copy.appendChild(yes);
    copy.appendChild(no);
    dialog.appendChild(question);
    dialog.appendChild(copy);
    document.body.appendChild(dialog);
    dialog.showModal();
    no.focus();  // the safe answer is the default one
  }
  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (!form || !form.matches || !form.matches("form[data-confirm]")) return;
    e.preventDefault();
    ask(form);
  });
})();

// Two cookies read and written by every page (one closure, one way of reading a cookie):
// - The CSRF token is read from its cookie when a form or an htmx request is sent: a page opened before its reader
//   signed in again (in another tab; signing in renews the token) still carried the old one in its forms and
//   headers, and everything it sent was refused. Where the cookie cannot be read, the page's own token is sent.
// - The reader's time zone, as their browser names it, for the server to show times in (lit2test_web.middleware,
//   ReaderTimeZoneMiddleware): set once, and again when it changes (a laptop that travelled). Pages shown before the
//   first setting show UTC.
(function () {
  "use strict";
  function cookie(name) {
    var found = document.cookie.match(new RegExp("(?:^|;\\s*)" + name + "=([^;]+)"));
    return found ? decodeURIComponent(found[1]) : null;
  }
  document.addEventListener("htmx:configRequest", function (e) {
    var t = cookie("csrftoken");
    if (!t) return;
    e.detail.headers["X-CSRFToken"] = t;
    // Django reads a form's own token before the header: the form's copy is renewed too.
    if (e.detail.parameters && e.detail.parameters.csrfmiddlewaretoken !== undefined) e.detail.parameters.csrfmiddlewaretoken = t;
  });
  document.addEventListener("submit", function (e) {
    var t = cookie("csrftoken");
    if (!t || !e.target || !e.target.querySelectorAll) return;
    e.target.querySelectorAll("input[name=csrfmiddlewaretoken]").forEach(function (input) { input.value = t; });
  }, true);

  var zone;
  try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone; } catch (e) { return; }
  if (!zone || !/^[A-Za-z0-9_+\-\/]{1,64}$/.test(zone) || cookie("tz") === zone) return;
  document.cookie = "tz=" + zone + "; path=/; max-age=31536000; SameSite=Lax";  // characters checked above
})();
