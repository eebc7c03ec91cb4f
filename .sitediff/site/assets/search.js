/*
 * fmbench: the search page (templates/search.html).
 *
 * Reads the query from the URL (?q=...), fetches the index written at build
 * time (the form's data-search-index, data/search.json) and lists the entries
 * whose words hold every word of the query (case-insensitive, in any order),
 * each as a link to its page. Typing updates the list and keeps the query in
 * the URL with history.replaceState, so a search can be linked and reloaded;
 * submitting the form loads search/?q=... the same way in both the static
 * site and serve.
 *
 * No dependencies. Never uses innerHTML: every text from the index is set
 * with textContent.
 */
(function () {
  "use strict";

  var doc = document;
  var form = doc.querySelector("form[data-search-index]");
  if (!form) {
    return;
  }
  var input = form.querySelector("input[name=q]");
  var list = doc.getElementById("search-results");
  var status = doc.getElementById("search-status");
  var LIMIT = 100;
  var entries = null;

  function queryFromUrl() {
    var params = new URLSearchParams(window.location.search);
    return (params.get("q") || "").trim();
  }

  function words(text) {
    return text.toLowerCase().split(/\s+/).filter(function (w) {
      return w.length > 0;
    });
  }

  function matches(query) {
    var wanted = words(query);
    if (wanted.length === 0) {
      return [];
    }
    return entries.filter(function (e) {
      var hay = e.haystack;
      return wanted.every(function (w) {
        return hay.indexOf(w) !== -1;
      });
    });
  }

  function item(e) {
    var li = doc.createElement("li");
    li.className = "search-result search-" + e.kind;
    var kind = doc.createElement("span");
    kind.className = "badge badge-neutral";
    kind.textContent = e.label;
    var a = doc.createElement("a");
    a.href = e.url;
    a.textContent = e.title;
    var detail = doc.createElement("span");
    detail.className = "muted search-detail";
    detail.textContent = e.detail;
    li.appendChild(kind);
    li.appendChild(doc.createTextNode(" "));
    li.appendChild(a);
    li.appendChild(doc.createElement("br"));
    li.appendChild(detail);
    return li;
  }

  function show(query) {
    while (list.firstChild) {
      list.removeChild(list.firstChild);
    }
    if (!query) {
      status.textContent = "Type a run id, a device, an OS build or version, or a scenario.";
      return;
    }
    var found = matches(query);
    found.slice(0, LIMIT).forEach(function (e) {
      list.appendChild(item(e));
    });
    var n = found.length;
    status.textContent =
      n === 0
        ? "Nothing matches \u201c" + query + "\u201d."
        : n + (n === 1 ? " result" : " results") + " for \u201c" + query + "\u201d" +
          (n > LIMIT ? " (the first " + LIMIT + " shown; add a word to narrow it)." : ".");
  }

  function keepInUrl(query) {
    var url = new URL(window.location.href);
    if (query) {
      url.searchParams.set("q", query);
    } else {
      url.searchParams.delete("q");
    }
    window.history.replaceState(null, "", url.toString());
  }

  var initial = queryFromUrl();
  input.value = initial;
  status.textContent = "Loading the search index\u2026";

  fetch(form.getAttribute("data-search-index"), { credentials: "same-origin" })
    .then(function (response) {
      if (!response.ok) {
        throw new Error("HTTP " + response.status);
      }
      return response.json();
    })
    .then(function (doc_) {
      entries = (doc_.entries || []).map(function (e) {
        e.haystack = (e.title + " " + e.detail + " " + e.terms).toLowerCase();
        return e;
      });
      show(input.value.trim());
      input.addEventListener("input", function () {
        var query = input.value.trim();
        keepInUrl(query);
        show(query);
      });
    })
    .catch(function () {
      status.textContent = "The search index could not be loaded; every run is listed on the runs page.";
    });
})();
