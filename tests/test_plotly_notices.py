"""The chart library ships with its licence and, beside it, the notice of every library bundled inside it."""

from __future__ import annotations

import re

from testdata import REPO

LICENSE = REPO / "site" / "assets" / "plotly.LICENSE.txt"
BUNDLE = REPO / "site" / "assets" / "plotly.min.js"

# What esbuild's list of inputs named when the bundle was built (tools/plotly/notices.mjs): every npm package in
# site/assets/plotly.min.js besides plotly.js itself.
BUNDLED = (
    "@plotly/d3", "base64-arraybuffer", "culori", "d3-format", "d3-time", "d3-time-format", "events",
    "fast-isnumeric", "gl-mat4", "has-hover", "has-passive-events", "is-browser", "is-mobile", "is-string-blank",
    "maplibre-gl", "mouse-event-offset", "native-promise-only", "parse-svg-path", "point-in-polygon",
)


def test_the_plotly_licence_carries_the_notice_of_every_library_bundled_inside_it() -> None:
    text = LICENSE.read_text(encoding="utf-8")
    assert "Copyright (c) 2016-2024 Plotly Technologies Inc." in text
    header = r"^-{78}\n(\S+) (\S+) \(([^)]+)\)\n"
    named = re.findall(header, text, flags=re.MULTILINE)
    assert [name for name, _, _ in named] == list(BUNDLED)
    sections = re.split(header, text, flags=re.MULTILINE)[4::4]
    for (name, _version, licence), section in zip(named, sections, strict=True):
        assert "Copyright" in section or "copyright" in section, name
        if licence == "MIT":
            assert "Permission is hereby granted, free of charge" in section, name
        if licence.startswith("BSD"):
            assert "Redistribution and use in source and binary forms" in section, name


def test_the_bundle_names_its_licence_file() -> None:
    head = BUNDLE.read_bytes()[:400].decode("utf-8")
    assert "MIT license (plotly.LICENSE.txt)" in head
