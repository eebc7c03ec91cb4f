// Prints the notices of every npm package esbuild put into the bundle besides plotly.js itself (run by build.sh
// after bundle.mjs, in its temporary folder): each package's name, version and licence, then its licence file.
// A package that ships no licence file is given the MIT text with the author its package.json names, as its
// "license": "MIT" grants. build.sh appends the output to site/assets/plotly.LICENSE.txt.
import fs from 'node:fs';
import path from 'node:path';

const MIT = `Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in
all copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN
THE SOFTWARE.`;

const meta = JSON.parse(fs.readFileSync(process.argv[2] || 'meta.json', 'utf8'));
const packages = new Set();
for (const input of Object.keys(meta.inputs)) {
  const match = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
  if (match && match[1] !== 'plotly.js') packages.add(match[1]);
}

const out = ['', '', 'Libraries bundled inside this build of plotly.js (from esbuild\'s list of its inputs), each with its notice:'];
for (const name of [...packages].sort()) {
  const folder = path.join('node_modules', name);
  const pkg = JSON.parse(fs.readFileSync(path.join(folder, 'package.json'), 'utf8'));
  const file = fs.readdirSync(folder).find((f) => /^(licen[cs]e|copying)(\.(md|txt))?$/i.test(f));
  const author = typeof pkg.author === 'object' ? pkg.author.name : String(pkg.author || '').replace(/\s*<.*$/, '');
  out.push('', '-'.repeat(78), `${name} ${pkg.version} (${pkg.license})`, '');
  if (file) {
    out.push(fs.readFileSync(path.join(folder, file), 'utf8').trim());
  } else if (pkg.license === 'MIT' && author) {
    out.push('(no licence file in the package; its package.json says "license": "MIT")', '', 'MIT License', '',
      `Copyright (c) ${author}`, '', MIT);
  } else {
    throw new Error(`${name}: no licence file and no MIT author to write one from`);
  }
}
process.stdout.write(out.join('\n') + '\n');
