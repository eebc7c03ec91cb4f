/*
 * fmbench: every trial of a scenario, laid out in the browser from the scenario's trial data.
 *
 * The site holds each trial once, in one gzipped JSON file per run and scenario
 * (data/runs/<run>/trials/<scenario>.json.gz). This script reads it with fetch and
 * DecompressionStream('gzip') and lays out a page of trials at a time, filtered here
 * (failed or passed trials, a text to find), saying what it shows ("Trials 1–50 of
 * 1,000"). Where it runs:
 *   - div.trials-app[data-trials-data] (a trials page): laid out at once; a link to
 *     #trial-<ordinal> (the page's failing trials) shows that trial's page and opens it;
 *   - button[data-trials-data] (the run page's "Show here"): laid out on click, in the
 *     element after the button (div.trials-target) or a new one.
 * data-trials-total is the count the page states; data-per-page the page size (50).
 *
 * Every text of the data (responses hold HTML, script and terminal escapes) goes into
 * the DOM as textContent: never innerHTML. No dependencies.
 */
(function () {
  "use strict";

  var doc = document;
  var PER_PAGE = 50;
  var read = {};

  /* A text as the site's pages show it: a NUL as U+FFFD (as the server's pages print it). */
  function visible(value) {
    return String(value).replace(/\u0000/g, "\ufffd");
  }

  function el(tag, className, text) {
    var node = doc.createElement(tag);
    if (className) {
      node.className = className;
    }
    if (text !== undefined && text !== null) {
      node.textContent = visible(text);
    }
    return node;
  }

  function text(value) {
    return doc.createTextNode(visible(value));
  }

  function count(n) {
    return Number(n).toLocaleString("en-US");
  }

  function plural(n, noun) {
    return count(n) + " " + noun + (n === 1 ? "" : "s");
  }

  /* The data file's JSON: gunzipped here unless the server already decoded it (a server that sends .gz
     files with Content-Encoding: gzip hands over JSON: the gzip magic bytes tell which). */
  function readTrials(href) {
    if (!read[href]) {
      read[href] = fetch(href, { credentials: "same-origin" })
        .then(function (resp) {
          if (!resp.ok) {
            throw new Error("the server answered " + resp.status);
          }
          return resp.arrayBuffer();
        })
        .then(function (buffer) {
          var bytes = new Uint8Array(buffer);
          if (bytes.length > 1 && bytes[0] === 0x1f && bytes[1] === 0x8b) {
            if (typeof DecompressionStream === "undefined") {
              throw new Error("this browser cannot decompress gzip (no DecompressionStream)");
            }
            var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
            return new Response(stream).text();
          }
          return new TextDecoder("utf-8").decode(bytes);
        })
        .then(function (text) {
          return trialsOf(JSON.parse(text));
        });
      read[href].catch(function () {
        delete read[href];
      });
    }
    return read[href];
  }

  /* The file holds the trials by column (fmbench.views.data.trials_document): each field a list of values,
     one a trial, and the metrics and environment a list of columns, one a label. A field that repeats a value
     may be {"distinct": [each value once], "at": [each trial's index into it]}. Made back into trials. */
  /* Trial ids that are all runner-written UUIDs may be {"uuids": base64 of their 16 bytes each}: made back into
     upper-case, dashed UUIDs. */
  function uuids(packed) {
    var raw = atob(packed);
    var hex = "0123456789ABCDEF";
    var out = [];
    for (var i = 0; i + 16 <= raw.length; i += 16) {
      var s = "";
      for (var j = 0; j < 16; j += 1) {
        var b = raw.charCodeAt(i + j);
        s += hex.charAt(b >> 4) + hex.charAt(b & 15);
        if (j === 3 || j === 5 || j === 7 || j === 9) {
          s += "-";
        }
      }
      out.push(s);
    }
    return out;
  }

  function column(values) {
    if (values && !Array.isArray(values) && typeof values.uuids === "string") {
      return uuids(values.uuids);
    }
    if (values && !Array.isArray(values) && Array.isArray(values.distinct) && Array.isArray(values.at)) {
      return values.at.map(function (i) {
        return values.distinct[i];
      });
    }
    return values;
  }

  function trialsOf(data) {
    var held = data && data.columns;
    if (!held || !Array.isArray(held.ordinal)) {
      throw new Error("the file holds no trials");
    }
    var cols = {};
    Object.keys(held).forEach(function (k) {
      cols[k] = column(held[k]);
    });
    var names = Object.keys(cols).filter(function (k) {
      return k !== "metrics" && k !== "environment";
    });
    var labelled = function (labels, columns, i) {
      var out = {};
      (labels || []).forEach(function (label, j) {
        out[label] = columns[j][i];
      });
      return out;
    };
    data.trials = cols.ordinal.map(function (_, i) {
      var t = {};
      names.forEach(function (k) {
        t[k] = cols[k][i];
      });
      t.metrics = labelled(data.metric_labels, cols.metrics, i);
      t.environment = labelled(data.environment_labels, cols.environment, i);
      t.offline_run = data.offline === true;
      return t;
    });
    return data;
  }

  /* ---------- one trial ---------- */

  function pair(dl, label, value, code) {
    dl.appendChild(el("dt", null, label));
    if (value === null || value === undefined || value === "") {
      dl.appendChild(el("dd", "nr", "not recorded"));
      return;
    }
    var dd = el("dd");
    if (code) {
      dd.appendChild(el("code", null, value));
    } else {
      dd.textContent = visible(value);
    }
    dl.appendChild(dd);
  }

  function block(parent, heading, text) {
    parent.appendChild(el("h3", null, heading));
    parent.appendChild(el("pre", null, text === null || text === undefined ? "" : text));
  }

  function valuesList(values) {
    var dl = el("dl", "kv");
    Object.keys(values || {}).forEach(function (label) {
      pair(dl, label, values[label]);
    });
    return dl;
  }

  function checksList(checks) {
    if (!checks || !checks.length) {
      return el("p", "muted", "This sample has no checks.");
    }
    var ul = el("ul", "checks");
    checks.forEach(function (c) {
      var li = el("li");
      li.appendChild(el("span", c.passed ? "badge badge-pass" : "badge badge-fail", c.passed ? "pass" : "fail"));
      li.appendChild(text(" " + c.label));
      if (c.detail) {
        li.appendChild(text(" "));
        li.appendChild(el("span", "muted", "— " + c.detail));
      }
      ul.appendChild(li);
    });
    return ul;
  }

  function toolCalls(calls) {
    var ol = el("ol", "tool-calls");
    calls.forEach(function (call) {
      var li = el("li");
      li.appendChild(el("code", null, call.name));
      var keys = Object.keys(call.arguments || {});
      if (keys.length) {
        li.appendChild(text("("));
        keys.forEach(function (k, i) {
          if (i) {
            li.appendChild(text(", "));
          }
          li.appendChild(el("code", null, k));
          li.appendChild(text(": " + call.arguments[k]));
        });
        li.appendChild(text(")"));
      }
      ol.appendChild(li);
    });
    return ol;
  }

  function trialArticle(t, number) {
    var article = el("article", "trial");
    article.id = "trial-" + t.ordinal;
    var details = el("details");
    /* Its parts apart, the separators hidden from screen readers (read as "Trial 3 sample … iteration …"). */
    var summary = el("summary");
    var parts = ["Trial " + count(number), "sample " + t.sample_id, "iteration " + t.iteration, t.verdict];
    if (t.fallback) {
      parts.push("fallback");
    }
    parts.forEach(function (part, i) {
      if (i) {
        var sep = el("span", null, " ·");
        sep.setAttribute("aria-hidden", "true");
        summary.appendChild(sep);
        summary.appendChild(text(" "));
      }
      summary.appendChild(text(part));
    });
    details.appendChild(summary);
    fillTrial(details, t);
    article.appendChild(details);
    return article;
  }

  function fillTrial(details, t) {
    var dl = el("dl", "kv");
    pair(dl, "Trial id", t.trial_id, true);
    pair(dl, "Model", "requested " + t.requested_model + ", executed " + t.executed_model + (t.fallback ? " (" + t.fallback + ")" : ""));
    if (t.safety) {
      pair(dl, "Safety", t.safety);
    }
    pair(dl, "Thermal state", t.thermal);
    if (t.offline_run) {  /* only a run on a verified offline path: elsewhere every trial's is "no" */
      pair(dl, "Offline success", t.offline_success);
    }
    if (t.visual_fixture) {
      pair(dl, "Visual fixture", t.visual_fixture, true);
    }
    details.appendChild(dl);
    if (t.instructions) {
      block(details, "Instructions", t.instructions);
    }
    block(details, "Prompt", t.prompt);
    block(details, "Response", t.response);
    details.appendChild(el("h3", null, "Checks"));
    details.appendChild(checksList(t.checks));
    if (t.tool_calls && t.tool_calls.length) {
      details.appendChild(el("h3", null, "Tool-call trajectory"));
      details.appendChild(toolCalls(t.tool_calls));
    }
    if (t.final_state && t.final_state.length) {
      details.appendChild(el("h3", null, "Final state"));
      var state = el("dl", "kv");
      t.final_state.forEach(function (s) {
        pair(state, s.key, s.value);
      });
      details.appendChild(state);
    }
    details.appendChild(el("h3", null, "Metrics"));
    details.appendChild(valuesList(t.metrics));
    details.appendChild(el("h3", null, "Environment at this trial"));
    details.appendChild(valuesList(t.environment));
  }

  /* ---------- a scenario's trial list ---------- */

  function TrialList(host, href, total, perPage) {
    this.host = host;
    this.href = href;
    this.total = total;
    this.perPage = perPage || PER_PAGE;
    this.page = 0;
    this.data = null;
    this.shown = [];
    this.status = el("p", "trials-status");
    this.status.setAttribute("role", "status");
    this.status.textContent = "Loading trials…";
    host.appendChild(this.status);
  }

  TrialList.prototype.load = function () {
    var self = this;
    return readTrials(this.href).then(
      function (data) {
        self.data = data;
        self.numbers = {};
        data.trials.forEach(function (t, i) {
          self.numbers[t.ordinal] = i + 1;
        });
        self.build();
        self.apply();
        return self;
      },
      function (err) {
        self.status.textContent = "Could not read the trials (" + (err && err.message ? err.message : "unknown error") + "). ";
        var a = el("a", null, "Download the trial data (JSON, gzip)");
        a.href = self.href;
        self.status.appendChild(a);
        self.status.appendChild(text("."));
        self.status.classList.add("trials-error");
        throw err;
      }
    );
  };

  TrialList.prototype.build = function () {
    var self = this;
    var name = this.data.scenario || "";
    var form = el("form", "trials-filter");
    form.setAttribute("role", "search");
    form.setAttribute("aria-label", "Filter the trials of " + name);
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
    });
    var verdictLabel = el("label", null, "Show ");
    this.verdict = el("select");
    [["", "all trials"], ["task failed", "failed trials"], ["task passed", "passed trials"]].forEach(function (o) {
      var opt = el("option", null, o[1]);
      opt.value = o[0];
      self.verdict.appendChild(opt);
    });
    verdictLabel.appendChild(this.verdict);
    var findLabel = el("label", null, "Find ");
    this.find = el("input");
    this.find.type = "search";
    this.find.placeholder = "sample, trial id, text";
    findLabel.appendChild(this.find);
    form.appendChild(verdictLabel);
    form.appendChild(text(" "));
    form.appendChild(findLabel);
    this.verdict.addEventListener("change", function () {
      self.page = 0;
      self.apply();
    });
    this.find.addEventListener("input", function () {
      self.page = 0;
      self.apply();
    });

    this.nav = el("nav", "pager trials-pager");
    this.nav.setAttribute("aria-label", "Pages of the trials of " + name);
    this.prev = el("button", "pager-prev", "← Previous");
    this.prev.type = "button";
    this.next = el("button", "pager-next", "Next →");
    this.next.type = "button";
    this.pageText = el("span", "pager-status");
    this.prev.addEventListener("click", function () {
      self.go(self.page - 1);
    });
    this.next.addEventListener("click", function () {
      self.go(self.page + 1);
    });
    this.nav.appendChild(this.prev);
    this.nav.appendChild(text(" "));
    this.nav.appendChild(this.pageText);
    this.nav.appendChild(text(" "));
    this.nav.appendChild(this.next);

    this.list = el("div", "trial-list");
    this.host.insertBefore(form, this.status);
    this.host.appendChild(this.list);
    this.host.appendChild(this.nav);
  };

  TrialList.prototype.apply = function () {
    var verdict = this.verdict.value;
    var needle = this.find.value.trim().toLowerCase();
    this.shown = this.data.trials.filter(function (t) {
      if (verdict && t.verdict !== verdict) {
        return false;
      }
      if (!needle) {
        return true;
      }
      return [t.sample_id, t.trial_id, t.prompt, t.response].some(function (v) {
        return typeof v === "string" && v.toLowerCase().indexOf(needle) !== -1;
      });
    });
    this.render();
  };

  TrialList.prototype.pages = function () {
    return Math.max(1, Math.ceil(this.shown.length / this.perPage));
  };

  TrialList.prototype.go = function (page) {
    this.page = Math.min(Math.max(0, page), this.pages() - 1);
    this.render();
    this.status.scrollIntoView({ block: "nearest" });
  };

  TrialList.prototype.render = function () {
    var self = this;
    var all = this.data.trials.length;
    var n = this.shown.length;
    var first = this.page * this.perPage;
    var slice = this.shown.slice(first, first + this.perPage);
    var filtered = n !== all;
    if (all === 0) {
      this.status.textContent = "No trial in this scenario.";
    } else if (n === 0) {
      this.status.textContent = "No trial matches (" + plural(all, "trial") + " in all).";
    } else {
      var range = first + 1 === first + slice.length ? "Trial " + count(first + 1) : "Trials " + count(first + 1) + "–" + count(first + slice.length);
      this.status.textContent = range + " of " + count(n) + (filtered ? " shown (" + plural(all, "trial") + " in all)" : "") + ".";
    }
    var items = slice.map(function (t) {
      return trialArticle(t, self.numbers[t.ordinal]);
    });
    this.list.replaceChildren.apply(this.list, items);
    this.pageText.textContent = "Page " + count(this.page + 1) + " of " + count(this.pages());
    this.prev.disabled = this.page === 0;
    this.next.disabled = this.page >= this.pages() - 1;
    this.nav.hidden = this.pages() < 2;
  };

  /* Shows the trial with this ordinal (all trials again if the filter hides it) and opens it. */
  TrialList.prototype.reveal = function (ordinal, again) {
    var at = -1;
    for (var i = 0; i < this.shown.length; i++) {
      if (this.shown[i].ordinal === ordinal) {
        at = i;
        break;
      }
    }
    if (at < 0) {
      if (again || !(ordinal in this.numbers)) {
        return false;
      }
      this.verdict.value = "";
      this.find.value = "";
      this.apply();
      return this.reveal(ordinal, true);
    }
    this.page = Math.floor(at / this.perPage);
    this.render();
    var article = doc.getElementById("trial-" + ordinal);
    if (article) {
      var details = article.firstElementChild;
      details.open = true;
      article.scrollIntoView();
      details.querySelector("summary").focus({ preventScroll: true });
    }
    return true;
  };

  /* The scenario's measured failures (requests that returned no response), for the run page's "Show here": a
     trials page lists them in its HTML. */
  function failureList(failures) {
    var section = el("div", "trial-failures");
    section.appendChild(el("h3", null, failures.length === 1 ? "1 measured failure" : plural(failures.length, "measured failure")));
    var ul = el("ul");
    failures.forEach(function (f) {
      var li = el("li");
      li.appendChild(text("sample " + (f.sample_id || "not recorded") + " · iteration " + f.iteration + " · " + (f.kind || "kind not recorded") + ": "));
      li.appendChild(el("span", null, f.message || ""));
      if (f.tool_calls && f.tool_calls.length) {
        li.appendChild(toolCalls(f.tool_calls));
      }
      if (f.final_state && f.final_state.length) {
        var state = el("dl", "kv");
        f.final_state.forEach(function (s) {
          pair(state, s.key, s.value);
        });
        li.appendChild(state);
      }
      ul.appendChild(li);
    });
    section.appendChild(ul);
    return section;
  }

  function attach(host, withFailures) {
    var list = new TrialList(
      host,
      new URL(host.getAttribute("data-trials-data"), doc.baseURI).href,
      Number(host.getAttribute("data-trials-total")),
      Number(host.getAttribute("data-per-page")) || PER_PAGE
    );
    return list.load().then(function (loaded) {
      if (withFailures && loaded.data.failures && loaded.data.failures.length) {
        host.insertBefore(failureList(loaded.data.failures), host.firstChild);
      }
      return loaded;
    });
  }

  /* ---------- where it runs ---------- */

  var page = doc.querySelector("div.trials-app[data-trials-data]");
  if (page) {
    var ready = attach(page);
    var wanted = function () {
      var m = /^#trial-(\d+)$/.exec(window.location.hash);
      if (m) {
        ready.then(function (list) {
          list.reveal(Number(m[1]));
        }, function () {});
      }
    };
    doc.addEventListener("click", function (ev) {
      var link = ev.target && ev.target.closest ? ev.target.closest("a[data-trial]") : null;
      if (link && link.getAttribute("href") === window.location.hash) {
        wanted();
      }
    });
    window.addEventListener("hashchange", wanted);
    ready.catch(function () {});
    wanted();
  }

  Array.prototype.forEach.call(doc.querySelectorAll("button[data-trials-data]"), function (button) {
    button.addEventListener("click", function () {
      if (button.getAttribute("aria-busy") === "true") {
        return;
      }
      var target = button.parentNode.querySelector(".trials-target");
      if (!target) {
        target = el("div", "trials-target");
        button.parentNode.insertBefore(target, button.nextSibling);
      }
      target.replaceChildren();
      var host = el("div", "trials-app");
      host.setAttribute("data-trials-data", button.getAttribute("data-trials-data"));
      host.setAttribute("data-trials-total", button.getAttribute("data-trials-total") || "");
      target.appendChild(host);
      button.setAttribute("aria-busy", "true");
      button.disabled = true;
      attach(host, true).then(
        function () {
          button.hidden = true;
        },
        function () {
          button.disabled = false;
        }
      ).then(function () {
        button.removeAttribute("aria-busy");
      });
    });
  });
})();
