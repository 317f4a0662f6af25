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
