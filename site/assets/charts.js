/*
 * fmbench: draws the charts of a page with Plotly, and loads Plotly only
 * when a chart is about to be seen.
 *
 * Only pages that draw a chart load this file (base.html), with the address
 * of the chart library in its data-plotly attribute. Nothing of Plotly is
 * fetched until a chart comes near the viewport (IntersectionObserver, 300 px
 * ahead); a chart visible on load is drawn on load. The text of the page
 * paints first: this file is deferred and Plotly is injected async. Charts
 * are drawn one per task (each after an animation frame), so the page keeps
 * answering input while several charts are drawn.
 *
 * For each element [data-chart="<id>"], the figure is read from
 * <script type="application/json" id="<id>"> ({"data": [...], "layout":
 * {...}} or a bare list of traces), themed from the CSS custom properties
 * of style.css (font, colours, the Okabe-Ito colourway, light or dark
 * following prefers-color-scheme) and drawn with Plotly.newPlot.
 *
 * Strings that come from data (trace names, text, hover text, category
 * labels, custom data) are shown as plain text: Plotly would otherwise read
 * a few HTML-like tags in them, so <, > and & are turned into entities,
 * which Plotly prints literally.
 *
 * A trace of every trial carries "spread" instead of x (spreadTrace).
 *
 * When Plotly cannot be loaded or a chart fails, the chart's table (always
 * in the page) is opened and a note says why.
 *
 * Below each chart, two buttons: its data (the figure's JSON as the page
 * holds it) and a PNG (Plotly.downloadImage), saved through
 * window.fmbenchDownloads (downloads.js, loaded before this file). They are
 * added before any chart is drawn, in the space the page keeps for them, so
 * nothing moves when a chart appears.
 */
(function () {
  "use strict";

  var doc = document;
  var plots = Array.prototype.slice.call(doc.querySelectorAll("[data-chart]"));
  if (plots.length === 0) {
    return;
  }

  var FALLBACK_COLORWAY = ["#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#000000"];
  var darkQuery = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;

  function showFallback(plot, message) {
    var figure = plot.closest("figure") || plot.parentNode;
    if (!figure) {
      return;
    }
    plot.hidden = true;
    var details = figure.querySelector("details.chart-table");
    if (details) {
      details.open = true;
    }
    if (!figure.querySelector(".chart-fallback")) {
      var p = doc.createElement("p");
      p.className = "chart-fallback";
      p.textContent = message;
      figure.insertBefore(p, details || null);
    }
  }

  var self = doc.currentScript || doc.querySelector("script[data-plotly]");
  var plotlySrc = self ? self.getAttribute("data-plotly") : null;
  var P = window.Plotly || null;
  var loading = null;

  function loadPlotly() {
    if (P && typeof P.newPlot === "function") {
      return Promise.resolve(P);
    }
    if (!loading) {
      loading = new Promise(function (resolve, reject) {
        if (!plotlySrc) {
          reject(new Error("no chart library"));
          return;
        }
        var s = doc.createElement("script");
        s.src = plotlySrc;
        s.async = true;
        s.onload = function () {
          P = window.Plotly || null;
          if (P && typeof P.newPlot === "function") {
            resolve(P);
          } else {
            reject(new Error("no chart library"));
          }
        };
        s.onerror = function () {
          reject(new Error("no chart library"));
        };
        doc.head.appendChild(s);
      });
    }
    return loading;
  }

  function unavailable(plot) {
    showFallback(plot, "The interactive chart could not be loaded, so the table below shows its data.");
  }

  /* ---------- theme ---------- */

  function cssVar(style, name, fallback) {
    var v = style.getPropertyValue(name);
    v = v ? v.trim() : "";
    return v || fallback;
  }

  function theme() {
    var s = window.getComputedStyle(doc.documentElement);
    var fg = cssVar(s, "--fg", "#15191e");
    var muted = cssVar(s, "--muted", "#55606b");
    var border = cssVar(s, "--border", "#d6dce2");
    var grid = cssVar(s, "--chart-grid", border);
    var surface = cssVar(s, "--surface", "#f5f7f9");
    var font = cssVar(s, "--font", "system-ui, sans-serif");
    var colorway = [];
    for (var i = 1; i <= 8; i += 1) {
      colorway.push(cssVar(s, "--chart-" + i, FALLBACK_COLORWAY[i - 1]));
    }
    var axis = {
      gridcolor: grid,
      linecolor: border,
      zerolinecolor: border,
      tickcolor: border,
      tickfont: { color: muted },
      title: { font: { color: muted } },
      automargin: true
    };
    return {
      data: {},
      layout: {
        font: { family: font, color: fg, size: 13 },
        paper_bgcolor: "rgba(0,0,0,0)",
        plot_bgcolor: "rgba(0,0,0,0)",
        colorway: colorway,
        xaxis: axis,
        yaxis: axis,
        /* legend above the plot, horizontal: leaves the plot its width on phones */
        legend: {
          bgcolor: "rgba(0,0,0,0)",
          font: { color: fg },
          orientation: "h",
          x: 0,
          xanchor: "left",
          y: 1.02,
          yanchor: "bottom"
        },
        hoverlabel: {
          bgcolor: surface,
          bordercolor: border,
          font: { family: font, color: fg }
        },
        margin: { l: 56, r: 16, t: 32, b: 48 },
        autosize: true
      }
    };
  }

  /* ---------- plain text for data strings ---------- */

  function plain(s) {
    return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }

  function plainDeep(v) {
    if (typeof v === "string") {
      return plain(v);
    }
    if (Array.isArray(v)) {
      return v.map(plainDeep);
    }
    return v; /* numbers, null, typed-array objects: unchanged */
  }

  var DATA_KEYS = ["name", "text", "hovertext", "x", "y", "labels", "parents", "ids", "customdata"];

  function plainTrace(trace) {
    if (!trace || typeof trace !== "object") {
      return trace;
    }
    DATA_KEYS.forEach(function (key) {
      if (Object.prototype.hasOwnProperty.call(trace, key)) {
        trace[key] = plainDeep(trace[key]);
      }
    });
    if (trace.legendgrouptitle && typeof trace.legendgrouptitle.text === "string") {
      trace.legendgrouptitle.text = plain(trace.legendgrouptitle.text);
    }
    return trace;
  }

  /* ---------- trials spread in their column ---------- */

  /* A trace of every trial (fmbench.views.distributions.trials_chart) holds
   * no x: "spread" counts the points of each column, in the order of y.
   * Column i's j-th point goes to i + ((j * 0.618034) mod 1 - 0.5) * 0.5:
   * spread evenly across half the column's width, the same on every page. */
  function spreadTrace(trace) {
    if (!trace || !Array.isArray(trace.spread) || Array.isArray(trace.x)) {
      return trace;
    }
    var xs = [];
    trace.spread.forEach(function (count, column) {
      for (var j = 0; j < count; j += 1) {
        xs.push(column + (((j * 0.618034) % 1) - 0.5) * 0.5);
      }
    });
    trace.x = xs;
    delete trace.spread;
    return trace;
  }

  /* ---------- labels that fit the plot's width ---------- */

  var CHAR_PX = 7.5; /* the average width of a 13 px character */

  /* a label's pieces: its words, a hyphenated word broken after each hyphen ("Natural-", "language") */
  function pieces(label) {
    var out = [];
    String(label).split(" ").forEach(function (word) {
      var parts = word.split("-");
      parts.forEach(function (part, i) {
        out.push({ text: i < parts.length - 1 ? part + "-" : part, glued: i > 0 });
      });
    });
    return out;
  }

  /* a label as lines of at most `chars` characters, broken between words and after hyphens (a longer piece
   * stays whole) */
  function wrapLines(label, chars) {
    var lines = [];
    pieces(label).forEach(function (p) {
      var last = lines.length - 1;
      var joined = last >= 0 ? lines[last] + (p.glued || /-$/.test(lines[last]) ? "" : " ") + p.text : "";
      if (last >= 0 && joined.length <= chars) {
        lines[last] = joined;
      } else {
        lines.push(p.text);
      }
    });
    return lines;
  }

  function longestPiece(labels) {
    return labels.reduce(function (most, t) {
      return pieces(t).reduce(function (m, p) { return Math.max(m, p.text.length); }, most);
    }, 0);
  }

  function categories(data, letter) {
    var seen = [];
    data.forEach(function (trace) {
      (Array.isArray(trace[letter]) ? trace[letter] : []).forEach(function (v) {
        if (typeof v === "string" && seen.indexOf(v) === -1) {
          seen.push(v);
        }
      });
    });
    return seen;
  }

  /* Fits a figure to the width it is drawn at: a numeric axis gets as many ticks as its length holds, a
   * category's long label wraps onto lines (never rotated, never cut), and a legend entry too long for the
   * width wraps onto lines too (never cut: the end of a name is often what tells two traces apart). */
  function fitToWidth(fig, width, height) {
    var layout = fig.layout;
    var plotWidth = Math.max(120, width - 80);
    ["xaxis", "yaxis"].forEach(function (name) {
      var ax = layout[name] || (layout[name] = {});
      var letter = name.charAt(0);
      var span = letter === "x" ? plotWidth : Math.max(120, height - 90);
      if (ax.type === "category" || Array.isArray(ax.ticktext)) {
        var values = Array.isArray(ax.ticktext) ? ax.tickvals : categories(fig.data, letter);
        var texts = Array.isArray(ax.ticktext) ? ax.ticktext.map(function (t) { return plain(String(t)); }) : values;
        if (!values || !values.length) {
          return;
        }
        ax.tickmode = "array";
        ax.tickvals = values;
        ax.tickangle = 0;
        if (letter === "x") {
          var slot = plotWidth / values.length;
          var chars = Math.floor(slot / CHAR_PX) - 1;
          if (longestPiece(texts) > chars) {
            /* too narrow a column for a word: each label upright, along its column, whole */
            var longestLabel = texts.reduce(function (m, t) { return Math.max(m, t.length); }, 0);
            ax.ticktext = texts;
            ax.tickangle = -90;
            layout.height = height + Math.ceil(longestLabel * CHAR_PX);
            return;
          }
          ax.ticktext = texts.map(function (t) { return wrapLines(t, chars).join("<br>"); });
        } else {
          var wrapped = texts.map(function (t) { return wrapLines(t, Math.max(10, Math.floor(width * 0.4 / CHAR_PX))); });
          var lines = wrapped.reduce(function (m, l) { return Math.max(m, l.length); }, 1);
          ax.ticktext = wrapped.map(function (l) { return l.join("<br>"); });
          var row = (height - 90) / values.length;
          if (lines * 17 > row) {
            layout.height = 90 + values.length * (lines * 17 + 6);  /* each row as tall as its label */
          }
        }
      } else {
        var room = Math.max(3, Math.floor(span / (letter === "x" ? 90 : 45)));
        ax.nticks = Math.min(ax.nticks || room, room);
        if (letter === "x") {
          ax.tickangle = 0;
        }
      }
    });
    var longest = Math.max(12, Math.floor((width - 60) / CHAR_PX));
    fig.data.forEach(function (trace) {
      if (typeof trace.name === "string" && trace.name.length > longest) {
        trace.name = wrapLines(trace.name, longest).join("<br>"); /* whole, on lines: its end tells traces apart */
      }
    });
    makeRoomForLegend(fig, width, height);
    return fig;
  }

  /* The legend's rows at this width, and the chart made that much taller, so the legend (above the plot) never
   * takes the plot's own height: every entry shown whole, no scrolling legend, the plot as tall as the figure
   * asked. An entry is its longest line plus about 40 px of symbol and gap, as tall as its lines; entries fill a
   * row before the next. */
  var LEGEND_LINE_PX = 17; /* a line of a 13 px legend entry */
  var LEGEND_GAP_PX = 14; /* between two entries */
  var LEGEND_PLOT_EXTRA = 100; /* px: how much taller than its legend a plot is kept */

  function makeRoomForLegend(fig, width, height) {
    var named = fig.data.filter(function (t) {
      return t.showlegend !== false && typeof t.name === "string" && t.name;
    });
    var shown = named.length > 1 || named.some(function (t) { return t.showlegend === true; });
    if (fig.layout.showlegend === false || !shown) {
      return;
    }
    var room = 12;
    var row = 0;
    var used = 0;
    named.forEach(function (t) {
      var lines = t.name.split("<br>");
      var entry = 40 + lines.reduce(function (m, l) { return Math.max(m, l.length); }, 0) * CHAR_PX;
      var tall = lines.length * LEGEND_LINE_PX + LEGEND_GAP_PX;
      if (used > 0 && used + entry > width) {
        room += row;
        row = 0;
        used = 0;
      }
      used += entry;
      row = Math.max(row, tall);
    });
    room += row;
    /* a legend of many long names (a phone's width wraps them) would still dwarf the plot: the plot is then made
     * taller than the legend and its margins, so the chart stays mostly plot */
    var asked = fig.layout.height || height;
    var plot = asked - 90;
    fig.layout.height = asked + room + Math.max(0, room + LEGEND_PLOT_EXTRA - plot);
    fig.layout.legend = fig.layout.legend || {};
    fig.layout.legend.maxheight = room + 2 * LEGEND_LINE_PX; /* px: the whole legend, never a scrolled part of it */
  }

  /* ---------- figures ---------- */

  function readFigure(plot) {
    var id = plot.getAttribute("data-chart");
    var script = id ? doc.getElementById(id) : null;
    if (!script || script.tagName !== "SCRIPT" || script.type !== "application/json") {
      throw new Error("no chart data");
    }
    var fig = JSON.parse(script.textContent);
    if (typeof fig === "string") {
      fig = JSON.parse(fig); /* a figure serialized twice */
    }
    if (Array.isArray(fig)) {
      fig = { data: fig, layout: {} };
    }
    if (!fig || typeof fig !== "object") {
      throw new Error("chart data is not a figure");
    }
    var data = Array.isArray(fig.data) ? fig.data.map(plainTrace).map(spreadTrace) : [];
    var layout = fig.layout && typeof fig.layout === "object" ? fig.layout : {};
    layout.template = theme(); /* replaces any template from the Python side */
    delete layout.width; /* the container decides the width */
    return { data: data, layout: layout };
  }

  var CONFIG = { responsive: true, displaylogo: false };

  function draw(plot, first) {
    var fig;
    try {
      fig = readFigure(plot);
    } catch (err) {
      showFallback(plot, "This chart could not be drawn, so the table below shows its data.");
      return;
    }
    var height = (fig.layout && fig.layout.height) || plot.clientHeight || 360;
    fitToWidth(fig, plot.clientWidth || 360, height);
    try {
      var result = first
        ? P.newPlot(plot, fig.data, fig.layout, CONFIG)
        : P.react(plot, fig.data, fig.layout, CONFIG);
      if (result && typeof result.then === "function") {
        result.then(null, function () {
          showFallback(plot, "This chart could not be drawn, so the table below shows its data.");
        });
      }
    } catch (err) {
      showFallback(plot, "This chart could not be drawn, so the table below shows its data.");
    }
  }

  function drawAll(first) {
    plots.forEach(function (plot) {
      if (!plot.hidden && (first || plot.classList.contains("js-plotly-plot"))) {
        draw(plot, first);
      }
    });
  }

  /* ---------- drawing as charts come into view, one per task ---------- */

  var queue = [];
  var pumping = false;

  function nextTask(fn) {
    if (window.requestAnimationFrame) {
      window.requestAnimationFrame(function () {
        window.setTimeout(fn, 0);
      });
    } else {
      window.setTimeout(fn, 0);
    }
  }

  function pump() {
    var plot = queue.shift();
    if (!plot) {
      pumping = false;
      return;
    }
    if (!plot.hidden && !plot.classList.contains("js-plotly-plot")) {
      draw(plot, true);
    }
    nextTask(pump);
  }

  function want(plot) {
    if (plot.getAttribute("data-chart-queued")) {
      return;
    }
    plot.setAttribute("data-chart-queued", "1");
    queue.push(plot);
    loadPlotly().then(
      function () {
        if (!pumping) {
          pumping = true;
          pump();
        }
      },
      function () {
        queue.splice(0).forEach(unavailable);
      }
    );
  }

  if ("IntersectionObserver" in window) {
    var seen = new IntersectionObserver(
      function (entries) {
        entries.forEach(function (entry) {
          if (entry.isIntersecting) {
            seen.unobserve(entry.target);
            want(entry.target);
          }
        });
      },
      { rootMargin: "300px 0px" }
    );
    plots.forEach(function (plot) {
      seen.observe(plot);
    });
  } else {
    plots.forEach(want);
  }

  /* ---------- downloads: each chart's data (its figure as JSON) and a PNG ---------- */

  function addDownloads(plot) {
    var dl = window.fmbenchDownloads;
    var id = plot.getAttribute("data-chart");
    var figure = plot.closest("figure");
    if (!dl || !id || !figure || plot.hidden) {
      return;
    }
    var caption = figure.querySelector("figcaption");
    var title = caption ? caption.textContent.trim() : id;
    var name = id.replace(/-data$/, "");
    var bar = doc.createElement("p");
    bar.className = "downloads";
    var data = dl.button("Chart data (JSON)", "Chart data (JSON) of \u201c" + title + "\u201d");
    data.setAttribute("data-download-chart-data", name);
    data.addEventListener("click", function () {
      var script = doc.getElementById(id);
      dl.save(name + ".json", "application/json", script ? script.textContent : "{}");
    });
    var png = dl.button("Chart as PNG", "Chart as PNG: \u201c" + title + "\u201d");
    png.setAttribute("data-download-chart-png", name);
    png.addEventListener("click", function () {
      loadPlotly().then(
        function () {
          if (!plot.classList.contains("js-plotly-plot")) {
            draw(plot, true);
          }
          P.downloadImage(plot, { format: "png", filename: name, scale: 2 });
        },
        function () {
          unavailable(plot);
        }
      );
    });
    bar.appendChild(data);
    bar.appendChild(doc.createTextNode(" "));
    bar.appendChild(png);
    var kept = figure.querySelector("p.chart-downloads"); /* the space the page keeps for these buttons */
    if (kept) {
      bar.className = kept.className;
      kept.parentNode.replaceChild(bar, kept);
    } else {
      figure.insertBefore(bar, plot.nextSibling);
    }
  }

  plots.forEach(addDownloads);

  if (darkQuery) {
    var redraw = function () {
      drawAll(false);
    };
    if (typeof darkQuery.addEventListener === "function") {
      darkQuery.addEventListener("change", redraw);
    } else if (typeof darkQuery.addListener === "function") {
      darkQuery.addListener(redraw);
    }
  }

  /* charts inside a <details> opened later need a size recomputation */
  doc.addEventListener(
    "toggle",
    function (ev) {
      var t = ev.target;
      if (t && t.open && t.querySelectorAll) {
        Array.prototype.forEach.call(t.querySelectorAll("[data-chart]"), function (plot) {
          if (plot.classList.contains("js-plotly-plot") && P && P.Plots && P.Plots.resize) {
            P.Plots.resize(plot);
          }
        });
      }
    },
    true
  );
})();
