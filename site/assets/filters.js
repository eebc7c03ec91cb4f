/*
 * fmbench: table filters.
 *
 * Filters (form[data-filter-form], rendered by templates/_filters.html):
 *   - static site (<html data-mode="static">): reads the filters from the URL
 *     query (?os_build=...&device=...), sets the selects, hides the rows of
 *     every table[data-filterable] whose data-f-<name> differs from a chosen
 *     value (rows without that attribute are left alone), announces the count
 *     in the form's live region, and keeps the URL in step with
 *     history.replaceState so a filtered view can be linked and reloaded.
 *   - serve mode: does nothing; the form submits with GET and the server
 *     filters.
 *
 * Trial detail is laid out by trials.js, from each scenario's trial data.
 *
 * No dependencies. Never uses innerHTML.
 */
(function () {
  "use strict";

  var doc = document;
  var root = doc.documentElement;

  root.classList.add("js");

  /* ---------- small DOM helpers ---------- */

  function el(tag, className, text) {
    var node = doc.createElement(tag);
    if (className) {
      node.className = className;
    }
    if (text !== undefined && text !== null) {
      node.textContent = String(text);
    }
    return node;
  }

  function toArray(list) {
    return Array.prototype.slice.call(list);
  }

  /* ---------- filters ---------- */

  function initFilters() {
    var form = doc.querySelector("form[data-filter-form]");
    if (!form || root.getAttribute("data-mode") !== "static") {
      return;
    }

    var selects = toArray(form.querySelectorAll("select[name]"));
    var tables = toArray(doc.querySelectorAll("table[data-filterable]"));
    var status = form.querySelector("[data-filter-count]");
    var reset = form.querySelector("[data-filter-reset]");
    var noun = form.getAttribute("data-noun") || "rows";

    /* The count uses the main tables, not the tables behind charts (which
       repeat the same rows), unless the page has only those. */
    var counted = tables.filter(function (t) {
      return !t.closest(".chart");
    });
    if (counted.length === 0) {
      counted = tables;
    }

    function hasFilterAttr(tr) {
      return toArray(tr.attributes).some(function (a) {
        return a.name.indexOf("data-f-") === 0;
      });
    }

    /* One "no rows match" message per table, created once, shown on demand. */
    function emptyNote(table) {
      var wrap = table.closest(".table-wrap") || table;
      var next = wrap.nextElementSibling;
      if (next && next.hasAttribute("data-filter-empty")) {
        return next;
      }
      var p = el("p", "empty filter-empty", "No rows match the chosen filters.");
      p.setAttribute("data-filter-empty", "");
      p.hidden = true;
      wrap.parentNode.insertBefore(p, wrap.nextSibling);
      return p;
    }

    function readUrl() {
      var params = new URLSearchParams(window.location.search);
      selects.forEach(function (sel) {
        var v = params.get(sel.name);
        if (v === null) {
          return;
        }
        var known = toArray(sel.options).some(function (o) {
          return o.value === v;
        });
        if (!known && v !== "") {
          /* Keep a linked filter visible even when no row of this page has
             that value: it then honestly shows 0 rows. */
          sel.add(new Option(v + " (none on this page)", v));
        }
        sel.value = v;
      });
    }

    function writeUrl() {
      var url;
      try {
        url = new URL(window.location.href);
      } catch (e) {
        return;
      }
      selects.forEach(function (sel) {
        if (sel.value) {
          url.searchParams.set(sel.name, sel.value);
        } else {
          url.searchParams.delete(sel.name);
        }
      });
      try {
        window.history.replaceState(window.history.state, "", url.href);
      } catch (e) {
        /* some browsers refuse replaceState on file:// pages; filtering
           still works, only the URL does not follow */
      }
    }

    function apply(updateUrl) {
      var active = selects
        .filter(function (sel) {
          return sel.value !== "";
        })
        .map(function (sel) {
          return { name: sel.name, value: sel.value, select: sel };
        });
      var shown = 0;
      var total = 0;

      tables.forEach(function (table) {
        var tableShown = 0;
        var tableTotal = 0;
        toArray(table.tBodies).forEach(function (tbody) {
          toArray(tbody.rows).forEach(function (tr) {
            var match = active.every(function (f) {
              var v = tr.getAttribute("data-f-" + f.name);
              return v === null || v === f.value;
            });
            tr.hidden = !match;
            if (hasFilterAttr(tr)) {
              tableTotal += 1;
              if (match) {
                tableShown += 1;
              }
            }
          });
        });
        emptyNote(table).hidden = !(tableTotal > 0 && tableShown === 0);
        if (counted.indexOf(table) !== -1) {
          shown += tableShown;
          total += tableTotal;
        }
      });

      if (status) {
        var msg = "Showing " + shown + " of " + total + " " + noun;
        if (active.length) {
          msg += " (filtered by " + active.map(function (f) {
            var sel = f.select;
            var label = sel && sel.labels && sel.labels[0] ? sel.labels[0].textContent.trim() : f.name;
            var opt = sel ? sel.options[sel.selectedIndex] : null;
            return label + ": " + (opt ? opt.textContent.trim() : f.value);
          }).join(", ") + ")";
        }
        status.textContent = msg + ".";
      }
      if (updateUrl) {
        writeUrl();
      }
    }

    readUrl();
    apply(false);

    form.addEventListener("change", function (ev) {
      if (ev.target && ev.target.tagName === "SELECT") {
        apply(true);
      }
    });
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      apply(true);
    });
    if (reset) {
      reset.addEventListener("click", function (ev) {
        ev.preventDefault();
        selects.forEach(function (sel) {
          sel.value = "";
        });
        apply(true);
        if (selects[0]) {
          selects[0].focus();
        }
      });
    }
    /* back/forward restores of the page keep the selects; re-apply */
    window.addEventListener("pageshow", function () {
      apply(false);
    });
  }

  function init() {
    initFilters();
  }

  if (doc.readyState === "loading") {
    doc.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
