/*
 * fmbench: the compare index's picker (device, configuration, baseline, candidate).
 *
 * Reads the choices the build wrote into the page (<script type="application/json">
 * named by data-compare-picker), fills the four selects, and offers a link to the
 * comparison page of the chosen pair. Works on the static site and in serve alike:
 * it needs no server, only the page. The choice is kept in the URL's fragment
 * (#device=…&config=…&baseline=…&candidate=…) with history.replaceState, so a
 * reload or a shared link shows the same choice. The baseline is always the
 * earlier build (by first appearance); a configuration measured once says so.
 * The page publishes every pair (device.pairs); the link goes to the published one.
 *
 * No dependencies. Never uses innerHTML.
 */
(function () {
  "use strict";

  var section = document.querySelector("[data-compare-picker]");
  if (!section) {
    return;
  }
  var source = document.getElementById(section.getAttribute("data-compare-picker"));
  var data;
  try {
    data = JSON.parse(source.textContent);
  } catch (e) {
    return;
  }
  var selects = {
    device: document.getElementById("pick-device"),
    config: document.getElementById("pick-config"),
    baseline: document.getElementById("pick-baseline"),
    candidate: document.getElementById("pick-candidate")
  };
  var result = document.getElementById("pick-result");

  function fill(select, options, wanted) {
    while (select.firstChild) {
      select.removeChild(select.firstChild);
    }
    options.forEach(function (o) {
      var option = document.createElement("option");
      option.value = o.value;
      option.textContent = o.text;
      select.appendChild(option);
    });
    var values = options.map(function (o) { return o.value; });
    if (wanted !== undefined && values.indexOf(wanted) >= 0) {
      select.value = wanted;
    }
    select.disabled = options.length === 0;
  }

  function readHash() {
    var out = {};
    var hash = window.location.hash.replace(/^#/, "");
    if (!hash) {
      return out;
    }
    hash.split("&").forEach(function (part) {
      var i = part.indexOf("=");
      if (i > 0) {
        try {
          out[decodeURIComponent(part.slice(0, i))] = decodeURIComponent(part.slice(i + 1));
        } catch (e) { /* a malformed fragment is ignored */ }
      }
    });
    return out;
  }

  function writeHash() {
    var parts = ["device", "config", "baseline", "candidate"].map(function (k) {
      return encodeURIComponent(k) + "=" + encodeURIComponent(selects[k].value || "");
    });
    var url = window.location.pathname + window.location.search + "#" + parts.join("&");
    window.history.replaceState(null, "", url);
  }

  function find(list, key, value) {
    for (var i = 0; i < list.length; i++) {
      if (list[i][key] === value) {
        return list[i];
      }
    }
    return list[0];
  }

  function render(wanted) {
    wanted = wanted || {};
    fill(selects.device, data.devices.map(function (d) {
      return { value: d.key, text: d.name + " (" + d.key + ")" };
    }), wanted.device);
    var device = find(data.devices, "key", selects.device.value);
    if (!device) {
      result.textContent = "No device has a run that is evidence yet.";
      return;
    }
    fill(selects.config, device.configs.map(function (c) {
      return { value: c.label, text: c.label + " (" + c.builds.length + (c.builds.length === 1 ? " build)" : " builds)") };
    }), wanted.config);
    var config = find(device.configs, "label", selects.config.value);
    var builds = config ? config.builds : [];
    var baseOptions = builds.slice(0, Math.max(builds.length - 1, 1)).map(function (b) {
      return { value: b.build, text: b.build + " (OS " + b.generation + ")" };
    });
    fill(selects.baseline, baseOptions, wanted.baseline);
    var start = builds.map(function (b) { return b.build; }).indexOf(selects.baseline.value);
    var later = builds.slice(start + 1);
    fill(selects.candidate, later.map(function (b) {
      return { value: b.build, text: b.build + " (OS " + b.generation + ")" };
    }), wanted.candidate !== undefined ? wanted.candidate : (later.length ? later[later.length - 1].build : undefined));
    while (result.firstChild) {
      result.removeChild(result.firstChild);
    }
    if (later.length === 0) {
      result.textContent = "This configuration was measured on one build only (" + (builds[0] ? builds[0].build : "none") +
        "): there is nothing to compare it with yet.";
    } else {
      var a = builds[start];
      var b = find(later, "build", selects.candidate.value);
      var link = document.createElement("a");
      link.id = "pick-open";
      var pair = a.slug + ".." + b.slug;
      if (device.pairs.indexOf(pair) < 0) {
        pair = b.slug + ".." + a.slug; /* a configuration's own build order may differ from the device's */
      }
      link.href = data.base + device.slug + "/" + pair + "/";
      link.textContent = "Open the comparison " + a.build + " → " + b.build + " on " + device.name;
      result.appendChild(link);
      if (a.generation !== b.generation) {
        result.appendChild(document.createTextNode(" (OS " + a.generation + " → OS " + b.generation +
          ": strict, on the workloads both can run)"));
      }
    }
  }

  function current() {
    return {
      device: selects.device.value,
      config: selects.config.value,
      baseline: selects.baseline.value,
      candidate: selects.candidate.value
    };
  }

  ["device", "config", "baseline", "candidate"].forEach(function (key, i, keys) {
    selects[key].addEventListener("change", function () {
      var wanted = current();
      keys.slice(i + 1).forEach(function (later) { delete wanted[later]; });
      render(wanted);
      writeHash();
    });
  });

  render(readHash());
  if (window.location.hash) {
    writeHash();
  }
  section.classList.add("picker-ready");
})();
