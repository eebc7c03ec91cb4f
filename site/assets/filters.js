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
 * the URL of a JSON list of trials (or {"trials": [...]}). On click the list
 * is fetched and rendered with DOM APIs and textContent only. Optional
 * data-trials-target="<id>" names the element to fill (default: a new
 * element right after the button); optional data-trials-heading="3".."6"
 * sets the heading level inside each trial (default 4).
 *
 * No dependencies. Never uses innerHTML.
 */
(function () {
  "use strict";

  var doc = document;
  var root = doc.documentElement;
  var NR_TITLE = "not recorded in the run file";

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

  function notRecorded(reason) {
    var span = el("span", "nr", "not recorded");
    span.title = reason || NR_TITLE;
    return span;
  }

  function isMissing(v) {
    return v === null || v === undefined;
  }

  /* text, or the "not recorded" marker when the value is null/absent */
  function textOrNr(v) {
    if (isMissing(v)) {
      return notRecorded();
    }
    if (typeof v === "object") {
      return doc.createTextNode(JSON.stringify(v));
    }
    return doc.createTextNode(String(v));
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

  function headingTag(level) {
    var n = parseInt(level, 10);
    if (!(n >= 2 && n <= 6)) {
      n = 4;
    }
    return "h" + n;
  }

  function section(parent, hTag, title) {
    parent.appendChild(el(hTag, null, title));
  }

  function definitionList(pairs) {
    var dl = el("dl", "conditions");
    pairs.forEach(function (pair) {
      var div = el("div");
      div.appendChild(el("dt", null, pair[0]));
      var dd = el("dd");
      dd.appendChild(textOrNr(pair[1]));
      div.appendChild(dd);
      dl.appendChild(div);
    });
    return dl;
  }

  /* {"a": 1} or [{key, value}] or [[k, v]] -> [[k, v], ...] */
  function pairsOf(obj, keyName, valueName) {
    if (isMissing(obj)) {
      return [];
    }
    if (Array.isArray(obj)) {
      return obj.map(function (item) {
        if (Array.isArray(item)) {
          return [item[0], item[1]];
        }
        if (item && typeof item === "object") {
          return [item[keyName], item[valueName]];
        }
        return [String(item), null];
      });
    }
    if (typeof obj === "object") {
      return Object.keys(obj).map(function (k) {
        return [k, obj[k]];
      });
    }
    return [["value", obj]];
  }

  function renderChecks(checks) {
    if (isMissing(checks)) {
      return el("p", null).appendChild(notRecorded()).parentNode;
    }
    if (!checks.length) {
      return el("p", "muted", "This sample has no checks.");
    }
    var ul = el("ul", "checks");
    checks.forEach(function (c) {
      var li = el("li");
      var passed = c ? c.passed : null;
      if (passed === true) {
        li.appendChild(el("span", "badge badge-pass", "pass"));
      } else if (passed === false) {
        li.appendChild(el("span", "badge badge-fail", "fail"));
      } else {
        li.appendChild(notRecorded());
      }
      li.appendChild(el("span", "check-label", c && !isMissing(c.label) ? c.label : "(unlabelled check)"));
      if (c && !isMissing(c.detail) && c.detail !== "") {
        li.appendChild(el("span", "check-detail", c.detail));
      }
      ul.appendChild(li);
    });
    return ul;
  }

  function renderToolCalls(calls) {
    if (isMissing(calls)) {
      return el("p", null).appendChild(notRecorded()).parentNode;
    }
    if (!calls.length) {
      return el("p", "muted", "No tool calls.");
    }
    var ol = el("ol", "tool-calls");
    calls.forEach(function (call) {
      var li = el("li");
      li.appendChild(el("code", null, call && !isMissing(call.name) ? call.name : "(unnamed tool)"));
      var args = call ? call.arguments : null;
      if (typeof args === "string") {
        li.appendChild(el("pre", null, args));
      } else {
        var pairs = pairsOf(args, "name", "value");
        if (pairs.length) {
          li.appendChild(definitionList(pairs));
        } else {
          li.appendChild(el("span", "muted", " (no arguments)"));
        }
      }
      ol.appendChild(li);
    });
    return ol;
  }

  function renderTrial(t, hTag) {
    t = t || {};
    var details = el("details", "trial");
    var summary = el("summary");
    summary.appendChild(doc.createTextNode("Trial " + (isMissing(t.ordinal) ? "?" : t.ordinal)));
    var meta = [];
    if (!isMissing(t.iteration)) {
      meta.push("iteration " + t.iteration);
    }
    if (!isMissing(t.sample_id)) {
      meta.push(String(t.sample_id));
    }
    if (Array.isArray(t.checks) && t.checks.length) {
      var passed = t.checks.filter(function (c) {
        return c && c.passed === true;
      }).length;
      meta.push(passed + " of " + t.checks.length + " checks passed");
    }
    if (meta.length) {
      summary.appendChild(el("span", "trial-meta", " · " + meta.join(" · ")));
    }
    details.appendChild(summary);

    var body = el("div", "trial-body");

    section(body, hTag, "Prompt");
    if (isMissing(t.prompt)) {
      body.appendChild(el("p")).appendChild(notRecorded());
    } else {
      body.appendChild(el("pre", "trial-prompt", t.prompt));
    }

    section(body, hTag, "Response");
    if (isMissing(t.response)) {
      body.appendChild(el("p")).appendChild(notRecorded());
    } else if (t.response === "") {
      body.appendChild(el("p", "muted", "(empty response)"));
    } else {
      body.appendChild(el("pre", "trial-response", t.response));
    }

    section(body, hTag, "Checks");
    body.appendChild(renderChecks(t.checks));

    section(body, hTag, "Tool calls");
    body.appendChild(renderToolCalls(t.tool_calls));

    section(body, hTag, "Final state");
    if (isMissing(t.final_state)) {
      body.appendChild(el("p")).appendChild(notRecorded());
    } else {
      var state = pairsOf(t.final_state, "key", "value");
      body.appendChild(state.length ? definitionList(state) : el("p", "muted", "Empty."));
    }

    section(body, hTag, "Metrics");
    if (isMissing(t.metrics)) {
      body.appendChild(el("p")).appendChild(notRecorded());
    } else {
      var metrics = pairsOf(t.metrics, "label", "value");
      body.appendChild(metrics.length ? definitionList(metrics) : el("p", "muted", "None."));
    }

    var thermal = el("p");
    thermal.appendChild(doc.createTextNode("Thermal state: "));
    thermal.appendChild(textOrNr(t.thermal));
    body.appendChild(thermal);

    var facts = [["Offline success", t.offline_success]];
    if (!isMissing(t.visual_fixture)) {
      facts.push(["Visual fixture", t.visual_fixture]);
    }
    body.appendChild(definitionList(facts));
    if (!isMissing(t.environment)) {
      section(body, hTag, "Environment at this trial");
      body.appendChild(definitionList(pairsOf(t.environment, "label", "value")));
    }

    details.appendChild(body);
    return details;
  }

  /* A measured or warmup failure: where, its message, and the tool calls and final state it left. */
  function renderFailure(f, hTag) {
    f = f || {};
    var details = el("details", "failure");
    var where = [f.scenario_id, f.sample_id, isMissing(f.iteration) ? null : "iteration " + f.iteration]
      .filter(function (x) {
        return !isMissing(x);
      })
      .join(" · ");
    details.appendChild(el("summary", null, "Failure · " + where));
    var body = el("div", "trial-body");
    body.appendChild(definitionList([["Kind", f.kind], ["Message", f.message]]));
    section(body, hTag, "Tool calls");
    body.appendChild(renderToolCalls(f.tool_calls));
    section(body, hTag, "Final state");
    var state = pairsOf(f.final_state, "key", "value");
    body.appendChild(state.length ? definitionList(state) : el("p", "muted", "None recorded."));
    details.appendChild(body);
    return details;
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
    var hTag = headingTag(trigger.getAttribute("data-trials-heading"));

    var status = el("p", "trials-status");
    status.setAttribute("role", "status");
    target.replaceChildren(status);
    status.textContent = "Loading trial detail…";
    trigger.setAttribute("aria-busy", "true");
    if ("disabled" in trigger) {
      trigger.disabled = true;
    }

    fetch(src, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (resp) {
        if (!resp.ok) {
          throw new Error("the server answered " + resp.status);
        }
        return resp.json();
      })
      .then(function (data) {
        var trials = Array.isArray(data) ? data : data && Array.isArray(data.trials) ? data.trials : null;
        if (!trials) {
          throw new Error("the file is not a list of trials");
        }
        var list = el("div", "trial-list");
        trials.forEach(function (t) {
          list.appendChild(renderTrial(t, hTag));
        });
        if (data && Array.isArray(data.failures)) {
          data.failures.forEach(function (f) {
            list.appendChild(renderFailure(f, hTag));
          });
        }
        target.appendChild(list);
        status.textContent = trials.length === 1 ? "1 trial loaded." : trials.length + " trials loaded.";
        trigger.hidden = true;
        target.setAttribute("tabindex", "-1");
        target.focus({ preventScroll: true });
      })
      .catch(function (err) {
        status.textContent = "Could not load the trial detail (" + (err && err.message ? err.message : "unknown error") + "). ";
        var a = el("a", null, "Open the trial data file");
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
