/*
 * fmbench: tables a reader can sort, with the mouse and the keyboard.
 *
 * Every table of the site (table.data: the data_table macro's tables and the
 * trials pages' metrics table) is complete without this script. With it, each
 * header of the table's last header row gets a real <button> (but a header
 * that holds a link, such as a coverage grid's OS builds): activating it
 * (click, Enter or Space) sorts the rows by that column, ascending first, then
 * descending, and so on. The sorted header carries aria-sort ("ascending" or
 * "descending"); no other header does. The arrow beside the label is drawn by
 * the style sheet from aria-sort, so a header's text (what a screen reader
 * says and what the CSV download holds) stays its label.
 *
 * A cell's sort key: its data-sort attribute when the view gave one (the raw
 * value behind the shown text), else its text, read as a number when it starts
 * with one and holds nothing else but its unit (thousands separators and a
 * Unicode minus are understood; a date or a build stays a text, compared
 * with its digits as numbers). Numbers come first, then words, and a cell that was "not
 * recorded" (class nr, or an empty data-sort) always sorts last, whichever the
 * direction. Rows with equal keys keep their order. Rows a filter hid stay
 * hidden: sorting only moves them.
 *
 * Tables added later (a run page's trials, loaded in place) are enhanced when
 * they arrive. No dependencies. Never uses innerHTML.
 */
(function () {
  "use strict";

  var doc = document;
  /* a number alone, or with its unit after it ("0.417 s", "75.0%", "12 MiB", "+5.2%"); a date is a text */
  var NUMBER = /^([-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)\s?(?:%|[A-Za-z\/]+(?:\/[A-Za-z]+)?)?$/;

  function toArray(list) {
    return Array.prototype.slice.call(list);
  }

  /* The sort key of one cell: [group, value], group 0 a number, 1 a text, 2 not recorded. */
  function keyOf(cell) {
    if (!cell) {
      return [2, 0];
    }
    var given = cell.getAttribute("data-sort");
    if (given !== null) {
      if (given === "") {
        return [2, 0];
      }
      var n = Number(given);
      return isNaN(n) ? [1, given] : [0, n];
    }
    var text = (cell.textContent || "").replace(/\s+/g, " ").trim();
    if (cell.classList.contains("nr") || text === "" || (cell.querySelector(".nr") && text === "not recorded")) {
      return [2, 0];
    }
    var plain = text.replace(/\u2212/g, "-").replace(/,(?=\d{3}\b)/g, "");
    var found = NUMBER.exec(plain);
    if (found) {
      return [0, parseFloat(found[1])];
    }
    return [1, text];
  }

  var collator = typeof Intl !== "undefined" && Intl.Collator ? new Intl.Collator(undefined, { numeric: true, sensitivity: "base" }) : null;

  function compareValues(a, b) {
    if (typeof a === "number" && typeof b === "number") {
      return a - b;
    }
    a = String(a);
    b = String(b);
    return collator ? collator.compare(a, b) : a < b ? -1 : a > b ? 1 : 0;
  }

  /* The column index of each cell of a row, counting the colspans before it. */
  function cellAt(row, column) {
    var at = 0;
    for (var i = 0; i < row.cells.length; i += 1) {
      var cell = row.cells[i];
      if (at === column) {
        return cell;
      }
      at += cell.colSpan || 1;
      if (at > column) {
        return null;
      }
    }
    return null;
  }

  function sortBy(table, header, column) {
    var descending = header.getAttribute("aria-sort") === "ascending";
    toArray(table.querySelectorAll("thead th[aria-sort]")).forEach(function (th) {
      th.removeAttribute("aria-sort");
    });
    header.setAttribute("aria-sort", descending ? "descending" : "ascending");
    toArray(table.tBodies).forEach(function (body) {
      var rows = toArray(body.rows).map(function (row, index) {
        return { row: row, key: keyOf(cellAt(row, column)), index: index };
      });
      rows.sort(function (x, y) {
        if (x.key[0] !== y.key[0]) {
          return x.key[0] - y.key[0];
        }
        var c = x.key[0] === 2 ? 0 : compareValues(x.key[1], y.key[1]);
        if (descending) {
          c = -c;
        }
        return c || x.index - y.index;
      });
      rows.forEach(function (r) {
        body.appendChild(r.row);
      });
    });
  }

  function enhance(table) {
    if (table.hasAttribute("data-sortable") || !table.tHead || !table.tHead.rows.length) {
      return;
    }
    var rows = toArray(table.tBodies).reduce(function (all, body) {
      return all.concat(toArray(body.rows));
    }, []);
    if (rows.length < 2 || rows.some(function (r) { return r.classList.contains("empty-row"); })) {
      return;
    }
    table.setAttribute("data-sortable", "");
    var head = table.tHead.rows[table.tHead.rows.length - 1];
    var column = 0;
    toArray(head.cells).forEach(function (th) {
      var at = column;
      column += th.colSpan || 1;
      /* a header holding a link or a control keeps it: a button may hold no interactive content */
      if (th.tagName !== "TH" || th.colSpan > 1 || th.querySelector("button, a[href], input, select, textarea, [tabindex]")) {
        return;
      }
      var button = doc.createElement("button");
      button.type = "button";
      button.className = "sort-button";
      while (th.firstChild) {
        button.appendChild(th.firstChild);
      }
      th.appendChild(button);
      button.addEventListener("click", function () {
        sortBy(table, th, at);
      });
    });
  }

  function enhanceAll(root) {
    if (root.matches && root.matches("table.data")) {
      enhance(root);
    }
    if (root.querySelectorAll) {
      toArray(root.querySelectorAll("table.data")).forEach(enhance);
    }
  }

  function init() {
    enhanceAll(doc);
    if (typeof MutationObserver !== "undefined") {
      new MutationObserver(function (changes) {
        changes.forEach(function (change) {
          toArray(change.addedNodes).forEach(function (node) {
            if (node.nodeType === 1) {
              enhanceAll(node);
            }
          });
        });
      }).observe(doc.body, { childList: true, subtree: true });
    }
  }

  window.fmbenchTables = { enhance: enhance, keyOf: keyOf };

  if (doc.readyState === "loading") {
    doc.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
