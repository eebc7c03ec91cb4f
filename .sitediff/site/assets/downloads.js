/*
 * fmbench: downloads made in the browser, so the site holds no extra files.
 *
 * Every data table (table.data, from the data_table macro) gets a "Download
 * CSV" button after it: the header row and the rows shown (rows hidden by a
 * filter are left out), each cell as the text the page shows, in RFC 4180
 * quoting. A cell that a spreadsheet would run as a formula (starting with =,
 * @, a tab, a carriage return, or + or - not followed by a digit) is
 * prefixed with an apostrophe.
 *
 * Links to gzipped JSON data files (a[data-gzip-json]) save the JSON itself,
 * decompressed in the browser (DecompressionStream).
 *
 * Also offers window.fmbenchDownloads.save(name, type, text) for charts.js
 * (the chart data and PNG buttons) and readGzipJson(url), a promise of the
 * text of a gzipped JSON file of the site.
 *
 * No dependencies. Never uses innerHTML.
 */
(function () {
  "use strict";

  var doc = document;

  function save(name, type, content) {
    var blob = content instanceof Blob ? content : new Blob([content], { type: type });
    var href = URL.createObjectURL(blob);
    var a = doc.createElement("a");
    a.href = href;
    a.download = name;
    a.hidden = true;
    doc.body.appendChild(a);
    a.click();
    doc.body.removeChild(a);
    window.setTimeout(function () {
      URL.revokeObjectURL(href);
    }, 10000);
  }

  function cellText(cell) {
    return (cell.textContent || "").replace(/\s+/g, " ").trim();
  }

  function csvField(text) {
    if (/^[=@\t\r]/.test(text) || /^[+-](?![0-9.])/.test(text)) {
      text = "'" + text;
    }
    return /[",\r\n]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
  }

  function tableRows(table) {
    var out = [];
    var head = table.tHead ? table.tHead.rows : [];
    Array.prototype.forEach.call(head, function (tr) {
      out.push(Array.prototype.map.call(tr.cells, cellText));
    });
    Array.prototype.forEach.call(table.tBodies, function (body) {
      Array.prototype.forEach.call(body.rows, function (tr) {
        if (tr.hidden || tr.classList.contains("empty-row")) {
          return;
        }
        out.push(Array.prototype.map.call(tr.cells, cellText));
      });
    });
    return out;
  }

  function tableCsv(table) {
    return tableRows(table)
      .map(function (cells) {
        return cells.map(csvField).join(",");
      })
      .join("\r\n") + "\r\n";
  }

  /* label: the accessible name, which starts with the visible text (so speech input finds it) */
  function button(text, label) {
    var b = doc.createElement("button");
    b.type = "button";
    b.className = "download-button";
    b.textContent = text;
    if (label) {
      b.setAttribute("aria-label", label);
    }
    return b;
  }

  function captionOf(table) {
    return table.caption ? cellText(table.caption) : table.id;
  }

  Array.prototype.forEach.call(doc.querySelectorAll("table.data[id]"), function (table) {
    var wrap = table.closest(".table-wrap") || table;
    var bar = doc.createElement("p");
    bar.className = "downloads";
    var b = button("Download CSV", "Download CSV of \u201c" + captionOf(table) + "\u201d");
    b.setAttribute("data-download-csv", table.id);
    b.addEventListener("click", function () {
      save(table.id + ".csv", "text/csv;charset=utf-8", tableCsv(table));
    });
    bar.appendChild(b);
    wrap.parentNode.insertBefore(bar, wrap.nextSibling);
  });

  /* A site data file stored gzipped (a[data-gzip-json], such as a scenario's trials): read in the browser
     with DecompressionStream('gzip') and saved as plain JSON. A server that already decoded it (one that
     sends .gz files with Content-Encoding: gzip) hands over JSON: the gzip magic bytes tell which. Without
     DecompressionStream the link downloads the .gz file itself. */
  function readGzipJson(href) {
    return fetch(href, { credentials: "same-origin" })
      .then(function (resp) {
        if (!resp.ok) {
          throw new Error("the server answered " + resp.status);
        }
        return resp.arrayBuffer();
      })
      .then(function (buffer) {
        var head = new Uint8Array(buffer, 0, Math.min(2, buffer.byteLength));
        var body = new Blob([buffer]).stream();
        if (head[0] === 0x1f && head[1] === 0x8b) {
          body = body.pipeThrough(new DecompressionStream("gzip"));
        }
        return new Response(body).text();
      })
      .then(function (text) {
        JSON.parse(text); /* a file that is not JSON is an error, not a download */
        return text;
      });
  }

  Array.prototype.forEach.call(doc.querySelectorAll("a[data-gzip-json]"), function (link) {
    if (typeof DecompressionStream !== "function") {
      return;
    }
    link.addEventListener("click", function (ev) {
      ev.preventDefault();
      var name = (link.getAttribute("href").split("/").pop() || "data.json.gz").replace(/\.gz$/, "");
      readGzipJson(link.href)
        .then(function (text) {
          save(name, "application/json", text);
        })
        .catch(function () {
          window.location.href = link.href; /* the compressed file, as stored */
        });
    });
  });

  window.fmbenchDownloads = { save: save, button: button, tableCsv: tableCsv, readGzipJson: readGzipJson };
})();
