/*
 * fmbench: opens the <details> section the URL fragment names (#c3), on load and
 * whenever the fragment changes, so a picked configuration shows at once and a
 * reload or shared link shows the same one. No dependencies.
 */
(function () {
  "use strict";

  function openTarget() {
    var id = window.location.hash.replace(/^#/, "");
    if (!id) {
      return;
    }
    var target;
    try {
      target = document.getElementById(decodeURIComponent(id));
    } catch (e) {
      return;
    }
    if (target && target.tagName === "DETAILS" && !target.open) {
      target.open = true;
      target.scrollIntoView();
    }
  }

  window.addEventListener("hashchange", openTarget);
  openTarget();
})();
