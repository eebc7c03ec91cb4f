#!/bin/sh
# Rebuilds site/assets/plotly.min.js from tools/plotly/entry.js: run from the repository's root with
# PLOTLY_VERSION (default 4.1.1). Works in a temporary folder (npm installs plotly.js's sources, esbuild and
# terser there), never in the repository; then update the version in site/assets/plotly.LICENSE.txt and replace
# its list of bundled libraries (from "Libraries bundled inside" on) with notices.txt, which it leaves in the
# repository's root.
set -eu
version="${PLOTLY_VERSION:-4.1.1}"
root="$(pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp tools/plotly/entry.js tools/plotly/bundle.mjs tools/plotly/culori.mjs tools/plotly/notices.mjs "$work/"
cd "$work"
npm init -y >/dev/null
npm i -E "plotly.js@$version" esbuild@0.28 terser@5 --no-audit --no-fund --ignore-scripts >/dev/null
node bundle.mjs
node notices.mjs meta.json > "$root/notices.txt"
npx terser bundle.js --compress passes=2 --mangle --output bundle.min.js
{
  printf '/**\n* plotly.js (fmbench scatter build - minified) v%s\n' "$version"
  printf '* Built from tools/plotly/entry.js; Copyright 2012-2026, Plotly, Inc.; MIT license (plotly.LICENSE.txt)\n*/\n'
  cat bundle.min.js
} > "$root/site/assets/plotly.min.js"
echo "site/assets/plotly.min.js: $(wc -c < "$root/site/assets/plotly.min.js") bytes, $(gzip -9c "$root/site/assets/plotly.min.js" | wc -c) gzipped"
