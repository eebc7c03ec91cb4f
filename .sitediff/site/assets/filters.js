/*
 * fmbench: table filters and the trial detail loader.
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
 * Trial detail ([data-trials-src]): a button (or link) whose attribute holds
 * the URL of a scenario's first trials page. On click that page and the ones
 * its "Next" link leads to are fetched, parsed inertly with DOMParser, and
 * their trial lists (.trial-list) moved in: a trial is rendered once, on the
 * trials pages, and the run page shows that same HTML. The first page's list
 * (its metrics table, table.trial-metrics, and its articles) is moved in
 * whole; each following page adds its table rows to that table and its
 * articles to that list, so a row and its article link to each other there too.
 * Optional data-trials-target="<id>" names the element to fill (default: a
 * new element right after the button).
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

  /* ---------- trial detail ---------- */

  /* A fetched trials page is the server's own layout of the trials (templates/_trial.html, escaped there).
     It is parsed as an inert document (DOMParser runs no script and loads nothing) and only its trial list
     is moved in; the page's CSP still forbids any inline script or handler. Its "Next" link, if any, names
     the following page, resolved against the page's own URL. */
  function trialPage(html, url) {
    var parsed = new DOMParser().parseFromString(html, "text/html");
    var list = parsed.body.querySelector(".trial-list");
    if (!list) {
      throw new Error("the page holds no list of trials");
    }
    var next = parsed.body.querySelector("a.pager-next[rel=next]");
    return { list: doc.adoptNode(list), next: next ? new URL(next.getAttribute("href"), url).href : null };
  }

  function fetchTrialPage(url) {
    return fetch(url, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (resp) {
        if (!resp.ok) {
          throw new Error("the server answered " + resp.status);
        }
        return resp.text();
      })
      .then(function (html) {
        return trialPage(html, url);
      });
  }

  /* Every page of the scenario's trials, one after the other, into one list. */
  function fetchAllTrials(url) {
    return fetchTrialPage(url).then(function (first) {
      function more(found) {
        if (!found.next) {
          return first.list;
        }
        return fetchTrialPage(found.next).then(function (page) {
          /* the following page's rows join the first page's metrics table, its trials the list */
          var rows = first.list.querySelector("table.trial-metrics > tbody");
          var table = page.list.querySelector("table.trial-metrics");
          if (table && !rows) {
            first.list.appendChild(table.closest(".table-wrap") || table);
          } else if (table) {
            toArray(table.tBodies[0].rows).forEach(function (tr) {
              rows.appendChild(tr);
            });
          }
          toArray(page.list.querySelectorAll("article.trial")).forEach(function (t) {
            first.list.appendChild(t);
          });
          return more(page);
        });
      }
      return more(first);
    });
  }

  function loadTrials(trigger) {
    if (trigger.getAttribute("aria-busy") === "true") {
      return;
    }
    var src = trigger.getAttribute("data-trials-src");
    var targetId = trigger.getAttribute("data-trials-target");
    var target = targetId ? doc.getElementById(targetId) : null;
    if (!target) {
      target = trigger._fmbTarget || el("div", "trials");
      if (!target.parentNode) {
        trigger.parentNode.insertBefore(target, trigger.nextSibling);
      }
      trigger._fmbTarget = target;
    }
    target.classList.add("trials");

    var status = el("p", "trials-status");
    status.setAttribute("role", "status");
    target.replaceChildren(status);
    status.textContent = "Loading trial detail…";
    trigger.setAttribute("aria-busy", "true");
    if ("disabled" in trigger) {
      trigger.disabled = true;
    }

    fetchAllTrials(new URL(src, doc.baseURI).href)
      .then(function (list) {
        var count = list.querySelectorAll("article.trial").length;
        target.appendChild(list);
        status.textContent = count === 1 ? "1 trial loaded." : count + " trials loaded.";
        trigger.hidden = true;
        target.setAttribute("tabindex", "-1");
        target.focus({ preventScroll: true });
      })
      .catch(function (err) {
        status.textContent = "Could not load the trial detail (" + (err && err.message ? err.message : "unknown error") + "). ";
        var a = el("a", null, "Open the trials page");
        a.href = src;
        status.appendChild(a);
        status.appendChild(doc.createTextNode("."));
      })
      .then(function () {
        trigger.removeAttribute("aria-busy");
        if ("disabled" in trigger) {
          trigger.disabled = false;
        }
      });
  }

  function initTrials() {
    toArray(doc.querySelectorAll("[data-trials-src]")).forEach(function (trigger) {
      trigger.addEventListener("click", function (ev) {
        ev.preventDefault();
        loadTrials(trigger);
      });
    });
  }

  function init() {
    initFilters();
    initTrials();
  }

  if (doc.readyState === "loading") {
    doc.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
