/*
 * fmbench: opens the <details> section the URL fragment names (#c3), on load and
 * whenever the fragment changes, so a picked configuration shows at once and a
 * reload or shared link shows the same one. The fragment may also name an
 * element whose first child is the <details> (a trial's <article>, which a row
 * of its page's metrics table links to). A click on a same-page link opens its
 * section even when the fragment is already the one it names (a trial closed
 * again, then picked again). No dependencies.
 */
(function () {
  "use strict";

  function section(id) {
    var target;
    try {
      target = document.getElementById(decodeURIComponent(id));
    } catch (e) {
      return null;
    }
    if (target && target.tagName !== "DETAILS") {
      target = target.firstElementChild;
    }
    return target && target.tagName === "DETAILS" ? target : null;
  }

  function open(id, scroll) {
    var details = id ? section(id) : null;
    if (details && !details.open) {
      details.open = true;
      if (scroll) {
        details.scrollIntoView();
      }
    }
  }

  function openTarget() {
    open(window.location.hash.replace(/^#/, ""), true);
  }

  document.addEventListener("click", function (ev) {
    var link = ev.target && ev.target.closest ? ev.target.closest("a[href^='#']") : null;
    if (link) {
      open(link.getAttribute("href").slice(1), false);
    }
  });
  window.addEventListener("hashchange", openTarget);
  openTarget();
})();
