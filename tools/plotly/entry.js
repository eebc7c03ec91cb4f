'use strict';
/*
 * fmbench's build of plotly.js: its core with the one trace type the site draws (scatter: points, lines and
 * error bars) and the components its charts use (shapes for the zero line, error bars, legend, hover), with
 * those the core reads on every plot (annotations, selections, colour bars, the mode bar's settings). The
 * other components plotly.js registers by default (sliders, menus, range sliders and selectors, images,
 * grids, 3D annotations) are left out: Plotly treats a component it was not given as absent.
 * tools/plotly/build.sh turns this file into site/assets/plotly.min.js.
 */
var plotApi = require('plotly.js/src/plot_api');
var Registry = require('plotly.js/src/registry');
var Plots = require('plotly.js/src/plots/plots');

require('native-promise-only');
require('plotly.js/build/plotcss');

exports.version = require('plotly.js/src/version').version;
exports.register = Registry.register;

Object.keys(plotApi).forEach(function(name) {
    if(name.charAt(0) !== '_') exports[name] = plotApi[name];
    Registry.register({moduleType: 'apiMethod', name: name, fn: plotApi[name]});
});

Registry.register(require('plotly.js/src/traces/scatter'));
Registry.register([
    require('plotly.js/src/components/annotations'),
    require('plotly.js/src/components/selections'),
    require('plotly.js/src/components/shapes'),
    require('plotly.js/src/components/errorbars'),
    require('plotly.js/src/components/colorscale'),
    require('plotly.js/src/components/colorbar'),
    require('plotly.js/src/components/legend'), // after shapes: its defaults read them
    require('plotly.js/src/components/fx'), // after legend: unified hover reads it
    require('plotly.js/src/components/modebar') // its settings only: bundle.mjs leaves out the bar itself
]);
Registry.register([require('plotly.js/src/locale-en'), require('plotly.js/src/locale-en-us')]);

exports.Plots = {resize: Plots.resize};
