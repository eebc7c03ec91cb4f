// Bundles tools/plotly/entry.js with esbuild (run by build.sh, in its temporary folder). A few modules of
// plotly.js are replaced by stubs the site's charts never reach: the mode bar's manager and its icons (the
// charts have no mode bar: fmbench's own buttons download a chart's data and PNG) and the polygon library
// of the lasso and box selection (the charts' drag mode is off); culori, the colour library, by
// culori.mjs (the sRGB and HSL colour spaces alone).
import * as esbuild from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';

const stubs = {
  modebar: 'module.exports = function noModeBar() {};',
  icons: 'module.exports = {};',
  polybool: 'module.exports = {};'
};

const fmbenchStubs = {
  name: 'fmbench-stubs',
  setup(build) {
    build.onResolve({ filter: /^\.\/manage$/ }, (args) =>
      args.importer.replace(/\\/g, '/').endsWith('components/modebar/index.js')
        ? { path: 'modebar', namespace: 'fmbench-stub' }
        : undefined
    );
    build.onResolve({ filter: /fonts\/ploticon$/ }, () => ({ path: 'icons', namespace: 'fmbench-stub' }));
    build.onResolve({ filter: /^polybooljs$/ }, () => ({ path: 'polybool', namespace: 'fmbench-stub' }));
    build.onResolve({ filter: /^culori$/ }, () => ({ path: path.resolve('culori.mjs') }));
    build.onLoad({ filter: /.*/, namespace: 'fmbench-stub' }, (args) => ({ contents: stubs[args.path], loader: 'js' }));
  }
};

const result = await esbuild.build({
  entryPoints: ['entry.js'],
  bundle: true,
  format: 'iife',
  globalName: 'Plotly',
  target: 'es2016',
  define: { global: 'window', 'define.amd': 'false' },
  plugins: [fmbenchStubs],
  outfile: 'bundle.js',
  logLevel: 'warning',
  metafile: true  // its list of inputs: notices.mjs names every package bundled
});
fs.writeFileSync('meta.json', JSON.stringify(result.metafile));
